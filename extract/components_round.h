// The third round of the path bounds (extract/problem.cpp, path_bounds):
// several classes of one component, or of a convex set of them, paid
// together. Internal to extract/ (docs/optimize.md, "Path bounds").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "extract/fixpoint.h"
#include "extract/problem.h"

namespace refinery::extract::detail {

// Several classes of one strongly connected component S, which every
// bound above sees as one value (a search stops where one kid reaches
// another; a path pays one class of S): the Q, K and V projections of an
// attention, their merged forms and layouts. Where a candidate's kids need
// several classes of S, its computation pays, in disjoint parts, its own
// cost; the cheapest set E of S's entering candidates (no kid in S) from
// which all those kids can be derived (a Horn fixpoint over the classes
// between them and S, S's other candidates and the classes not reaching S
// free: the entering candidates an answer chooses are such a set); and the
// heaviest path outside S from any kid, S's classes at the least, over
// S's entering candidates, of their heaviest kid's bound (an answer enters
// S somewhere). Components are settled sinks first, so the paths outside S
// count what the components below gained (each attention of a stack its
// own). `floor`: each candidate's bound so far (at links.first[c] + i);
// each keeps the larger. Only
// components whose cheapest entering candidate alone cannot derive all of
// their classes are asked; the work is counted, and past `budget` or once
// `out_of_time` says so the demands stop (the paths go on).
//
// The same holds for any set U of classes that is convex (no class outside
// U both below a class of U and above one: then an entering candidate's
// kids do not reach U, and the parts stay disjoint). Where components are
// each other's alternatives, or a class above S can be computed without it,
// S alone asks nothing, and U is S grown by them (below). A candidate asks
// U once the kids of U's entering candidates are settled (U's exit is
// known then).
struct ComponentsRound {
  std::vector<double> below;
  std::vector<std::uint8_t> asked;  // per class: its component was asked
};

ComponentsRound components_round(const std::vector<std::vector<Candidate>>& classes, const Links& links,
                                 const std::vector<double>& floor, std::size_t budget,
                                 const std::function<bool()>& out_of_time);

}  // namespace refinery::extract::detail

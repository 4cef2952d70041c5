// Optimal extraction as a 0-1 integer program, solved with CBC (COIN-OR).
// The problem is reduced first (reduce.h); on what is left, one binary per
// candidate and one activity per class; the candidates of a class that need
// a class sum to at most that class's activity; the objective is the DAG
// cost (a class is paid once, however many candidates use it), the same
// cost greedy minimises. Cycles can only run inside a strongly connected
// component of the class graph: acyclicity by entry cuts (every subset of a
// small component up front, the cycles of larger ones added lazily: solve,
// forbid the cycles the answer has, solve again) or by order variables.
// Requirement cuts make every component a class cannot be computed without
// used and entered wherever the class is, entry choices pick one entering
// candidate of each component used and pay its kids whole, and first
// bounds come from the heaviest root-to-leaf path every answer pays
// (problem.h, path_bounds), from the layers' optima (layers_bound: the
// costs split at the classes every answer computes) and from the condensed
// relaxation (reduce.h), solved on its own first.
// Warm-started from the greedy DAG answer, improved by the windows' move
// (improve_by_windows: the ILP of a window of the answer, the rest kept),
// and bounded in CPU time; never returns a cyclic or incomplete solution,
// nor one costlier than greedy's.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extract/problem.h"
#include "extract/reduce.h"

namespace refinery::extract {

enum class Acyclicity {
  CycleCuts,  // entry cuts: small components' up front, then each cycle the answer has, and solve again
  Levels,     // an order variable per class of a cycle: t_c >= t_k + 1 where c's choice needs k
};

// The windows' move (improve_by_windows): the incumbent is kept outside a
// window of the answer and the window's ILP is solved, so that several
// blocks' derivations can change at once.
struct WindowOptions {
  // Share of the time limit (CPU, counted from the call's start; greedy,
  // the reduction and the path bound come out of it) by which the windows
  // stop; 0: none.
  double share = 0.5;
  std::size_t answer_classes = 24;  // classes of the answer a window frees, consecutive in topological order
  std::size_t stride = 12;          // the next window starts this many classes of the answer further up
  // With the classes outside the answer the window's classes reach (not
  // through another class of the answer), at most this many free classes.
  std::size_t max_classes = 400;
  std::size_t passes = 2;       // passes over the answer, while one improves it
  std::size_t max_nodes = 100;  // CBC's branch-and-bound nodes per window (its node limit, "maxNodes")
  double seconds = 1;           // and its CPU seconds, a guard: the node limit is meant to stop it first
};

struct IlpOptions {
  double time_limit_s = 10;  // CPU seconds in CBC (its clock), all rounds together
  Acyclicity acyclicity = Acyclicity::CycleCuts;
  bool reduce = true;  // reduce.h before the solver
  // Rows that make each component every computation of a class needs used
  // and entered wherever that class is (see ilp_model.h, add_requirement_cuts).
  bool requirement_cuts = true;
  // Rows that pick one entering candidate of each component used and
  // require its kids (see ilp_model.h, add_entry_choices).
  bool entry_choices = true;
  // Path bounds (problem.h, path_bounds): every answer pays a root-to-leaf
  // path, each class of it once. A first bound (when it meets the greedy
  // answer no model is built), and the reduction's bound step prices a
  // candidate by the cheapest such path through it. Off: neither (for tests
  // of the solver's part).
  bool path_bound = true;
  // The first bound's searches for what a candidate's other kids pay
  // outside one kid's computation (problem.h, path_bounds): their work, in
  // multiples of the reduced problem's size (0: the heaviest path alone),
  // for each of the two rounds (paths, then sums at each step). At 1000 the
  // budget ran out on 4 of the zoo's e-graphs once each kid in turn was
  // searched from (resnext50/cpu 0 -> 2.4% gap); 3000 was enough for the
  // paths (session 19). The sums need more: at 3000 lora_encoder/tpu keeps
  // its 9.5% gap, at 10000 0.43% (docs/measurements.md, session 20).
  // path_share caps larger problems.
  std::size_t path_work = 10000;
  // ... and their CPU time, as a share of the time limit (counted from the
  // searches' start): on a large problem, or a machine whose CPU clock runs
  // fast under load, the searches stop early rather than take CBC's time.
  // 0.15 since path_work went to 3000: at 0.3 the 12,769-candidate layered
  // problem's searches took all their 1.2 s of its 4 s (0.5 s at 1000), and
  // under load CBC then got no round (Ilp.BuildingTheModelTakesLittleOfTheTimeLimit);
  // on the zoo they took at most 0.62 s, under the 1.5 s of a 10 s limit.
  // 0.25 since the costs' split (problem.h): on bert_encoder's gpu and tpu
  // e-graphs its second run of the searches ends at 1.2-1.5 s, and at 0.15
  // it was cut before it counted (docs/measurements.md, session 23).
  double path_share = 0.25;
  // Share of the time limit (counted from the call's start: greedy and the
  // reduction come out of it) for a first bound from the condensed
  // relaxation (reduce.h, condensed); 0: none. It stops early when it
  // proves its optimum, and the rest goes to the main model. On the zoo the
  // best bound was the condensed one on every e-graph not closed (the main
  // model's CBC bound stayed below it), so most of the time goes there
  // (docs/measurements.md, "ILP extraction: the condensed bound's share").
  double condensed_share = 0.8;
  // Share of the time limit the layers' bound (layers_bound) may take,
  // counted from its own start (after the windows, which may have taken
  // theirs; before the condensed relaxation), when the path bound leaves a
  // gap. 0: none.
  double layers_share = 0.2;
  // A diagnostic: solve only the linear relaxation of the first model (no
  // integrality, no CBC cuts); `bound` is then its value and the answer is
  // the greedy one. Shows how much of a gap is the formulation's.
  bool relaxation_only = false;
  // CBC's own parameters, by the names of its command line ("heuristics",
  // "cuts", "maxNodes", "log", ...), set in order after ours; for
  // experiments (bench_extract run --cbc NAME=VALUE) and tests. CBC's
  // primal heuristics are off: CBC starts from the greedy answer, and on the
  // zoo's 66 e-graphs they found nothing cheaper while taking time from the
  // bound (docs/measurements.md, "ILP extraction: CBC's start").
  std::vector<std::pair<std::string, std::string>> cbc_parameters = {{"heuristics", "off"}};
  // CycleCuts: components of the class graph up to this many classes get
  // the entry cuts of all their subsets up front.
  std::size_t max_enumerated_component = 8;
  // Stop when the answer is proved within this fraction of the optimum.
  double relative_gap = 1e-6;
  // Problems with more candidates than this (after reduction) are not given
  // to CBC (the greedy answer is returned, status TooLarge).
  std::size_t max_candidates = 200'000;
  WindowOptions windows;
};

enum class IlpStatus {
  Optimal,     // the answer is proved optimal (within relative_gap)
  Feasible,    // the best answer found, with a gap to the best bound
  GreedyKept,  // the solver gave nothing usable in time: the greedy answer
  TooLarge,    // not given to the solver: the greedy answer
};
std::string_view to_string(IlpStatus status);  // "optimal", "feasible", "greedy kept", "too large"

struct IlpResult {
  Solution solution;
  IlpStatus status = IlpStatus::GreedyKept;
  std::string detail;          // why greedy was kept, when it was
  double cost = 0;             // dag_cost of solution
  double greedy_cost = 0;      // the greedy DAG answer's cost
  double bound = 0;            // a lower bound on the optimum (same unit)
  double condensed_bound = 0;  // the condensed relaxation's part of it (0: not run)
  double path_bound = 0;       // the path bound's part of it (problem.h, path_bounds)
  double layers_bound = 0;     // the layers' bound's part of it (layers_bound; 0: not run)
  double gap() const { return cost > 0 ? std::max(0.0, (cost - bound) / cost) : 0.0; }
  std::vector<ReductionStep> reduction;  // sizes: "input", each step, and what CBC got last
  std::size_t rounds = 0;                // solver calls (cycle cuts: one per round)
  std::size_t cuts = 0;                  // cycle cuts added
  double seconds = 0;                    // wall clock
  double cpu_seconds = 0;                // the process's CPU time (CBC's own clock)
};

IlpResult extract_ilp(const Problem& p, const IlpOptions& options = {});
// The same from a known answer `start` of p (valid, or ignored): the
// incumbent when it is cheaper than greedy's (not counted as the solver's
// improvement), CBC's start, and the reduction's upper bound.
IlpResult extract_ilp(const Problem& p, const IlpOptions& options, const Solution& start);

// Large-neighbourhood search with the ILP as the move. The classes of the
// answer in topological order (kids first); a window frees
// `answer_classes` consecutive ones and the classes outside the answer they
// reach (not through another class of the answer), and keeps every other
// class of the answer at its choice; the window's problem (those classes,
// the rest of the answer with one candidate each) goes to extract_ilp with
// the answer as its start (no windows inside, no condensed bound, CBC's
// node and time limits of `options.windows`). A window's answer is kept
// when it is valid (checked acyclic) and the whole DAG cost falls. The
// windows start `stride` classes of the answer apart; with `below` (a lower
// bound per class of q: path_bounds) the ones where the answer pays most
// beyond it come first, else the bottom one. Passes repeat while one
// improves. Stops before a window once `out_of_time` says so.
// Deterministic but for the time limits (CBC's guard per window, and
// `out_of_time`).
Solution improve_by_windows(const Problem& q, Solution incumbent, const IlpOptions& options,
                            const std::function<bool()>& out_of_time, const std::vector<double>& below = {});

// The layers' bound: a lower bound on q's optimum from its layers. Every
// answer computes each class the roots require (problem.h, requirements,
// labelled by class). Those that are bottlenecks among them (each other
// required class requires it or is required by it: a block's output, not
// one of its branches), fewest requirements first, split the classes into
// layers: a chain class's layer is what it reaches and the ones before do
// not, and the roots' layer is what none reaches. An answer pays for the
// classes of each layer at least the optimum of that layer's problem (its
// classes, the classes of earlier layers its candidates need as free
// leaves, the chain class as its root): the answer's computation of the
// chain class, cut there, is an answer of it. So the layers' optima, each
// bounded by extract_ilp (no windows, no layers inside, the time left
// shared evenly among the layers left), sum to a bound. Where the path
// bound takes one heaviest path through the whole network, each layer here
// pays its own cheapest whole derivation (a block's two branches and what
// they share, each once). `seconds_left`: CPU seconds left to it; a layer
// not reached adds 0.
struct LayersBound {
  double bound = 0;                     // the sum (0 with fewer than two layers that cost anything)
  std::size_t layers = 0;               // layers with a cost
  std::size_t solved = 0, optimal = 0;  // of them, given to extract_ilp, and proved optimal there
};
LayersBound layers_bound(const Problem& q, const IlpOptions& options, const std::function<double()>& seconds_left);

}  // namespace refinery::extract

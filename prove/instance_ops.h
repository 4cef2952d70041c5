// Internal to prove/: what each op's operands may be in an instance draw.
// Given the operands drawn so far, a shape for the next one, a value for an
// unbound attribute or a pattern's attribute rest, and the contents of an
// integer input (reshape targets, split sizes, axes). instance.cpp walks the
// rule and checks the draw; this proposes, op by op.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "prove/instance_shapes.h"
#include "rules/rule_ast.h"

namespace refinery::prove {

// A value of the draw: its type, its contents where it is an integer input,
// its constant where it has one.
struct Drawn {
  ir::TensorType type;
  std::optional<std::vector<int64_t>> ints;
  const ir::Tensor* constant = nullptr;
};

// The random source of one draw and its small sizes: dims 1..3 (and 0 in
// the draws with empty dims), ranks 1..4.
class Dice {
 public:
  Dice(uint64_t seed, bool empty) : rng_(seed), empty_(empty) {}
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int64_t dim() {
    if (empty_ && coin(0.3)) return 0;
    static const int64_t dims[] = {1, 2, 2, 2, 3, 3, 3};
    return dims[pick(7)];
  }
  Sizes random_shape(int rank = -1) {
    if (rank < 0) {
      static const int ranks[] = {1, 1, 2, 2, 2, 2, 3, 3, 3, 4, 4};
      rank = ranks[pick(11)];
    }
    Sizes s;
    for (int i = 0; i < rank; ++i) s.push_back(dim());
    return s;
  }
  std::mt19937_64& rng() { return rng_; }
  bool empty() const { return empty_; }

 private:
  std::mt19937_64 rng_;
  bool empty_;
};

// What a rule's left side asks of its values beyond each op's shape rule,
// read off the pattern before the draw (so that a draw fits more often than
// by chance): the rank of an op's result that a transpose with a literal
// perm reads, and the dim of a variable that a split along a negative axis
// into n parts reads (a multiple of n, so that equal parts exist), or that
// three slices with distinct starts read (a multiple of 3: the thirds).
struct Demands {
  std::map<const rules::Pat*, int64_t> rank;
  std::map<std::string, std::pair<int64_t, int64_t>> multiple;  // variable -> (dim counted from the end, n)
  size_t slices = 0;  // the slices with distinct starts variables (three: a packed projection cut in thirds)
};
Demands read_demands(const rules::RuleBody& body);

// The per-op proposals of one draw. `attrs` (the rule's attribute variables
// bound so far) and `rests` (its attribute rests) belong to the draw.
class OpProposals {
 public:
  OpProposals(Dice& dice, const Demands& demands, std::map<std::string, std::optional<rules::Literal>>& attrs,
              std::map<std::string, ir::Attributes>& rests)
      : dice_(dice), demands_(demands), attrs_(attrs), rests_(rests) {}

  // A shape for an unassigned operand `i` of `p`, given the others.
  Sizes propose(const rules::Pat& p, size_t i, const std::vector<std::optional<Drawn>>& kids);
  // A value for attribute `name` of `op` at input rank `rank`; nullopt leaves it absent.
  std::optional<rules::Literal> gen_attr(ir::Op op, const std::string& name, int64_t rank);
  // The attributes of `op` that a pattern's rest (`:* ?k`) leaves, given those it names.
  ir::Attributes gen_rest(ir::Op op, int64_t rank, const std::vector<rules::AttrPat>& named);
  // The contents of integer input `i` of `p`, given its other operands and attributes.
  std::optional<std::vector<int64_t>> gen_ints(const rules::Pat& p, size_t i,
                                               const std::vector<std::optional<Drawn>>& kids,
                                               const ir::Attributes& attrs);

 private:
  // A reshape's target: `x` with one axis split in two, two adjacent axes
  // merged, a pair this draw split merged again (nullopt: none).
  Sizes split_axis(const Sizes& x);
  Sizes merge_axes(const Sizes& x);
  // `x` with its last axis split in heads x head dim (as split_axis draws it)
  // and the heads merged into the axis before: [.., B, H] -> [.., B h, d].
  Sizes split_merge(const Sizes& x);
  std::optional<Sizes> rejoin(const Sizes& x) const;
  // `x` with a leading size this draw merged from two split again (the rows
  // of a product put back): [a b, M] -> [a, b, M].
  std::optional<Sizes> unmerge(const Sizes& x) const;

  Dice& dice_;
  const Demands& demands_;
  std::map<std::string, std::optional<rules::Literal>>& attrs_;
  std::map<std::string, ir::Attributes>& rests_;
  std::optional<int64_t> slice_axis_;  // one Slice's bounds, drawn once for its integer inputs
  int64_t slice_start_ = 0, slice_end_ = 1;
  bool slice_thirds_ = false;                  // the draw's slices are the equal thirds of their axis
  std::map<std::string, int64_t> slice_part_;  // in thirds: a slice (by its starts variable) -> its third
  int64_t n_ = 2;  // a Gemm's output columns, drawn with its B for its C
  std::map<int64_t, std::pair<int64_t, int64_t>> splits_;  // a size this draw split in two, and how
  std::map<int64_t, std::pair<int64_t, int64_t>> merges_;  // a size this draw merged from two, and from which
};

}  // namespace refinery::prove

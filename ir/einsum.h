// Einsum equations (ONNX Einsum, docs/ir.md "Einsum"): parsed and bound to
// input shapes in one place, read by the shape rule, the FLOP count
// (ir/work.cpp), the cost models' GEMM view and the interpreter's kernel, so
// that all of them agree on what an equation means.
#pragma once
#include <expected>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/shape.h"

namespace refinery::ir {

// One term of an equation: its letters in order, and where "..." stands.
struct EinsumTerm {
  std::string labels;  // the letters, without the ellipsis
  int ellipsis = -1;   // the index in `labels` before which "..." stands; -1: none

  bool has_ellipsis() const { return ellipsis >= 0; }
  std::string str() const;  // "...ij", "bhqd"
};

struct EinsumEquation {
  std::vector<EinsumTerm> inputs;
  // Always filled: in implicit mode (no "->") the ellipsis if any input has
  // one, then the letters that appear exactly once, in ASCII order (numpy's
  // and ONNX's rule: "bA" means "bA->Ab").
  EinsumTerm output;
  bool implicit = false;

  std::string str() const;  // the explicit form without spaces: "ij,jk->ik"
};

// Parses an equation: letters a-z and A-Z, at most one "..." per term, terms
// separated by ',', an optional "->" and output term; spaces are ignored.
// Checks what the equation alone decides: characters, one "..." per term, an
// output that names each label once and only labels of the inputs.
std::expected<EinsumEquation, std::string> parse_einsum(std::string_view equation);

// An equation bound to input shapes: each label's size, the ellipsis dims
// (the inputs' ellipsis parts broadcast numpy-style) and the output shape.
struct EinsumDims {
  std::map<char, Dim> labels;
  std::vector<Dim> ellipsis;
  Shape output;
  // Labels summed over: those not in the output (a contraction when any).
  std::string summed;
};

// Checks the terms against the inputs' ranks and the sizes of each label:
// within one input (a diagonal) a repeated label's sizes must be equal;
// across inputs they must be equal or 1 (broadcast, as numpy and ATen do).
// Symbolic dims are kept. All shapes must be ranked.
std::expected<EinsumDims, std::string> einsum_dims(const EinsumEquation& eq, std::span<const Shape* const> inputs);

}  // namespace refinery::ir

// Internal to prove/: symbolic semantics of the IR ops for Z3, one function
// per ir::Op in a table keyed like the operator table (ARCHITECTURE.md,
// decision 2) and filled per op family (prove/z3/<family>.cpp, through
// prove/z3/semantics.h). A tensor is its concrete shape and one Z3 term per
// element, over the reals or over IEEE binary32 (the scalars of
// prove/z3/domain.cpp). Transcendental functions (exp, log, tanh, sigmoid,
// erf, ...) are uninterpreted. Over the reals a partial operation (a
// division, sqrt, log) records when it is defined, for the query to assume
// of the left side and prove of the right (docs/rules.md, Verification); in
// binary32 every operation is total (NaN is a value).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <z3++.h>

#include "ir/diag.h"
#include "ir/graph.h"
#include "rules/builtins.h"

namespace refinery::prove {

struct SymTensor {
  std::vector<int64_t> shape;
  std::vector<z3::expr> elems;
  const ir::Tensor* concrete = nullptr;  // a constant's value (integer inputs read it)
};

// One time step of the stateful (spiking) ops, for the induction proofs
// (prove/induction.h): the run's discretisation and reset, dt, and each
// stateful node's state before the step (given, by node name) and after it
// (filled by the step). Components: v, then i for the Cuba neurons.
struct SpikingStep {
  bool exact = false;     // discretisation: forward Euler, or exact decay
  bool subtract = false;  // reset: v := v_reset, or v := v - v_threshold
  z3::expr dt;
  std::map<std::string, std::vector<SymTensor>> before, after;
  std::map<std::string, SymTensor> thresholds;  // of the spiking neurons, as evaluated
  // The length in steps of each delay node, fixed by the prover for a case
  // (prove/induction.cpp): its state is that many registers.
  std::map<std::string, int64_t> delay_steps;
  // What the case assumes of a delay's first element that the prover must
  // show of the others (one length for the population).
  std::vector<z3::expr> same_length;
};

// The number domain: reals, or binary32 with round-to-nearest-even.
class SymDomain {
 public:
  SymDomain(z3::context& ctx, bool fp32);

  z3::context& ctx() const { return ctx_; }
  bool fp32() const { return fp32_; }
  z3::sort sort() const;
  z3::expr num(double v) const;
  z3::expr var(const std::string& name) const;
  // What a rule's value conditions (rules::ValueCond) say of one input
  // element `e`, appended to `out`; `pruned`: the element lies in a row
  // verification takes to be pruned (rules::verification_pruned_element),
  // where the *Pruned conditions hold. Binary32 elements under a condition
  // are finite. The conditions that need more than the element (Step: the
  // run's dt; Uniform: the first element) are the caller's.
  void assume(rules::ValueCond c, const z3::expr& e, bool pruned, std::vector<z3::expr>& out) const;
  // IEEE addition and multiplication are commutative (round(a+b) is
  // round(b+a)); in binary32 the operands go in a canonical order (by AST
  // id) so that goals equal up to commutation are equal terms, which
  // bit-blasting could otherwise not show within its timeout (add-comm,
  // a matmul's transposed form).
  z3::expr add(const z3::expr& a, const z3::expr& b) const { return fp32_ && b.id() < a.id() ? b + a : a + b; }
  // In binary32 (round to nearest even, symmetric) these are bit-exact
  // identities, applied as terms are built: x - y is x + (-y) (IEEE defines
  // it so), (-x) * y is -(x * y) (the sign of a product is the xor of the
  // signs, zeros included), -(-x) is x.
  z3::expr sub(const z3::expr& a, const z3::expr& b) const { return fp32_ ? add(a, neg(b)) : a - b; }
  // Also x * 1 is x and x * -1 is -x exactly (a sign flip, zeros and
  // infinities included), said directly so that no multiplier is bit-blasted.
  z3::expr mul(const z3::expr& a, const z3::expr& b) const {
    if (!fp32_) return a * b;
    if (is_unit(b) == 2) return add(a, a);  // 2x is x + x (one rounding of the same exact value)
    if (is_unit(a) == 2) return add(b, b);
    if (is_unit(b) != 0) return is_unit(b) > 0 ? a : neg(a);
    if (is_unit(a) != 0) return is_unit(a) > 0 ? b : neg(b);
    if (is_neg(a)) return neg(mul(a.arg(0), b));
    if (is_neg(b)) return neg(mul(a, b.arg(0)));
    return b.id() < a.id() ? b * a : a * b;
  }
  // Over the reals a / b is defined where b != 0; `partial` is false where
  // an op's own semantics divides by what cannot be zero (softmax's sum of
  // exponentials, 1 + |x|), and b != 0 is then a fact rather than a
  // condition of definedness.
  z3::expr div(const z3::expr& a, const z3::expr& b, bool partial = true);
  // 1, -1 or 2 when `e` is that binary32 numeral, else 0.
  int is_unit(const z3::expr& e) const;
  z3::expr neg(const z3::expr& a) const { return fp32_ && is_neg(a) ? a.arg(0) : -a; }
  static bool is_neg(const z3::expr& e) { return e.is_app() && e.decl().decl_kind() == Z3_OP_FPA_NEG; }
  z3::expr lt(const z3::expr& a, const z3::expr& b) const { return a < b; }
  // |a|: IEEE abs in binary32 (it clears the sign bit: abs(-0) is +0, abs(NaN) is NaN).
  z3::expr abs(const z3::expr& a) const { return fp32_ ? z3::abs(a) : z3::ite(lt(a, num(0)), neg(a), a); }
  // ONNX's value for a reduction over an empty set that has no real value
  // (ReduceMax of nothing is -inf, ReduceMin +inf, ReduceLogSum(Exp) -inf,
  // ReduceMean NaN): binary32's value; over the reals, which have neither,
  // a fresh term recorded in `unreal`.
  z3::expr empty_value(double v);
  z3::expr max(const z3::expr& a, const z3::expr& b) const;
  z3::expr min(const z3::expr& a, const z3::expr& b) const;
  z3::expr sqrt(const z3::expr& a);                      // defined where a >= 0 (reals)
  z3::expr log(const z3::expr& a, bool partial = true);  // defined where a > 0 (reals)
  // An uninterpreted unary function. In binary32, its value at NaN and at
  // the infinities is IEEE's (exp(-inf) = 0, tanh(inf) = 1, ...), and at a
  // finite argument it is within the function's range.
  z3::expr fn(const std::string& name, const z3::expr& a);
  // Equality of two results (for FP: the same value, NaN equal to NaN).
  z3::expr same(const z3::expr& a, const z3::expr& b) const { return a == b; }
  double value(const z3::model& m, const z3::expr& e) const;
  // The value at `m` as exactly as a double holds it (a binary32 value
  // bit for bit; a rational rounded once), for replaying a model.
  double exact_value(const z3::model& m, const z3::expr& e) const;
  // The uninterpreted function `name` applied to `a` as a bare term: no law
  // applied, nothing recorded (for facts about terms already built).
  z3::expr apply(const std::string& name, const z3::expr& a);

  // Reals: where the side being evaluated is defined (divisors nonzero, sqrt
  // arguments non-negative, log arguments positive), one predicate per
  // partial operation; the query takes it per side.
  std::vector<z3::expr> defined;
  // Reals: the values without a real counterpart (empty_value). An output
  // element or a definedness predicate that mentions one is not compared
  // over the reals: the binary32 query of the instance (Classes32) compares
  // its class (docs/rules.md, Verification).
  std::vector<z3::expr> unreal;
  // Reals: what always holds of the terms built (the divisors that an op's
  // own semantics guarantees are nonzero).
  std::vector<z3::expr> facts;
  // Reals: each division's inverse, {b != 0, b * inv(b) = 1}. A query where
  // every divisor is known nonzero takes the equations; one that asks
  // whether a divisor is zero takes them as implications.
  std::vector<std::pair<z3::expr, z3::expr>> inverses;
  // Binary32: neither NaN nor an infinity.
  z3::expr finite(const z3::expr& e) const { return !e.mk_is_nan() && !e.mk_is_inf(); }
  // Applications of uninterpreted functions, by name (for axioms).
  std::map<std::string, std::vector<z3::expr>> applications;
  // The `exp-sum` axiom (reals only): exp(a + b) is built as exp(a) * exp(b),
  // and a divisor's factor common to all its summands is divided out first
  // (a / (f*u + f*v) = (a / f) / (u + v)). Applied as terms are built, it
  // leaves Z3 polynomial goals (softmax's shift invariance) instead of
  // quantifier-free search over every pair of exp applications.
  bool exp_sums = false;
  // The `sigmoid-def` and `tanh-def` axioms (reals only), also applied as terms
  // are built: with a = t or a = -t (t not a negation) and E = exp(t),
  // sigmoid(t) = E / (E + 1), sigmoid(-t) = 1 / (E + 1); with E = exp(2t),
  // tanh(t) = (E - 1) / (E + 1), tanh(-t) = (1 - E) / (E + 1); exp(-t) = 1 / exp(t).
  // The goals become linear in the atoms exp(t) and 1 / (E + 1).
  bool sigmoid_exp = false;
  bool tanh_exp = false;
  // Set for an induction step: the stateful ops read and write it; without
  // it they have no semantics (a plain query has no time).
  SpikingStep* step = nullptr;

 private:
  void require(const z3::expr& p, bool partial);
  z3::expr special_values(const std::string& name, const z3::expr& a, const z3::expr& u);

  z3::context& ctx_;
  bool fp32_;
  std::map<std::string, z3::func_decl> fns_;
};

// Evaluates a graph on symbolic inputs (one per graph input, in order).
// Fails, naming the node, on an op without symbolic semantics.
Expected<std::vector<SymTensor>> eval_symbolic(const ir::Graph& graph, const std::vector<SymTensor>& inputs,
                                               SymDomain& domain);

// Whether an op has symbolic semantics: its entry in the table.
bool has_semantics(ir::Op op);

}  // namespace refinery::prove

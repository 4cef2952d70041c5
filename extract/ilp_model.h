// The ILP extractor's model in CBC, which extract/ilp.cpp builds and solves:
// a binary column per candidate, an activity per class, the choice and kid
// rows, acyclicity (entry cuts of cycles, or order variables), and the valid
// inequalities that strengthen its relaxation (use cuts, requirement cuts,
// entry choices). Internal to extract/ (docs/optimize.md, "ILP").
#pragma once

#include <coin/Cbc_C_Interface.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "extract/problem.h"

namespace refinery::extract::ilp {

struct CbcDeleter {
  void operator()(Cbc_Model* m) const { Cbc_deleteModel(m); }
};

class Model {
 public:
  Model(const Problem& q, const std::vector<std::uint8_t>& required, const std::vector<std::uint32_t>& comp,
        const std::vector<std::uint32_t>& comp_size, bool levels, double scale);

  // Columns and rows are gathered here and given to CBC at once when the
  // model is first used (get()): CBC 2.10's Cbc_addRow copies the matrix
  // on every call, which took seconds of the time limit on the zoo's
  // e-graphs before the solver started.
  int add_col(double lb, double ub, double obj, bool integer);
  void add_row(int nz, const int* cols, const double* coefs, char sense, double rhs);

  int x(std::uint32_t c, std::size_t i) const { return static_cast<int>(first_x_[c] + i); }
  // The candidate of column xi (a candidate's column).
  const Candidate& candidate_of(int xi) const;
  // The CBC model, loaded with every column and row added so far on the
  // first call; none may be added after it.
  Cbc_Model* get();

  // Each component's entering candidates: those with no kid in the
  // component (the only way into it of an acyclic answer).
  std::vector<std::vector<int>> entering_candidates() const;

  // Use cuts of each component S of more than one class: a class c outside
  // S whose chosen candidate needs a class of S makes S entered (a chosen
  // candidate of S needing no class of S). One row per (S, c). Without them
  // the relaxation computes c half from a value and half from its other
  // layout, each half-active and entered only half, and the cost halves at
  // every layer of the network.
  void add_use_cuts();

  // Requirement cuts: when every computation of class c uses a class of
  // component S (required_components), S is used and entered wherever c is
  // active: u_S >= a_c and (sum of S's entering candidates) >= a_c. Without
  // them the relaxation pays for a layer of the network only as much as the
  // fractional alternatives above it agree on: a value computed half in one
  // layout and half in the other needs each layout of its input at one half,
  // one half-active component serves both, and the cost paid halves at every
  // layer. Stated from u_T for what all of T's classes require, and from a_c
  // for what only c requires, each only for the nearest components (those
  // not required by another required one): the rest follows along u.
  void add_requirement_cuts();

  // Entry choices: an acyclic answer that uses a component S of several
  // classes enters it through at least one chosen entering candidate (one
  // that needs no class of S); pick one, y_i (continuous, added here):
  // the y of S sum to u_S, y_i <= x_i, and a kid k of the picked one is
  // active: the y of S's candidates that need k sum to at most a_k. This is
  // the condensed relaxation (reduce.h) inside the model. Without it, a
  // value and its negation (or layout) each entered half by the same
  // subtraction need that subtraction's inputs only at one half: the
  // per-class rows bound a_k by each class's own use, never by the sum over
  // the component, and the cost paid halves at every such pair.
  void add_entry_choices();

  // Entry cuts of a set S of classes (a cycle's): a chosen sub-graph that
  // uses a class j of S enters S somewhere, through a chosen candidate of a
  // class of S that needs no class of S. Sum of those candidates >= a_j, for
  // each j in S. An integer answer with a cycle violates the cut of the
  // cycle's classes; a fractional one where S's classes only support each
  // other (half of A from B, half of B from A) violates it too.
  void forbid(const std::vector<std::uint32_t>& set);

  void warm_start(const Solution& s);

  // The chosen candidates, or nothing when CBC has no solution.
  std::optional<Solution> solution();

 private:
  const Problem& q_;
  const std::vector<std::uint32_t>& comp_;
  const std::vector<std::uint32_t>& comp_size_;
  bool levels_;
  std::unique_ptr<Cbc_Model, CbcDeleter> model_;
  std::vector<std::size_t> first_x_;
  std::vector<int> t_, u_;
  int a0_ = 0, num_cols_ = 0;
  bool u_linked_ = false;                    // rows u_S >= a_c added
  std::vector<std::pair<int, int>> y_of_x_;  // (x column, y column) of each entering candidate, by component
  struct Entry {
    int col, row;
    double coef;
  };
  static constexpr double COIN_DBL_MAX_ = std::numeric_limits<double>::max();
  std::vector<double> col_lb_, col_ub_, obj_, row_lb_, row_ub_;
  std::vector<std::uint8_t> integer_;
  std::vector<Entry> entries_;
  bool loaded_ = false;
};

}  // namespace refinery::extract::ilp

#include "extract/ilp_model.h"

#include <algorithm>
#include <bit>
#include <map>
#include <string>

namespace refinery::extract::ilp {
namespace {

// Levels of an acyclic solution inside each component: one above the
// highest chosen child of the same component.
std::vector<double> levels(const Problem& p, const Solution& s, const std::vector<std::uint32_t>& comp) {
  std::vector<double> level(p.classes.size(), -1);
  std::vector<std::pair<std::uint32_t, std::size_t>> stack;
  for (std::uint32_t r = 0; r < p.classes.size(); ++r) {
    if (level[r] >= 0 || s.choice[r] == kUnchosen) continue;
    stack.push_back({r, 0});
    while (!stack.empty()) {
      auto& [c, next] = stack.back();
      const auto& kids = p.classes[c][static_cast<std::size_t>(s.choice[c])].kids;
      if (next < kids.size()) {
        std::uint32_t k = kids[next++];
        if (level[k] < 0 && s.choice[k] != kUnchosen && comp[k] == comp[c]) stack.push_back({k, 0});
        continue;
      }
      double l = 0;
      for (std::uint32_t k : kids)
        if (comp[k] == comp[c] && s.choice[k] != kUnchosen) l = std::max(l, level[k] + 1);
      level[c] = l;
      stack.pop_back();
    }
  }
  for (double& l : level) l = std::max(l, 0.0);
  return level;
}

// One CBC model of the reduced problem with the cuts found so far.
// (key, column) pairs, sorted and unique: calls f(key) once per key, with
// `cols` holding that key's columns and `coefs` a +1 for each.
template <class F>
void for_each_key(const std::vector<std::pair<std::uint32_t, int>>& uses, std::vector<int>& cols,
                  std::vector<double>& coefs, F f) {
  for (std::size_t b = 0; b < uses.size();) {
    cols.clear();
    coefs.clear();
    std::size_t e = b;
    for (; e < uses.size() && uses[e].first == uses[b].first; ++e) {
      cols.push_back(uses[e].second);
      coefs.push_back(1);
    }
    f(uses[b].first);
    b = e;
  }
}

}  // namespace

Model::Model(const Problem& q, const std::vector<std::uint8_t>& required, const std::vector<std::uint32_t>& comp,
             const std::vector<std::uint32_t>& comp_size, bool levels, double scale)
    : q_(q), comp_(comp), comp_size_(comp_size), levels_(levels), model_(Cbc_newModel()) {
  const std::size_t n = q.classes.size();
  first_x_.assign(n + 1, 0);
  for (std::size_t c = 0; c < n; ++c) first_x_[c + 1] = first_x_[c] + q.classes[c].size();
  a0_ = static_cast<int>(first_x_[n]);
  for (std::size_t c = 0; c < n; ++c)
    for (const Candidate& cand : q.classes[c]) add_col(0, 1, cand.cost * scale, true);
  for (std::size_t c = 0; c < n; ++c) add_col(required[c] ? 1 : 0, 1, 0, false);
  int t = a0_ + static_cast<int>(n);
  t_.assign(n, -1);
  if (levels)
    for (std::size_t c = 0; c < n; ++c)
      if (comp_size[comp[c]] > 1) {
        t_[c] = t++;
        add_col(0, comp_size[comp[c]] - 1.0, 0, false);
      }
  // A use variable per component of several classes (1 when any of its
  // classes is active); a one-class component's is its class's activity.
  u_.assign(comp_size.size(), -1);
  for (std::size_t c = 0; c < n; ++c)
    if (comp_size[comp[c]] == 1) u_[comp[c]] = a0_ + static_cast<int>(c);
  for (std::size_t s = 0; s < comp_size.size(); ++s)
    if (u_[s] < 0) {
      u_[s] = t++;
      add_col(0, 1, 0, false);
    }
  std::vector<int> cols;
  std::vector<double> coefs;
  for (std::size_t c = 0; c < n; ++c) {
    cols.clear();
    coefs.clear();
    for (std::size_t i = first_x_[c]; i < first_x_[c + 1]; ++i) {
      cols.push_back(static_cast<int>(i));
      coefs.push_back(1);
    }
    cols.push_back(a0_ + static_cast<int>(c));
    coefs.push_back(-1);
    add_row(static_cast<int>(cols.size()), cols.data(), coefs.data(), 'E', 0);
    // For each class k a candidate of c needs: the candidates of c that
    // need k sum to at most a_k (one row per pair, not per candidate: at
    // most one candidate of c is chosen, and the aggregate is a much
    // tighter relaxation when c's candidates share their children).
    std::vector<std::pair<std::uint32_t, int>> uses;  // kid, candidate column
    for (std::size_t i = 0; i < q.classes[c].size(); ++i)
      for (std::uint32_t k : q.classes[c][i].kids) uses.push_back({k, static_cast<int>(first_x_[c] + i)});
    std::sort(uses.begin(), uses.end());
    uses.erase(std::unique(uses.begin(), uses.end()), uses.end());  // add(x, x) needs x once
    for_each_key(uses, cols, coefs, [&](std::uint32_t kid) {
      cols.push_back(a0_ + static_cast<int>(kid));
      coefs.push_back(-1);
      add_row(static_cast<int>(cols.size()), cols.data(), coefs.data(), 'L', 0);
    });
    for (std::size_t i = 0; i < q.classes[c].size(); ++i) {
      int x = static_cast<int>(first_x_[c] + i);
      for (std::uint32_t k : q.classes[c][i].kids) {
        if (levels && comp[k] == comp[c]) {
          // t_c - t_k - big * x >= 1 - big
          double big = comp_size[comp[c]];
          int ct[3] = {t_[c], t_[k], x};
          double vt[3] = {1, -1, -big};
          add_row(3, ct, vt, 'G', 1 - big);
        }
      }
    }
  }
}

int Model::add_col(double lb, double ub, double obj, bool integer) {
  col_lb_.push_back(lb);
  col_ub_.push_back(ub);
  obj_.push_back(obj);
  integer_.push_back(integer ? 1 : 0);
  return num_cols_++;
}

void Model::add_row(int nz, const int* cols, const double* coefs, char sense, double rhs) {
  for (int j = 0; j < nz; ++j) entries_.push_back({cols[j], static_cast<int>(row_lb_.size()), coefs[j]});
  row_lb_.push_back(sense == 'L' ? -COIN_DBL_MAX_ : rhs);
  row_ub_.push_back(sense == 'G' ? COIN_DBL_MAX_ : rhs);
}

const Candidate& Model::candidate_of(int xi) const {
  auto c = static_cast<std::size_t>(std::upper_bound(first_x_.begin(), first_x_.end(), static_cast<std::size_t>(xi)) -
                                    first_x_.begin() - 1);
  return q_.classes[c][static_cast<std::size_t>(xi) - first_x_[c]];
}

Cbc_Model* Model::get() {
  Cbc_Model* m = model_.get();
  if (loaded_) return m;
  loaded_ = true;
  std::sort(entries_.begin(), entries_.end(),
            [](const Entry& a, const Entry& b) { return a.col != b.col ? a.col < b.col : a.row < b.row; });
  std::vector<CoinBigIndex> start(static_cast<std::size_t>(num_cols_) + 1, 0);
  std::vector<int> index(entries_.size());
  std::vector<double> value(entries_.size());
  for (std::size_t e = 0; e < entries_.size(); ++e) {
    ++start[static_cast<std::size_t>(entries_[e].col) + 1];
    index[e] = entries_[e].row;
    value[e] = entries_[e].coef;
  }
  for (std::size_t j = 0; j < static_cast<std::size_t>(num_cols_); ++j) start[j + 1] += start[j];
  Cbc_loadProblem(m, num_cols_, static_cast<int>(row_lb_.size()), start.data(), index.data(), value.data(),
                  col_lb_.data(), col_ub_.data(), obj_.data(), row_lb_.data(), row_ub_.data());
  // CBC reads a MIP start by column name: every column needs its own.
  for (int j = 0; j < num_cols_; ++j) {
    Cbc_setColName(m, j, ("c" + std::to_string(j)).c_str());
    if (integer_[static_cast<std::size_t>(j)]) Cbc_setInteger(m, j);
  }
  Cbc_setLogLevel(m, 0);
  // CBC 2.10 crashes in CglPreProcess::postProcess when its time limit hits
  // during preprocessing (Debian 12 build); reduce() does the useful part.
  Cbc_setParameter(m, "preprocess", "off");
  std::vector<Entry>().swap(entries_);
  return m;
}

std::vector<std::vector<int>> Model::entering_candidates() const {
  std::vector<std::vector<int>> entering(comp_size_.size());
  for (std::uint32_t c = 0; c < q_.classes.size(); ++c)
    for (std::size_t i = 0; i < q_.classes[c].size(); ++i) {
      const auto& kids = q_.classes[c][i].kids;
      if (std::none_of(kids.begin(), kids.end(), [&](std::uint32_t k) { return comp_[k] == comp_[c]; }))
        entering[comp_[c]].push_back(x(c, i));
    }
  return entering;
}

void Model::add_use_cuts() {
  const std::size_t n = q_.classes.size();
  std::vector<std::vector<int>> entering = entering_candidates();
  std::vector<std::pair<std::uint32_t, int>> uses;  // component, candidate of c
  std::vector<int> cols;
  std::vector<double> coefs;
  for (std::uint32_t c = 0; c < n; ++c) {
    uses.clear();
    for (std::size_t i = 0; i < q_.classes[c].size(); ++i)
      for (std::uint32_t k : q_.classes[c][i].kids)
        if (comp_size_[comp_[k]] > 1 && comp_[k] != comp_[c]) uses.push_back({comp_[k], x(c, i)});
    std::sort(uses.begin(), uses.end());
    uses.erase(std::unique(uses.begin(), uses.end()), uses.end());
    for_each_key(uses, cols, coefs, [&](std::uint32_t component) {
      for (int col : entering[component]) {
        cols.push_back(col);
        coefs.push_back(-1);
      }
      add_row(static_cast<int>(cols.size()), cols.data(), coefs.data(), 'L', 0);
    });
  }
}

void Model::add_requirement_cuts() {
  const std::size_t n = q_.classes.size(), num_comps = comp_size_.size();
  // Per class, the components every acyclic computation of it uses a class of.
  Requirements req = requirements(q_.classes, comp_, comp_, num_comps);
  const std::size_t words = req.words;
  std::vector<std::vector<std::uint32_t>> members(num_comps);
  for (std::uint32_t c = 0; c < n; ++c) members[comp_[c]].push_back(c);
  // Per component: what all its classes require, itself left out.
  std::vector<std::uint64_t> common(num_comps * words, ~std::uint64_t{0});
  for (std::uint32_t c = 0; c < n; ++c)
    for (std::size_t w = 0; w < words; ++w) common[comp_[c] * words + w] &= req.of(c)[w];
  for (std::size_t s = 0; s < num_comps; ++s) common[s * words + s / 64] &= ~(std::uint64_t{1} << (s % 64));
  std::vector<std::vector<int>> entering = entering_candidates();
  std::vector<int> cols;
  std::vector<double> coefs;
  // Rows "S used and entered" from column `from`, for the nearest of `set`.
  std::vector<std::uint64_t> covered(words);
  auto rows_from = [&](int from, const std::uint64_t* set, const std::uint64_t* skip) {
    std::fill(covered.begin(), covered.end(), 0);
    for (std::size_t s = 0; s < num_comps; ++s)
      if ((set[s / 64] >> (s % 64)) & 1)
        for (std::size_t w = 0; w < words; ++w) covered[w] |= common[s * words + w];
    for (std::uint32_t s = 0; s < num_comps; ++s) {
      if (!((set[s / 64] >> (s % 64)) & 1) || ((covered[s / 64] >> (s % 64)) & 1)) continue;
      if (skip != nullptr && ((skip[s / 64] >> (s % 64)) & 1)) continue;
      int two[2] = {u_[s], from};
      double signs[2] = {1, -1};
      add_row(2, two, signs, 'G', 0);
      if (comp_size_[s] == 1) continue;  // entering one class is its activity
      cols = entering[s];
      coefs.assign(cols.size(), 1);
      cols.push_back(from);
      coefs.push_back(-1);
      add_row(static_cast<int>(cols.size()), cols.data(), coefs.data(), 'G', 0);
    }
  };
  std::vector<std::uint64_t> own(words);
  u_linked_ = true;
  for (std::uint32_t s = 0; s < num_comps; ++s) {
    if (comp_size_[s] > 1) {
      for (std::uint32_t c : members[s]) {
        int two[2] = {u_[s], a0_ + static_cast<int>(c)};
        double signs[2] = {1, -1};
        add_row(2, two, signs, 'G', 0);
      }
    }
    rows_from(u_[s], common.data() + s * words, nullptr);
    if (comp_size_[s] == 1) continue;
    // What only some of the component's classes require.
    for (std::uint32_t c : members[s]) {
      std::copy(req.of(c), req.of(c) + words, own.begin());
      own[s / 64] &= ~(std::uint64_t{1} << (s % 64));
      rows_from(a0_ + static_cast<int>(c), own.data(), common.data() + s * words);
    }
  }
  // Alternatives: a class's candidates exclude each other, so where
  // several of them each need component S (through different kids), S is
  // used and entered at least as much as they sum to. (Through one kid k
  // they all need, this already follows from k's row and k's own cuts.)
  // One row per set of candidates, for the nearest components needed by
  // exactly that set.
  std::vector<std::uint64_t> need, via_kid(words), reached(words);
  std::map<std::vector<std::uint64_t>, std::vector<std::uint32_t>> groups;  // candidate set -> components
  std::vector<std::uint32_t> shared, next, kids;
  for (std::uint32_t c = 0; c < n; ++c) {
    const auto& cands = q_.classes[c];
    const std::size_t num = cands.size(), cwords = (num + 63) / 64;
    if (num < 2) continue;
    need.assign(num * words, 0);
    std::fill(reached.begin(), reached.end(), 0);
    for (std::size_t i = 0; i < num; ++i)
      for (std::uint32_t k : cands[i].kids)
        for (std::size_t w = 0; w < words; ++w) {
          need[i * words + w] |= req.of(k)[w];
          reached[w] |= req.of(k)[w];
        }
    groups.clear();
    for (std::uint32_t s = 0; s < num_comps; ++s) {
      if (!((reached[s / 64] >> (s % 64)) & 1) || req.has(c, s) || s == comp_[c]) continue;
      std::vector<std::uint64_t> set(cwords, 0);
      std::size_t count = 0;
      for (std::size_t i = 0; i < num; ++i)
        if ((need[i * words + s / 64] >> (s % 64)) & 1) {
          set[i / 64] |= std::uint64_t{1} << (i % 64);
          ++count;
        }
      if (count >= 2) groups[std::move(set)].push_back(s);
    }
    for (const auto& [set, comps] : groups) {
      // The kids every candidate of the set needs, and what they require.
      bool first = true;
      for (std::size_t i = 0; i < num; ++i) {
        if (!((set[i / 64] >> (i % 64)) & 1)) continue;
        kids = cands[i].kids;
        std::sort(kids.begin(), kids.end());
        if (first) {
          shared = kids;
          first = false;
          continue;
        }
        next.clear();
        std::set_intersection(shared.begin(), shared.end(), kids.begin(), kids.end(), std::back_inserter(next));
        shared.swap(next);
      }
      std::fill(via_kid.begin(), via_kid.end(), 0);
      for (std::uint32_t k : shared)
        for (std::size_t w = 0; w < words; ++w) via_kid[w] |= req.of(k)[w];
      std::fill(covered.begin(), covered.end(), 0);
      for (std::uint32_t s : comps)
        for (std::size_t w = 0; w < words; ++w) covered[w] |= common[s * words + w];
      std::vector<int> xs;
      for (std::size_t i = 0; i < num; ++i)
        if ((set[i / 64] >> (i % 64)) & 1) xs.push_back(x(c, i));
      for (std::uint32_t s : comps) {
        if (((via_kid[s / 64] >> (s % 64)) & 1) || ((covered[s / 64] >> (s % 64)) & 1)) continue;
        cols.assign(1, u_[s]);
        coefs.assign(1, 1);
        for (int col : xs) {
          cols.push_back(col);
          coefs.push_back(-1);
        }
        add_row(static_cast<int>(cols.size()), cols.data(), coefs.data(), 'G', 0);
        if (comp_size_[s] == 1) continue;
        cols = entering[s];
        coefs.assign(cols.size(), 1);
        for (int col : xs) {
          cols.push_back(col);
          coefs.push_back(-1);
        }
        add_row(static_cast<int>(cols.size()), cols.data(), coefs.data(), 'G', 0);
      }
    }
  }
}

void Model::add_entry_choices() {
  const std::size_t n = q_.classes.size(), num_comps = comp_size_.size();
  std::vector<std::vector<int>> entering = entering_candidates();
  if (!u_linked_)  // u_S >= a_c, as add_requirement_cuts states them
    for (std::uint32_t c = 0; c < n; ++c)
      if (comp_size_[comp_[c]] > 1) {
        int two[2] = {u_[comp_[c]], a0_ + static_cast<int>(c)};
        double signs[2] = {1, -1};
        add_row(2, two, signs, 'G', 0);
      }
  y_of_x_.clear();
  std::vector<int> cols;
  std::vector<double> coefs;
  std::vector<std::pair<std::uint32_t, int>> uses;  // kid, y column
  for (std::uint32_t s = 0; s < num_comps; ++s) {
    if (comp_size_[s] < 2 || entering[s].empty()) continue;
    cols.clear();
    coefs.clear();
    uses.clear();
    for (int xi : entering[s]) {
      int y = add_col(0, 1, 0, false);
      y_of_x_.emplace_back(xi, y);
      int two[2] = {y, xi};
      double signs[2] = {1, -1};
      add_row(2, two, signs, 'L', 0);
      cols.push_back(y);
      coefs.push_back(1);
      for (std::uint32_t k : candidate_of(xi).kids) uses.push_back({k, y});
    }
    cols.push_back(u_[s]);
    coefs.push_back(-1);
    add_row(static_cast<int>(cols.size()), cols.data(), coefs.data(), 'E', 0);
    std::sort(uses.begin(), uses.end());
    uses.erase(std::unique(uses.begin(), uses.end()), uses.end());
    for_each_key(uses, cols, coefs, [&](std::uint32_t kid) {
      cols.push_back(a0_ + static_cast<int>(kid));
      coefs.push_back(-1);
      add_row(static_cast<int>(cols.size()), cols.data(), coefs.data(), 'L', 0);
    });
  }
}

void Model::forbid(const std::vector<std::uint32_t>& set) {
  std::vector<std::uint32_t> in(set);
  std::sort(in.begin(), in.end());
  std::vector<int> cols;
  for (std::uint32_t c : in)
    for (std::size_t i = 0; i < q_.classes[c].size(); ++i) {
      const auto& kids = q_.classes[c][i].kids;
      bool enters = std::none_of(kids.begin(), kids.end(),
                                 [&](std::uint32_t k) { return std::binary_search(in.begin(), in.end(), k); });
      if (enters) cols.push_back(x(c, i));
    }
  cols.push_back(0);
  std::vector<double> coefs(cols.size(), 1.0);
  coefs.back() = -1;
  for (std::uint32_t j : in) {
    cols.back() = a0_ + static_cast<int>(j);
    add_row(static_cast<int>(cols.size()), cols.data(), coefs.data(), 'G', 0);
  }
}

void Model::warm_start(const Solution& s) {
  std::vector<double> values(static_cast<std::size_t>(num_cols_), 0);
  std::vector<double> level = levels_ ? levels(q_, s, comp_) : std::vector<double>{};
  for (std::uint32_t c = 0; c < q_.classes.size(); ++c) {
    if (s.choice[c] != kUnchosen) {
      values[static_cast<std::size_t>(x(c, static_cast<std::size_t>(s.choice[c])))] = 1;
      values[static_cast<std::size_t>(a0_) + c] = 1;
    }
    if (levels_ && t_[c] >= 0) values[static_cast<std::size_t>(t_[c])] = level[c];
    if (s.choice[c] != kUnchosen) values[static_cast<std::size_t>(u_[comp_[c]])] = 1;
  }
  // One chosen entering candidate per component used: its y.
  std::vector<std::uint8_t> picked(comp_size_.size(), 0);
  for (const auto& [xi, y] : y_of_x_) {
    auto c = static_cast<std::uint32_t>(
        std::upper_bound(first_x_.begin(), first_x_.end(), static_cast<std::size_t>(xi)) - first_x_.begin() - 1);
    if (values[static_cast<std::size_t>(xi)] > 0.5 && !picked[comp_[c]]) {
      picked[comp_[c]] = 1;
      values[static_cast<std::size_t>(y)] = 1;
    }
  }
  std::vector<int> idx(values.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int>(i);
  Cbc_setMIPStartI(get(), static_cast<int>(idx.size()), idx.data(), values.data());
}

std::optional<Solution> Model::solution() {
  const double* v = Cbc_getColSolution(get());
  if (v == nullptr || Cbc_getNumCols(get()) != num_cols_) return std::nullopt;
  Solution s{std::vector<std::int32_t>(q_.classes.size(), kUnchosen)};
  for (std::uint32_t c = 0; c < q_.classes.size(); ++c)
    for (std::size_t i = 0; i < q_.classes[c].size(); ++i)
      if (v[x(c, i)] > 0.5) s.choice[c] = static_cast<std::int32_t>(i);
  return prune_unreachable(q_, std::move(s));
}

}  // namespace refinery::extract::ilp

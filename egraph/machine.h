// E-matching as a small abstract machine (egg's design). A pattern compiles
// to a straight-line program over registers holding e-class ids: Bind
// enumerates a class's nodes with a given operator into fresh registers,
// Compare joins a variable used twice, Lookup checks a ground sub-term found
// once per search through the hashcons, Scan enumerates candidate classes
// for the later roots of a multi-pattern, and Check asks the caller about the
// class a variable was just bound to. Backtracking is the recursion.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "egraph/id.h"
#include "egraph/language.h"
#include "egraph/pattern.h"
#include "egraph/subst.h"

namespace refinery::egraph {

// Whether `node` matches the pattern node `tmpl` (children ignored). A
// language may widen this with `node.matches_template(tmpl)`, e.g. to let a
// pattern node with a wildcard payload match any payload of its operator;
// otherwise it is `same_op`.
template <ENode N>
bool matches_template(const N& node, const N& tmpl) {
  if constexpr (requires {
                  { node.matches_template(tmpl) } -> std::convertible_to<bool>;
                }) {
    return node.matches_template(tmpl);
  } else {
    return node.same_op(tmpl);
  }
}

// A check on the class a variable is bound to (`check(k, class)` for the
// program's k-th checked variable), run as soon as the variable is bound:
// a class that fails it ends that branch of the search. None by default.
struct NoChecks {
  bool operator()(std::uint32_t, Id) const { return true; }
};

template <ENode N>
class Program {
 public:
  // One pattern; its root is register 0 and the match root.
  static Program compile(const PatternAst<N>& pat, std::size_t num_vars, std::span<const Var> checked = {}) {
    Program p;
    p.var_reg_.assign(num_vars, kNoReg);
    p.checked_.assign(checked.begin(), checked.end());
    const auto& root = pat[pat.root()];
    p.nregs_ = 1;
    if (root.is_var) {
      p.root_ = RootKind::Var;
      p.bind_var(root.var, 0);
    } else if (pat.is_ground(pat.root())) {
      p.root_ = RootKind::Ground;
      p.grounds_.push_back(pat.ground_term(pat.root()));
    } else {
      p.root_ = RootKind::Node;
      p.root_op_ = root.node.op_key();
      p.expand(pat, {{0, pat.root()}});
    }
    p.seal();
    return p;
  }

  // Several patterns sharing variables; `roots[k]` names the class pattern k
  // matches. The match root is the first pattern's class.
  static Program compile_multi(std::span<const std::pair<Var, PatternAst<N>>> pats, std::size_t num_vars,
                               std::span<const Var> checked = {}) {
    Program p;
    p.var_reg_.assign(num_vars, kNoReg);
    p.checked_.assign(checked.begin(), checked.end());
    p.root_ = RootKind::Multi;
    p.nregs_ = 0;
    for (const auto& [root_var, pat] : pats) {
      std::uint32_t reg = p.var_reg_[index(root_var)];
      if (reg == kNoReg) {
        reg = p.nregs_++;
        const auto& root = pat[pat.root()];
        if (root.is_var || pat.is_ground(pat.root())) {
          p.code_.push_back(Instr{Op::ScanAll, reg, 0, 0});
        } else {
          p.code_.push_back(Instr{Op::ScanOp, reg, 0, root.node.op_key()});
        }
        p.bind_var(root_var, reg);
      }
      p.expand(pat, {{reg, pat.root()}});
    }
    p.multi_root_reg_ = p.var_reg_[index(pats.front().first)];
    p.seal();
    return p;
  }

  // Appends up to `limit` matches (total in `out`); false when it stopped
  // at the limit.
  template <class G, class C = NoChecks>
  bool search(const G& g, std::size_t limit, SearchMatches& out, const C& check = {}) const {
    return search_part(g, limit, out, 0, 1, check);
  }

  // The root candidates a search enumerates: the classes holding the root's
  // operator, or every class for a variable root; 1 for a ground pattern or
  // a multi-pattern (searched as one part).
  template <class G>
  std::size_t num_candidates(const G& g) const {
    switch (root_) {
      case RootKind::Var: return g.class_ids().size();
      case RootKind::Node: return g.classes_with_op(root_op_).size();
      default: return 1;
    }
  }

  // As search, over part `part` of `parts` equal slices of the root
  // candidates (in order): the parts' matches, concatenated in part order,
  // are the whole search's.
  template <class G, class C = NoChecks>
  bool search_part(const G& g, std::size_t limit, SearchMatches& out, std::size_t part, std::size_t parts,
                   const C& check = {}) const {
    std::vector<Id> grounds;
    if (!lookup_grounds(g, grounds)) return true;
    std::vector<Id> regs(nregs_ + 1);
    regs[nregs_] = kInvalidId;  // what a variable without a register reads
    Yield<G> y(this, &out, limit);
    bool more = true;
    auto scan = [&](std::span<const Id> all) {
      const std::size_t lo = all.size() * part / parts, hi = all.size() * (part + 1) / parts;
      for (Id c : all.subspan(lo, hi - lo)) {
        regs[0] = c;
        if (!(more = run(g, 0, regs.data(), grounds.data(), y, c, check))) break;
      }
    };
    switch (root_) {
      case RootKind::Var: scan(g.class_ids()); break;
      case RootKind::Node: scan(g.classes_with_op(root_op_)); break;
      case RootKind::Ground:
        if (part != 0) break;
        regs[0] = grounds[0];
        more = run(g, 0, regs.data(), grounds.data(), y, grounds[0], check);
        break;
      case RootKind::Multi:
        if (part != 0) break;
        more = run(g, 0, regs.data(), grounds.data(), y, kInvalidId, check);
        break;
    }
    y.finish();
    return more;
  }

  // Matches rooted at one canonical class (single patterns only).
  template <class G, class C = NoChecks>
  bool search_class(const G& g, Id cls, std::size_t limit, SearchMatches& out, const C& check = {}) const {
    std::vector<Id> grounds;
    if (!lookup_grounds(g, grounds)) return true;
    if (root_ == RootKind::Ground && grounds[0] != cls) return true;
    std::vector<Id> regs(nregs_ + 1);
    regs[nregs_] = kInvalidId;
    regs[0] = cls;
    Yield<G> y(this, &out, limit);
    bool more = run(g, 0, regs.data(), grounds.data(), y, cls, check);
    y.finish();
    return more;
  }

  std::size_t num_instructions() const { return code_.size(); }

 private:
  static constexpr std::uint32_t kNoReg = std::numeric_limits<std::uint32_t>::max();
  enum class Op : std::uint8_t { Bind, Compare, Lookup, ScanOp, ScanAll, Check };
  enum class RootKind : std::uint8_t { Node, Var, Ground, Multi };
  struct Instr {
    Op op;
    std::uint32_t a;  // input register (Scan: output register)
    std::uint32_t b;  // Bind: first output register; Compare: other register; Lookup: ground index;
                      // Check: the check's number
    std::uint32_t c;  // Bind: template index; ScanOp: op key
    std::uint32_t d = kNoReg;  // Bind: the register the first child must equal, where one is bound already
  };

  // Writes matches into `out` through raw pointers: the buffers start at
  // the room they have (kept from the rule's previous search), grow by
  // doubling (not filled: NoInitAllocator) and are cut to the matches
  // written by finish(). What a match copies (the variables'
  // registers, the root's) is held here, not read through the program per
  // match.
  template <class G>
  struct Yield {
    SearchMatches* out;
    std::size_t limit;
    std::size_t n;    // matches in `out`
    std::size_t cap;  // matches `out` has room for
    const std::uint32_t* var_reg;
    std::size_t nv;
    std::uint32_t root_reg;  // a multi-pattern's root register, else kNoReg
    Id* roots;
    Id* substs;
    Yield(const Program* p, SearchMatches* o, std::size_t lim)
        : out(o),
          limit(lim),
          n(o->roots.size()),
          cap(n),
          var_reg(p->var_reg_.data()),
          nv(p->var_reg_.size()),
          root_reg(p->root_ == RootKind::Multi ? p->multi_root_reg_ : kNoReg),
          roots(o->roots.data()),
          substs(o->substs.data()) {
      std::size_t room = nv ? std::min(o->roots.capacity(), o->substs.capacity() / nv) : o->roots.capacity();
      if (room > n) resize(room);
    }
    [[gnu::always_inline]] bool operator()(const Id* regs, Id root) {
      if (n == cap) [[unlikely]]
        grow();
      roots[n] = root_reg == kNoReg ? root : regs[root_reg];
      Id* dst = substs + n * nv;
      // Most rules have at most four variables: copied without a loop.
      switch (nv) {
        case 4: dst[3] = regs[var_reg[3]]; [[fallthrough]];
        case 3: dst[2] = regs[var_reg[2]]; [[fallthrough]];
        case 2: dst[1] = regs[var_reg[1]]; [[fallthrough]];
        case 1: dst[0] = regs[var_reg[0]]; [[fallthrough]];
        case 0: break;
        default:
          for (std::size_t v = 0; v < nv; ++v) dst[v] = regs[var_reg[v]];
      }
      return ++n < limit;
    }
    [[gnu::noinline]] void grow() { resize(std::max<std::size_t>(64, 2 * n)); }
    void resize(std::size_t room) {
      cap = room;
      out->roots.resize(cap);
      out->substs.resize(cap * nv);
      roots = out->roots.data();
      substs = out->substs.data();
    }
    void finish() {
      out->roots.resize(n);
      out->substs.resize(n * nv);
    }
  };

  template <class G>
  bool lookup_grounds(const G& g, std::vector<Id>& grounds) const {
    grounds.reserve(grounds_.size());
    for (const auto& term : grounds_) {
      auto id = g.lookup_expr(term);
      if (!id) return false;
      grounds.push_back(*id);
    }
    return true;
  }

  // A variable the patterns do not bind reads register nregs_, which holds
  // kInvalidId (so that the yield copies registers without a test).
  void seal() {
    for (std::uint32_t& r : var_reg_)
      if (r == kNoReg) r = nregs_;
  }

  // Emits instructions that match the sub-patterns `todo` (register, term).
  // Variables first (free checks), then ground lookups, then binds (FIFO).
  void expand(const PatternAst<N>& pat, std::vector<std::pair<std::uint32_t, Id>> todo) {
    while (!todo.empty()) {
      auto pick = std::find_if(todo.begin(), todo.end(), [&](auto& t) { return pat[t.second].is_var; });
      if (pick == todo.end())
        pick = std::find_if(todo.begin(), todo.end(), [&](auto& t) { return pat.is_ground(t.second); });
      if (pick == todo.end()) pick = todo.begin();
      auto [reg, term_id] = *pick;
      todo.erase(pick);
      const auto& term = pat[term_id];
      if (term.is_var) {
        if (std::uint32_t slot = var_reg_[index(term.var)]; slot == kNoReg) {
          bind_var(term.var, reg);
        } else {
          code_.push_back(Instr{Op::Compare, reg, slot, 0});
        }
      } else if (pat.is_ground(term_id)) {
        grounds_.push_back(pat.ground_term(term_id));
        code_.push_back(Instr{Op::Lookup, reg, static_cast<std::uint32_t>(grounds_.size() - 1), 0});
      } else {
        auto kids = term.node.children();
        // A first child that is a variable bound already: Bind takes only
        // the nodes whose first child is its class (Compare still checks).
        std::uint32_t first = kNoReg;
        if (!kids.empty() && pat[kids[0]].is_var) first = var_reg_[index(pat[kids[0]].var)];
        code_.push_back(Instr{Op::Bind, reg, nregs_, static_cast<std::uint32_t>(templates_.size()), first});
        templates_.push_back(term.node);
        for (std::uint32_t i = 0; i < kids.size(); ++i) todo.emplace_back(nregs_ + i, kids[i]);
        nregs_ += static_cast<std::uint32_t>(kids.size());
      }
    }
  }

  template <class G, class Y, class C>
  bool run(const G& g, std::size_t pc, Id* regs, const Id* grounds, Y& yield, Id root, const C& check) const {
    for (; pc < code_.size(); ++pc) {
      const Instr& in = code_[pc];
      switch (in.op) {
        case Op::Compare:
          if (regs[in.a] != regs[in.b]) return true;
          break;
        case Op::Lookup:
          if (regs[in.a] != grounds[in.b]) return true;
          break;
        case Op::Check:
          if (!check(in.b, regs[in.a])) return true;
          break;
        case Op::Bind: {
          const N& tmpl = templates_[in.c];
          const auto& nodes = g[regs[in.a]].nodes;
          std::uint32_t key = tmpl.op_key();
          const bool leaf = pc + 1 == code_.size();
          // Binds node n's children and runs the rest; false to stop.
          auto take = [&](const N& n) {
            if (!matches_template(n, tmpl)) return true;
            auto kids = n.children();
            Id* dst = regs + in.b;
            switch (kids.size()) {  // most operators have at most three children: no loop
              case 3: dst[2] = kids[2]; [[fallthrough]];
              case 2: dst[1] = kids[1]; [[fallthrough]];
              case 1: dst[0] = kids[0]; [[fallthrough]];
              case 0: break;
              default:
                for (std::size_t i = 0; i < kids.size(); ++i) dst[i] = kids[i];
            }
            // The last instruction yields without a recursive call.
            return leaf ? yield(regs, root) : run(g, pc + 1, regs, grounds, yield, root, check);
          };
          auto it = nodes.begin();
          if (nodes.size() > 8)
            it = std::partition_point(nodes.begin(), nodes.end(), [&](const N& n) { return n.op_key() < key; });
          if constexpr (requires(const N& n) { n.group_key(); }) {
            if (in.d != kNoReg && nodes.size() > 8) {
              // Each group of the operator's nodes is sorted by children:
              // those whose first child is regs[in.d] are a range of it.
              const Id want = regs[in.d];
              auto end = std::partition_point(it, nodes.end(), [&](const N& n) { return n.op_key() <= key; });
              while (it != end) {
                const std::uint64_t group = it->group_key();
                auto group_end = std::partition_point(it, end, [&](const N& n) { return n.group_key() == group; });
                it = std::partition_point(it, group_end, [&](const N& n) {
                  auto kids = n.children();
                  return kids.empty() || kids[0] < want;
                });
                for (; it != group_end && it->children()[0] == want; ++it)
                  if (!take(*it)) return false;
                it = group_end;
              }
              return true;
            }
          }
          for (; it != nodes.end(); ++it) {
            std::uint32_t k = it->op_key();
            if (k != key) {
              if (k > key) break;
              continue;
            }
            if (!take(*it)) return false;
          }
          return true;
        }
        case Op::ScanOp:
          for (Id c : g.classes_with_op(in.c)) {
            regs[in.a] = c;
            if (!run(g, pc + 1, regs, grounds, yield, root, check)) return false;
          }
          return true;
        case Op::ScanAll:
          for (Id c : g.class_ids()) {
            regs[in.a] = c;
            if (!run(g, pc + 1, regs, grounds, yield, root, check)) return false;
          }
          return true;
      }
    }
    return yield(regs, root);
  }

  // Gives variable v register `reg`, and where v is checked, checks it
  // there: right after the instruction that wrote the register.
  void bind_var(Var v, std::uint32_t reg) {
    var_reg_[index(v)] = reg;
    for (std::uint32_t k = 0; k < checked_.size(); ++k)
      if (checked_[k] == v) code_.push_back(Instr{Op::Check, reg, k, 0});
  }

  std::vector<Instr> code_;
  std::vector<Var> checked_;  // the variables with a check, in the checker's numbering
  std::vector<N> templates_;
  std::vector<RecExpr<N>> grounds_;
  std::vector<std::uint32_t> var_reg_;
  std::uint32_t nregs_ = 0;
  RootKind root_ = RootKind::Node;
  std::uint32_t root_op_ = 0;
  std::uint32_t multi_root_reg_ = 0;
};

}  // namespace refinery::egraph

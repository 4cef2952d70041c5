// The `.rules` reader: s-expressions with positions, then rules checked as
// they load (docs/rules.md). Every error is "file:line:col: message".
#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "rules/builtins.h"
#include "rules/rule_ast.h"
#include "rules/rules.h"

namespace refinery::rules {
namespace {

struct Sx {
  enum class Kind { Atom, String, List, Bracket } kind = Kind::Atom;
  std::string text;
  std::vector<Sx> items;
  Pos pos;
  bool is_atom(std::string_view s) const { return kind == Kind::Atom && text == s; }
};

struct Error {
  Pos pos;
  std::string message;
};

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  std::expected<std::vector<Sx>, Error> read_all() {
    std::vector<Sx> out;
    while (true) {
      skip();
      if (i_ >= text_.size()) return out;
      auto e = read();
      if (!e) return std::unexpected(e.error());
      out.push_back(std::move(*e));
    }
  }

 private:
  void skip() {
    while (i_ < text_.size()) {
      char c = text_[i_];
      if (c == ';') {
        while (i_ < text_.size() && text_[i_] != '\n') advance();
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else {
        break;
      }
    }
  }
  void advance() { pos_.step(text_[i_++]); }

  std::expected<Sx, Error> read() {
    skip();
    Sx e;
    e.pos = pos_;
    if (i_ >= text_.size()) return std::unexpected(Error{pos_, "unexpected end of file"});
    char c = text_[i_];
    if (c == '(' || c == '[') {
      char close = c == '(' ? ')' : ']';
      e.kind = c == '(' ? Sx::Kind::List : Sx::Kind::Bracket;
      advance();
      while (true) {
        skip();
        if (i_ >= text_.size()) return std::unexpected(Error{e.pos, fmt::format("'{}' is never closed", c)});
        if (text_[i_] == close) {
          advance();
          return e;
        }
        if (text_[i_] == ')' || text_[i_] == ']')
          return std::unexpected(Error{pos_, fmt::format("expected '{}', found '{}'", close, text_[i_])});
        auto item = read();
        if (!item) return item;
        e.items.push_back(std::move(*item));
      }
    }
    if (c == ')' || c == ']') return std::unexpected(Error{pos_, fmt::format("unexpected '{}'", c)});
    if (c == '"') {
      e.kind = Sx::Kind::String;
      advance();
      while (i_ < text_.size() && text_[i_] != '"' && text_[i_] != '\n') {
        e.text += text_[i_];
        advance();
      }
      if (i_ >= text_.size() || text_[i_] != '"') return std::unexpected(Error{e.pos, "unterminated string"});
      advance();
      return e;
    }
    while (i_ < text_.size()) {
      char d = text_[i_];
      if (d == ' ' || d == '\t' || d == '\n' || d == '\r' || d == '(' || d == ')' || d == '[' || d == ']' || d == ';' ||
          d == '"')
        break;
      e.text += d;
      advance();
    }
    return e;
  }

  std::string_view text_;
  size_t i_ = 0;
  Pos pos_;
};

std::optional<Literal> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  int64_t i = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (ec == std::errc() && p == s.data() + s.size()) return Literal(i);
  float f = 0;
  auto [q, ec2] = std::from_chars(s.data(), s.data() + s.size(), f);
  if (ec2 == std::errc() && q == s.data() + s.size()) return Literal(f);
  return std::nullopt;
}

bool is_var(const Sx& e) { return e.kind == Sx::Kind::Atom && e.text.size() > 1 && e.text[0] == '?'; }

std::string_view kind_name(ir::AttrKind k) { return ir::attr_kind_name(k); }

std::string_view var_kind_name(VarKind k) {
  switch (k) {
    case VarKind::Tensor: return "a tensor";
    case VarKind::Attr: return "an attribute value";
    case VarKind::Rest: return "an attribute set (:*)";
    case VarKind::Computed: return "a computed value (:let)";
  }
  return "?";
}

class RuleBuilder {
 public:
  RuleBuilder(const Sx& form, const std::string& file) : form_(form), file_(file) {}

  std::expected<std::vector<Rule>, Error> build() {
    const auto& items = form_.items;
    if (items.empty() || !items[0].is_atom("rule"))
      return std::unexpected(Error{form_.pos, "expected (rule NAME LHS => RHS ...)"});
    if (items.size() < 2 || items[1].kind != Sx::Kind::Atom || is_var(items[1]) || items[1].text.empty())
      return std::unexpected(Error{items.size() < 2 ? form_.pos : items[1].pos, "expected a rule name after 'rule'"});
    name_ = items[1].text;
    size_t arrow = 0;
    for (size_t i = 2; i < items.size(); ++i)
      if (items[i].is_atom("=>") || items[i].is_atom("<=>")) {
        arrow = i;
        break;
      }
    if (arrow == 0) return std::unexpected(Error{form_.pos, fmt::format("rule '{}' has no '=>' or '<=>'", name_)});
    bool both = items[arrow].is_atom("<=>");
    size_t end = arrow + 1;
    while (end < items.size() && !(items[end].kind == Sx::Kind::Atom && items[end].text.starts_with(':'))) ++end;

    // Sides.
    auto lhs = side(2, arrow, true);
    if (!lhs) return std::unexpected(lhs.error());
    if (end == arrow + 1) return std::unexpected(Error{items[arrow].pos, "expected a right side after the arrow"});
    // Options first: :let variables are bound before the right side is read.
    for (size_t i = end; i < items.size(); i += 2) {
      const Sx& key = items[i];
      if (key.kind != Sx::Kind::Atom || !key.text.starts_with(':'))
        return std::unexpected(Error{key.pos, "expected an option (:when, :let, :axioms or :ruleset)"});
      if (i + 1 >= items.size())
        return std::unexpected(Error{key.pos, fmt::format("option {} has no value", key.text)});
      const Sx& val = items[i + 1];
      std::optional<Error> err;
      if (key.text == ":when")
        err = read_conditions(val);
      else if (key.text == ":let")
        err = read_lets(val);
      else if (key.text == ":axioms")
        err = read_axioms(val);
      else if (key.text == ":dynamics")
        err = read_dynamics(val);
      else if (key.text == ":ruleset")
        err = read_ruleset(val);
      else
        return std::unexpected(
            Error{key.pos, fmt::format("unknown option '{}' (expected :when, :let, :axioms or :ruleset)", key.text)});
      if (err) return std::unexpected(*err);
    }
    auto rhs = side(arrow + 1, end, false);
    if (!rhs) return std::unexpected(rhs.error());
    if (lhs->size() != rhs->size() || (lhs->size() > 1 && !same_roots(*lhs, *rhs)))
      return std::unexpected(Error{items[arrow].pos, "the two sides must name the same roots"});
    for (auto& [root, pat] : *lhs)
      if (root.empty() && pat.kind != Pat::Kind::Op)
        return std::unexpected(Error{pat.pos, "the left side must be an operation, not a variable or a literal"});

    if (auto e = check_pruned_conditions()) return std::unexpected(*e);
    body_.lhs = std::move(*lhs);
    body_.rhs = std::move(*rhs);
    body_.vars = vars_;
    std::vector<Rule> out;
    out.push_back(make_rule(name_, body_));
    if (both) {
      // The reverse: the right side must bind everything the left uses, and
      // may not compute anything.
      if (!body_.lets.empty())
        return std::unexpected(
            Error{items[arrow].pos, "a <=> rule cannot use :let (its reverse could not compute it)"});
      RuleBody rev = body_;
      std::swap(rev.lhs, rev.rhs);
      for (auto& [root, pat] : rev.lhs)
        if (root.empty() && pat.kind != Pat::Kind::Op)
          return std::unexpected(Error{pat.pos, "the right side of a <=> rule must be an operation"});
      std::set<std::string> bound;
      for (auto& [root, pat] : rev.lhs) collect(pat, bound);
      for (auto& [root, pat] : rev.rhs) {
        if (auto e = check_bound(pat, bound, "right side of the reverse")) return std::unexpected(*e);
      }
      for (const Cond& c : rev.conds)
        for (const Arg& a : c.args)
          if (a.is_var && !bound.count(a.var))
            return std::unexpected(Error{a.pos, fmt::format("variable {} of a condition is not bound by the right side "
                                                            "(needed by the reverse of this <=> rule)",
                                                            a.var)});
      out.push_back(make_rule(name_ + "-rev", rev));
    }
    return out;
  }

 private:
  Rule make_rule(std::string name, const RuleBody& body) {
    Rule r;
    r.name = std::move(name);
    r.file = file_;
    r.line = form_.pos.line;
    r.multi = body.lhs.size() > 1;
    r.kind = stated_kind_ ? *stated_kind_ : kind_of(body);
    r.body = std::make_shared<const RuleBody>(body);
    return r;
  }

  std::optional<Error> read_ruleset(const Sx& val) {
    std::optional<RuleKind> k;
    if (val.kind == Sx::Kind::Atom) k = rule_kind_from_name(val.text);
    if (!k) return Error{val.pos, ":ruleset takes simplify, explore, permute or merge"};
    stated_kind_ = k;
    return std::nullopt;
  }

  static bool same_roots(const std::vector<std::pair<std::string, Pat>>& a,
                         const std::vector<std::pair<std::string, Pat>>& b) {
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].first != b[i].first) return false;
    return true;
  }

  // One side: a single pattern, or `?root = PAT` pairs.
  std::expected<std::vector<std::pair<std::string, Pat>>, Error> side(size_t first, size_t last, bool left) {
    const auto& items = form_.items;
    std::vector<std::pair<std::string, Pat>> out;
    if (first == last)
      return std::unexpected(Error{items[first].pos, left ? "expected a left side" : "expected a right side"});
    if (last - first == 1) {
      auto p = pattern(items[first], left);
      if (!p) return std::unexpected(p.error());
      out.emplace_back("", std::move(*p));
      return out;
    }
    for (size_t i = first; i < last; i += 3) {
      if (!is_var(items[i]) || i + 1 >= last || !items[i + 1].is_atom("="))
        return std::unexpected(
            Error{items[i].pos, "expected one pattern, or '?root = PATTERN' for each root of a multi-pattern"});
      if (i + 2 >= last) return std::unexpected(Error{items[i + 1].pos, "expected a pattern after '='"});
      const std::string& root = items[i].text;
      if (left) {
        if (auto e = declare(root, VarKind::Tensor, items[i].pos)) return std::unexpected(*e);
      } else if (!vars_.count(root)) {
        return std::unexpected(Error{items[i].pos, fmt::format("root {} is not a root of the left side", root)});
      }
      auto p = pattern(items[i + 2], left);
      if (!p) return std::unexpected(p.error());
      if (p->kind != Pat::Kind::Op)
        return std::unexpected(Error{items[i + 2].pos, "a root's pattern must be an operation"});
      out.emplace_back(root, std::move(*p));
    }
    return out;
  }

  std::optional<Error> declare(const std::string& var, VarKind kind, Pos pos) {
    auto [it, fresh] = vars_.emplace(var, kind);
    if (!fresh && it->second != kind)
      return Error{pos, fmt::format("{} is {} here but {} elsewhere in the rule", var, var_kind_name(kind),
                                    var_kind_name(it->second))};
    return std::nullopt;
  }

  // Uses a variable on the right side (or in a condition): it must be bound.
  std::optional<Error> use(const std::string& var, Pos pos, std::initializer_list<VarKind> allowed,
                           std::string_view what) {
    auto it = vars_.find(var);
    if (it == vars_.end()) return Error{pos, fmt::format("variable {} {} is not bound by the left side", var, what)};
    if (std::find(allowed.begin(), allowed.end(), it->second) == allowed.end())
      return Error{pos, fmt::format("{} is {}, which cannot be used here", var, var_kind_name(it->second))};
    return std::nullopt;
  }

  std::optional<Literal> literal(const Sx& e) {
    if (e.kind == Sx::Kind::String) return Literal(e.text);
    if (e.kind == Sx::Kind::Atom) return number(e.text);
    if (e.kind == Sx::Kind::Bracket) {
      std::vector<int64_t> is;
      std::vector<float> fs;
      bool any_float = false;
      for (const Sx& x : e.items) {
        auto n = x.kind == Sx::Kind::Atom ? number(x.text) : std::nullopt;
        if (!n) return std::nullopt;
        if (auto* i = std::get_if<int64_t>(&*n)) {
          is.push_back(*i);
          fs.push_back(static_cast<float>(*i));
        } else {
          any_float = true;
          fs.push_back(std::get<float>(*n));
        }
      }
      if (any_float) return Literal(fs);
      return Literal(is);
    }
    return std::nullopt;
  }

  std::expected<Pat, Error> pattern(const Sx& e, bool left) {
    Pat p;
    p.pos = e.pos;
    if (is_var(e)) {
      p.kind = Pat::Kind::Var;
      p.var = e.text;
      if (left) {
        if (auto err = declare(e.text, VarKind::Tensor, e.pos)) return std::unexpected(*err);
      } else if (auto err =
                     use(e.text, e.pos, {VarKind::Tensor, VarKind::Attr, VarKind::Computed}, "on the right side")) {
        return std::unexpected(*err);
      }
      return p;
    }
    if (e.kind != Sx::Kind::List) {
      auto lit = literal(e);
      if (!lit || std::holds_alternative<std::string>(*lit))
        return std::unexpected(Error{e.pos, fmt::format("expected a pattern, found '{}'", e.text)});
      p.kind = Pat::Kind::Literal;
      p.literal = *lit;
      return p;
    }
    if (e.items.empty() || e.items[0].kind != Sx::Kind::Atom)
      return std::unexpected(Error{e.pos, "expected an operation name after '('"});
    const Sx& head = e.items[0];
    auto op = ir::op_from_name(head.text);
    if (!op) return std::unexpected(Error{head.pos, fmt::format("unknown op '{}'", head.text)});
    p.kind = Pat::Kind::Op;
    p.op = *op;
    const ir::OpInfo& info = ir::op_info(*op);
    std::set<std::string> seen;
    for (size_t i = 1; i < e.items.size(); ++i) {
      const Sx& it = e.items[i];
      if (it.kind == Sx::Kind::Atom && it.text.size() > 1 && it.text[0] == ':') {
        std::string name = it.text.substr(1);
        if (i + 1 >= e.items.size())
          return std::unexpected(Error{it.pos, fmt::format("attribute :{} has no value", name)});
        const Sx& val = e.items[++i];
        if (!seen.insert(name).second)
          return std::unexpected(Error{it.pos, fmt::format("attribute :{} is given twice", name)});
        if (name == "out" || name == "nout") {
          auto n = val.kind == Sx::Kind::Atom ? number(val.text) : std::nullopt;
          if (!n || !std::holds_alternative<int64_t>(*n) || std::get<int64_t>(*n) < 0)
            return std::unexpected(Error{val.pos, fmt::format(":{} takes a non-negative integer", name)});
          int v = static_cast<int>(std::get<int64_t>(*n));
          if (name == "out")
            p.out = v;
          else
            p.nout = v;
          continue;
        }
        AttrPat a;
        a.name = name;
        a.pos = it.pos;
        const ir::AttrSpec* spec = nullptr;
        if (name != "*") {
          for (const auto& s : info.attrs)
            if (s.name == name) spec = &s;
          if (!spec) {
            std::vector<std::string_view> names;
            for (const auto& s : info.attrs) names.push_back(s.name);
            return std::unexpected(
                Error{it.pos, fmt::format("unknown attribute '{}' of {} ({})", name, info.name,
                                          names.empty() ? std::string("it has none")
                                                        : fmt::format("attributes: {}", fmt::join(names, ", ")))});
          }
        }
        if (is_var(val)) {
          a.is_var = true;
          a.var = val.text;
          VarKind k = name == "*" ? VarKind::Rest : VarKind::Attr;
          if (left) {
            if (auto err = declare(val.text, k, val.pos)) return std::unexpected(*err);
          } else if (name == "*") {
            if (auto err = use(val.text, val.pos, {VarKind::Rest}, "on the right side")) return std::unexpected(*err);
          } else if (auto err = use(val.text, val.pos, {VarKind::Attr, VarKind::Computed}, "on the right side")) {
            return std::unexpected(*err);
          }
        } else {
          if (name == "*") return std::unexpected(Error{val.pos, ":* takes a variable"});
          auto lit = literal(val);
          if (!lit) return std::unexpected(Error{val.pos, fmt::format("expected a value for :{}", name)});
          ir::AttrKind want = spec->kind;
          ir::AttrKind got = ir::attr_kind(*lit);
          if (want == ir::AttrKind::Float && got == ir::AttrKind::Int) {
            *lit = Literal(static_cast<float>(std::get<int64_t>(*lit)));
            got = want;
          }
          if (want == ir::AttrKind::Floats && got == ir::AttrKind::Ints) {
            std::vector<float> f;
            for (int64_t x : std::get<std::vector<int64_t>>(*lit)) f.push_back(static_cast<float>(x));
            *lit = Literal(f);
            got = want;
          }
          if (want == ir::AttrKind::Ints && got == ir::AttrKind::Floats && std::get<std::vector<float>>(*lit).empty()) {
            *lit = Literal(std::vector<int64_t>{});
            got = want;
          }
          if (got != want)
            return std::unexpected(Error{val.pos, fmt::format("attribute '{}' of {} must be {}, got {}", name,
                                                              info.name, kind_name(want), kind_name(got))});
          a.literal = *lit;
        }
        p.attrs.push_back(std::move(a));
        continue;
      }
      auto kid = pattern(it, left);
      if (!kid) return kid;
      p.kids.push_back(std::move(*kid));
    }
    int n = static_cast<int>(p.kids.size());
    if (n < info.min_inputs || (info.max_inputs >= 0 && n > info.max_inputs)) {
      std::string want = info.max_inputs < 0 ? fmt::format("at least {} inputs", info.min_inputs)
                         : info.min_inputs == info.max_inputs
                             ? fmt::format("{} input{}", info.min_inputs, info.min_inputs == 1 ? "" : "s")
                             : fmt::format("{} to {} inputs", info.min_inputs, info.max_inputs);
      return std::unexpected(Error{head.pos, fmt::format("{} takes {}, got {}", info.name, want, n)});
    }
    int max_out = info.max_outputs < 0 ? 1 << 15 : info.max_outputs;
    if (p.out >= std::max(max_out, p.nout.value_or(1)) ||
        (p.nout && (*p.nout < info.min_outputs || *p.nout > max_out)) || (p.nout && p.out >= *p.nout))
      return std::unexpected(Error{
          head.pos, fmt::format("{} has no result {} (of {})", info.name, p.out, p.nout.value_or(info.max_outputs))});
    if (!left && info.min_outputs > 1 && !p.nout)
      return std::unexpected(
          Error{head.pos, fmt::format("{} on the right side needs :nout (how many results)", info.name)});
    return p;
  }

  std::expected<Arg, Error> arg(const Sx& e, bool allow_literal = true) {
    Arg a;
    a.pos = e.pos;
    if (is_var(e)) {
      a.is_var = true;
      a.var = e.text;
      if (!vars_.count(e.text))
        return std::unexpected(Error{e.pos, fmt::format("variable {} is not bound by the left side", e.text)});
      return a;
    }
    auto lit = allow_literal ? literal(e) : std::nullopt;
    if (!lit) return std::unexpected(Error{e.pos, "expected a variable or a literal"});
    a.literal = *lit;
    return a;
  }

  std::optional<Error> check_args(std::string_view what, std::string_view name, std::string_view kinds,
                                  const std::vector<Arg>& args, Pos pos) {
    if (args.size() != kinds.size())
      return Error{pos, fmt::format("{} '{}' takes {} argument{}, got {}", what, name, kinds.size(),
                                    kinds.size() == 1 ? "" : "s", args.size())};
    for (size_t i = 0; i < args.size(); ++i) {
      const Arg& a = args[i];
      bool tensor = a.is_var && vars_.at(a.var) == VarKind::Tensor;
      if (kinds[i] == 'T' && !tensor)
        return Error{a.pos, fmt::format("argument {} of {} '{}' must be a tensor variable", i + 1, what, name)};
      if (kinds[i] == 'V' && (tensor || (a.is_var && vars_.at(a.var) == VarKind::Rest)))
        return Error{a.pos,
                     fmt::format("argument {} of {} '{}' must be an attribute value or a literal", i + 1, what, name)};
    }
    return std::nullopt;
  }

  std::optional<Error> read_conditions(const Sx& val) {
    if (val.kind != Sx::Kind::List) return Error{val.pos, ":when takes a list of conditions"};
    for (const Sx& c : val.items) {
      if (c.kind != Sx::Kind::List || c.items.empty() || c.items[0].kind != Sx::Kind::Atom)
        return Error{c.pos, "expected a condition (NAME ARG...)"};
      const CondDef* def = find_condition(c.items[0].text);
      if (!def) return Error{c.items[0].pos, fmt::format("unknown condition '{}'", c.items[0].text)};
      Cond cond{c.items[0].text, {}, c.pos};
      for (size_t i = 1; i < c.items.size(); ++i) {
        auto a = arg(c.items[i]);
        if (!a) return a.error();
        cond.args.push_back(std::move(*a));
      }
      if (auto e = check_args("condition", def->name, def->args, cond.args, c.pos)) return e;
      body_.conds.push_back(std::move(cond));
    }
    return std::nullopt;
  }

  std::optional<Error> read_lets(const Sx& val) {
    if (val.kind != Sx::Kind::List) return Error{val.pos, ":let takes a list of (?var (FUNCTION ARG...))"};
    for (const Sx& b : val.items) {
      if (b.kind != Sx::Kind::List || b.items.size() != 2 || !is_var(b.items[0]) || b.items[1].kind != Sx::Kind::List ||
          b.items[1].items.empty() || b.items[1].items[0].kind != Sx::Kind::Atom)
        return Error{b.pos, "expected (?var (FUNCTION ARG...))"};
      const Sx& call = b.items[1];
      const LetDef* def = find_let(call.items[0].text);
      if (!def) return Error{call.items[0].pos, fmt::format("unknown :let function '{}'", call.items[0].text)};
      Let let{b.items[0].text, def->name.data(), {}, b.pos};
      let.fn = std::string(def->name);
      for (size_t i = 1; i < call.items.size(); ++i) {
        auto a = arg(call.items[i]);
        if (!a) return a.error();
        let.args.push_back(std::move(*a));
      }
      if (auto e = check_args("function", def->name, def->args, let.args, call.pos)) return e;
      if (vars_.count(let.var)) return Error{b.items[0].pos, fmt::format("{} is already bound", let.var)};
      vars_.emplace(let.var, VarKind::Computed);
      body_.lets.push_back(std::move(let));
    }
    return std::nullopt;
  }

  std::optional<Error> read_axioms(const Sx& val) {
    static const std::set<std::string> known{"exp-add",  "exp-pos",     "exp-sum", "sqrt-sq",
                                             "sqrt-pos", "sigmoid-def", "tanh-def"};
    if (val.kind != Sx::Kind::List) return Error{val.pos, ":axioms takes a list of axiom names"};
    for (const Sx& a : val.items) {
      if (a.kind != Sx::Kind::Atom || !known.count(a.text))
        return Error{
            a.pos,
            fmt::format(
                "unknown axiom '{}' (known: exp-add, exp-pos, exp-sum, sqrt-sq, sqrt-pos, sigmoid-def, tanh-def)",
                a.text)};
      body_.axioms.push_back(a.text);
    }
    return std::nullopt;
  }

  // The run modes a spiking rule claims (docs/rules.md).
  std::optional<Error> read_dynamics(const Sx& val) {
    static const std::set<std::string> known{"euler", "exact", "zero", "subtract"};
    if (val.kind != Sx::Kind::List) return Error{val.pos, ":dynamics takes a list of modes"};
    for (const Sx& a : val.items) {
      if (a.kind != Sx::Kind::Atom || !known.count(a.text))
        return Error{a.pos, fmt::format("unknown mode '{}' (known: euler, exact, zero, subtract)", a.text)};
      body_.dynamics.push_back(a.text);
    }
    return std::nullopt;
  }

  // Verification assumes `pruned-zero` and `pruned-nonneg` of the neurons
  // that `kept-neurons` prunes (the filters `live-filters` leaves out), while
  // the optimizer learns which those are from the values the let reads: so
  // each tensor the conditions name must be one such a let checks (zero:
  // kept-neurons' first three arguments or live-filters' one, >= 0:
  // kept-neurons' fourth), or a proved rule could prune where its
  // assumption fails.
  std::optional<Error> check_pruned_conditions() const {
    for (const Cond& c : body_.conds) {
      if (c.name != "pruned-zero" && c.name != "pruned-nonneg") continue;
      bool read = false;
      for (const Let& l : body_.lets) {
        if (l.fn == "kept-neurons")
          for (size_t i = 0; i < l.args.size(); ++i)
            read = read || ((c.name == "pruned-zero") == (i < 3) && l.args[i].is_var && l.args[i].var == c.args[0].var);
        if (l.fn == "live-filters" && c.name == "pruned-zero")
          read = read || (!l.args.empty() && l.args[0].is_var && l.args[0].var == c.args[0].var);
      }
      if (!read)
        return Error{c.pos,
                     fmt::format("{} {}: no kept-neurons or live-filters of this rule checks it ({})", c.name, c.args[0].var,
                                 c.name == "pruned-zero" ? "one of kept-neurons' first three arguments, or live-filters' argument"
                                                         : "kept-neurons' fourth argument")};
    }
    return std::nullopt;
  }

  void collect(const Pat& p, std::set<std::string>& bound) {
    if (p.kind == Pat::Kind::Var) bound.insert(p.var);
    for (const auto& a : p.attrs)
      if (a.is_var) bound.insert(a.var);
    for (const auto& k : p.kids) collect(k, bound);
  }

  std::optional<Error> check_bound(const Pat& p, const std::set<std::string>& bound, std::string_view where) {
    if (p.kind == Pat::Kind::Var && !bound.count(p.var))
      return Error{p.pos, fmt::format("variable {} on the {} is not bound by its left side", p.var, where)};
    for (const auto& a : p.attrs)
      if (a.is_var && !bound.count(a.var))
        return Error{a.pos, fmt::format("variable {} on the {} is not bound by its left side", a.var, where)};
    for (const auto& k : p.kids)
      if (auto e = check_bound(k, bound, where)) return e;
    return std::nullopt;
  }

  const Sx& form_;
  const std::string& file_;
  std::string name_;
  RuleBody body_;
  std::map<std::string, VarKind> vars_;
  std::optional<RuleKind> stated_kind_;  // :ruleset
};

std::string stem(const std::string& file) { return std::filesystem::path(file).stem().string(); }

std::unexpected<Diag> error_at(const std::string& file, Pos pos, std::string message) {
  return fail(std::move(message), fmt::format("{}:{}", pos.line, pos.col), file);
}

std::string source_text(std::string_view text, const Sx& form) {
  // The rule's text from its first line to the end of the form, whitespace collapsed.
  size_t line = 1, start = 0;
  for (size_t i = 0; i < text.size() && line < static_cast<size_t>(form.pos.line); ++i)
    if (text[i] == '\n') {
      ++line;
      start = i + 1;
    }
  start += static_cast<size_t>(form.pos.col - 1);
  int depth = 0;
  std::string out;
  bool space = false;
  for (size_t i = start; i < text.size(); ++i) {
    char c = text[i];
    if (c == ';') {
      while (i < text.size() && text[i] != '\n') ++i;
      space = true;
      continue;
    }
    if (c == '\n' || c == ' ' || c == '\t' || c == '\r') {
      space = true;
      continue;
    }
    if (space && !out.empty() && out.back() != '(' && c != ')') out += ' ';
    space = false;
    out += c;
    if (c == '(') ++depth;
    if (c == ')' && --depth == 0) break;
  }
  return out;
}

}  // namespace

Expected<RuleSet> parse_rules(std::string_view text, const std::string& file) {
  RuleSet set;
  Reader reader(text);
  auto forms = reader.read_all();
  if (!forms) return error_at(file, forms.error().pos, forms.error().message);
  for (const Sx& form : *forms) {
    if (form.kind != Sx::Kind::List) return error_at(file, form.pos, "expected (rule NAME LHS => RHS ...)");
    RuleBuilder b(form, file);
    auto rules = b.build();
    if (!rules) return error_at(file, rules.error().pos, rules.error().message);
    for (Rule& r : *rules) {
      if (const Rule* prev = set.find(r.name))
        return error_at(file, form.pos,
                        fmt::format("rule '{}' is defined twice (first at line {})", r.name, prev->line));
      r.family = stem(file);
      r.text = source_text(text, form);
      set.add(std::move(r));
    }
  }
  return set;
}

Expected<RuleSet> load_rules(const std::vector<std::filesystem::path>& files) {
  RuleSet all;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) return fail(fmt::format("cannot read rule file {}", f.string()));
    std::stringstream ss;
    ss << in.rdbuf();
    auto set = parse_rules(ss.str(), f.string());
    if (!set) return std::unexpected(set.error());
    for (const Rule& r : set->rules()) {
      if (const Rule* prev = all.find(r.name))
        return error_at(f.string(), Pos{static_cast<std::uint32_t>(r.line), 1},
                        fmt::format("rule '{}' is already defined at {}:{}", r.name, prev->file, prev->line));
      all.add(r);
    }
  }
  return all;
}

}  // namespace refinery::rules

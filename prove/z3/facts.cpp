#include "prove/z3/facts.h"

#include <cmath>
#include <optional>
#include <set>
#include <string>

namespace refinery::prove {

namespace {

// The functions a model may interpret freely, with their true values.
std::optional<double> true_value(const std::string& name, double x) {
  if (name == "exp") return std::exp(x);
  if (name == "log") return x > 0 ? std::optional<double>(std::log(x)) : std::nullopt;
  if (name == "sqrt") return x >= 0 ? std::optional<double>(std::sqrt(x)) : std::nullopt;
  if (name == "sigmoid") return 1 / (1 + std::exp(-x));
  if (name == "tanh") return std::tanh(x);
  if (name == "erf") return std::erf(x);
  if (name == "softplus") return std::log1p(std::exp(x));
  if (name == "sin") return std::sin(x);
  if (name == "cos") return std::cos(x);
  return std::nullopt;
}

// Each distinct argument of `name` once.
std::vector<z3::expr> arguments(const SymDomain& d, const std::string& name) {
  std::vector<z3::expr> out;
  std::set<unsigned> seen;
  auto it = d.applications.find(name);
  if (it == d.applications.end()) return out;
  for (const z3::expr& a : it->second)
    if (seen.insert(a.id()).second) out.push_back(a);
  return out;
}

bool is_app_of(const z3::expr& e, const char* name) {
  return e.is_app() && e.num_args() == 1 && e.decl().name().str() == name;
}

}  // namespace

bool has_free_functions(const SymDomain& d) {
  for (const auto& [name, apps] : d.applications)
    if (name != "inv" && !apps.empty()) return true;
  return false;
}

std::vector<z3::expr> function_facts(SymDomain& d) {
  std::vector<z3::expr> f;
  if (d.fp32()) return f;
  auto zero = d.num(0), one = d.num(1);
  for (const z3::expr& a : arguments(d, "exp")) {
    z3::expr e = d.apply("exp", a);
    f.push_back(e > zero);
    f.push_back(e >= one + a);
    if (is_app_of(a, "log")) f.push_back(z3::implies(a.arg(0) > zero, e == a.arg(0)));
  }
  for (const z3::expr& a : arguments(d, "log"))
    if (is_app_of(a, "exp")) f.push_back(d.apply("log", a) == a.arg(0));
  for (const z3::expr& a : arguments(d, "sqrt")) f.push_back(z3::implies(a >= zero, d.apply("sqrt", a) >= zero));
  for (const char* name : {"sigmoid"})
    for (const z3::expr& a : arguments(d, name)) {
      z3::expr e = d.apply(name, a);
      f.push_back(zero < e && e < one);
    }
  for (const char* name : {"tanh", "erf"})
    for (const z3::expr& a : arguments(d, name)) {
      z3::expr e = d.apply(name, a);
      f.push_back(-one < e && e < one);
    }
  for (const char* name : {"sin", "cos"})
    for (const z3::expr& a : arguments(d, name)) {
      z3::expr e = d.apply(name, a);
      f.push_back(-one <= e && e <= one);
    }
  for (const z3::expr& a : arguments(d, "softplus")) {
    z3::expr e = d.apply("softplus", a);
    f.push_back(e > zero && e > a);
  }
  // values at numerals: f(0) for the functions defined there, log(1) = 0
  for (const auto& [name, apps] : d.applications) {
    if (name == "inv") continue;
    for (const z3::expr& a : arguments(d, name)) {
      z3::expr s = a.simplify();
      if (!s.is_numeral() || s.is_algebraic()) continue;
      std::string v = s.get_decimal_string(0);
      if (v == "0" && (name == "exp" || name == "cos")) f.push_back(d.apply(name, a) == one);
      if (v == "0" && (name == "tanh" || name == "erf" || name == "sin" || name == "sqrt"))
        f.push_back(d.apply(name, a) == zero);
      if (v == "0" && name == "sigmoid") f.push_back(d.apply(name, a) == d.num(0.5));
      if (v == "1" && name == "log") f.push_back(d.apply(name, a) == zero);
    }
  }
  return f;
}

std::vector<z3::expr> function_laws(SymDomain& d) {
  std::vector<z3::expr> f;
  if (d.fp32()) return f;
  auto zero = d.num(0);
  for (const char* name : {"exp", "log", "sqrt", "sigmoid", "tanh", "erf", "softplus"}) {
    std::vector<z3::expr> args = arguments(d, name);
    if (args.size() > 48) args.erase(args.begin() + 48, args.end());  // quadratic: enough for the instances drawn
    for (size_t i = 0; i < args.size(); ++i)
      for (size_t j = 0; j < args.size(); ++j) {
        if (i == j) continue;
        const z3::expr &a = args[i], &b = args[j];
        z3::expr in_domain = std::string(name) == "log"    ? a > zero
                             : std::string(name) == "sqrt" ? a >= zero
                                                           : d.ctx().bool_val(true);
        f.push_back(z3::implies(in_domain && a < b, d.apply(name, a) < d.apply(name, b)));
      }
  }
  for (const z3::expr& a : arguments(d, "sqrt"))
    f.push_back(z3::implies(a >= zero, d.apply("sqrt", a) * d.apply("sqrt", a) == a));
  return f;
}

std::vector<z3::expr> function_pins(SymDomain& d, const z3::model& m) {
  std::vector<z3::expr> f;
  if (d.fp32()) return f;
  for (const auto& [name, apps] : d.applications) {
    for (const z3::expr& a : arguments(d, name)) {
      z3::expr at = m.eval(a, true);
      if (!at.is_numeral() || at.is_algebraic()) continue;
      auto y = true_value(name, d.exact_value(m, a));
      if (!y || !std::isfinite(*y) || std::abs(*y) > 1e15) continue;
      double e = 1e-9 * (1 + std::abs(*y));
      z3::expr v = d.apply(name, a);
      f.push_back(z3::implies(a == at, d.num(*y - e) <= v && v <= d.num(*y + e)));
    }
  }
  return f;
}

}  // namespace refinery::prove

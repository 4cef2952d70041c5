// Discovery experiments (docs/discovery.md, "Experiments"), printed as tables:
//   rediscover [--dir D] [FAMILY...]  each hand family of rules/lib held out: discovery
//                           over its vocabulary with the rest of the library
//                           as --against, then each of the family's rules
//                           checked: derived by the rest alone, by the rest
//                           plus what was discovered, missed, out of scope
//   scaling [MAX_SIZE]      candidates, proved, kept and seconds as
//                           --max-size grows over one vocabulary
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "discover/discover.h"
#include "rules/rules.h"

using namespace refinery;

namespace {

struct Family {
  std::string name;
  std::vector<std::string> ops;
  int vars, max_size;
  std::vector<float> constants;
};

// The vocabularies: the family's own ops that discovery can enumerate (no
// integer inputs), at a size that holds most of its rules' sides.
const std::vector<Family> kFamilies = {
    {"elementwise", {"add", "sub", "mul", "div", "neg", "reciprocal", "max", "min", "abs"}, 3, 2, {0, 1, -1, 2}},
    {"activations", {"relu", "neg", "abs", "max", "min", "sub", "mul", "sigmoid", "tanh", "identity"}, 2, 2, {0, 1, 2}},
    {"layout", {"(transpose :perm [1 0])", "relu", "neg", "exp", "abs", "add", "mul"}, 2, 3, {2}},
};

discover::DiscoverOptions options_for(const Family& f) {
  discover::DiscoverOptions o;
  auto ops = discover::parse_ops(f.ops);
  if (!ops) {
    fmt::print(stderr, "{}\n", ops.error().str());
    std::exit(2);
  }
  o.ops = *ops;
  o.variables = f.vars;
  o.max_size = f.max_size;
  o.constants = f.constants;
  o.time_limit_s = 600;
  return o;
}

// The discovered rules of a family are kept as DIR/FAMILY.rules; an
// existing file is read instead of discovering again (its run's seconds are
// in its header).
int rediscover(std::vector<std::string> names) {
  std::string dir = ".";
  if (names.size() >= 2 && names[0] == "--dir") {
    dir = names[1];
    names.erase(names.begin(), names.begin() + 2);
  }
  auto lib = rules::load_library();
  if (!lib) {
    fmt::print(stderr, "{}\n", lib.error().str());
    return 2;
  }
  fmt::print(
      "| family | vocabulary (vars, max size) | rules in scope | derived by the rest alone | derived with discovered | "
      "missed | discovered (kept) | seconds |\n|---|---|---|---|---|---|---|---|\n");
  std::string details;
  for (const Family& f : kFamilies) {
    if (!names.empty() && std::find(names.begin(), names.end(), f.name) == names.end()) continue;
    discover::DiscoverOptions o = options_for(f);
    rules::RuleSet rest, family;
    // A `<=>` rule counts once, by its forward rule (in an e-graph the two
    // directions join the same classes).
    for (const rules::Rule& r : lib->rules())
      if (r.family != f.name)
        rest.add(r);
      else if (!r.name.ends_with("-rev"))
        family.add(r);
    o.against = rest;
    std::filesystem::path file = std::filesystem::path(dir) / (f.name + ".rules");
    std::string secs = "reused";
    std::string table;
    if (!std::filesystem::exists(file)) {
      auto start = std::chrono::steady_clock::now();
      auto found = discover::discover(o);
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!found) {
        fmt::print(stderr, "{}\n", found.error().str());
        return 3;
      }
      secs = fmt::format("{:.0f}", s);
      table = found->table();
      std::ofstream(file) << found->rules_text(fmt::format("bench_discover rediscover {} ({} s)", f.name, secs));
    }
    auto kept = rules::load_rules({file});
    if (!kept) {
      fmt::print(stderr, "{}\n", kept.error().str());
      return 3;
    }
    rules::RuleSet with = rest;
    for (const rules::Rule& r : kept->rules()) with.add(r);
    auto alone = discover::coverage(o, rest, family);
    auto cov = discover::coverage(o, with, family);
    int scope = 0, by_rest = 0, derived = 0, missed = 0;
    details += fmt::format("\n{}: {} rules\n", f.name, family.rules().size());
    for (std::size_t i = 0; i < cov.size(); ++i) {
      bool in = cov[i].status != "out of scope";
      scope += in;
      by_rest += in && alone[i].status != "missed";
      derived += in && cov[i].status != "missed";
      missed += cov[i].status == "missed";
      details += fmt::format("  {:<28} rest alone: {:<14} with discovered: {:<14} {}\n", cov[i].rule, alone[i].status,
                             cov[i].status, cov[i].example);
    }
    std::size_t num_kept = 0;
    for (const rules::Rule& r : kept->rules()) num_kept += !r.name.ends_with("-rev");
    fmt::print("| {} | {} ({}, {}) | {} | {} | {} ({:.0f}%) | {} | {} | {} |\n", f.name, fmt::join(f.ops, " "), f.vars,
               f.max_size, scope, by_rest, derived, scope ? 100.0 * derived / scope : 0.0, missed, num_kept, secs);
    std::fflush(stdout);
    details += table;
  }
  fmt::print("{}", details);
  return 0;
}

int scaling(int max) {
  Family f{"scaling", {"add", "mul", "neg", "relu"}, 2, max, {0, 1}};
  fmt::print(
      "| max size | candidates | derivable before proof | proved | refuted or unproved | kept after minimisation | "
      "seconds |\n|---|---|---|---|---|---|---|\n");
  for (int size = 1; size <= max; ++size) {
    f.max_size = size;
    auto o = options_for(f);
    auto r = discover::discover(o);
    if (!r) return 3;
    fmt::print("| {} | {} | {} | {} | {} | {} | {:.1f} |\n", size, r->candidates, r->skipped_derivable,
               r->kept.size() + r->derived.size(), r->rejected.size(), r->kept.size(), r->seconds);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "rediscover") return rediscover({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "scaling") return scaling(args.size() > 1 ? std::atoi(args[1].c_str()) : 3);
  fmt::print(stderr, "usage: bench_discover rediscover [--dir DIR] [FAMILY...] | scaling [MAX_SIZE]\n");
  return 2;
}

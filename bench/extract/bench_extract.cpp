// Extractors compared on real e-graphs.
//
//   bench_extract run [--time-limit S] [--acyclicity cuts|levels|both] [--no-requirement-cuts] [--no-entry-choices]
//                     [--no-path-bound] [--path-work N] [--path-share F] [--layers-share F] [--condensed-share F]
//                     [--relaxation-only]
//                     [--cbc NAME=VALUE]... FILE.json...
//       reads each file back as a flat problem and runs tree greedy, DAG
//       greedy and the ILP, one line each: sizes before and after the
//       reduction, the costs (ms), the ILP's status, gap, rounds and CPU time.
//   bench_extract bound [--path-work N] FILE.json...
//       the path bound alone, as the ILP computes it first (on the reduced
//       problem, with the kids' searches, every round) but with no clock: greedy's cost,
//       the bound, the gap between them and the bound's CPU time.
//   bench_extract greedy [--single-moves N] FILE.json...
//       DAG greedy with group moves alone (the `greedy ms` of run), and with
//       N rounds of single moves after them (default 3: kGreedyWithMoves,
//       as `refinery optimize` and the ILP's incumbent run it): each one's
//       cost (ms) and CPU time.
//   bench_extract reduced [--root N] FILE.json OUT.json
//       writes the problem the ILP is given (after the reduction) as
//       extraction-gym JSON: reduced class c is eclass "c", its candidate i
//       node "c.i", a child "k.0" for class k; "fixed_cost" (seconds) is what
//       the reduction folded away, "greedy_choice" greedy's answer on the
//       reduced problem (its classes written).
//       With --root, only what reduced class N (eclass "N" of the whole
//       file) reaches, N the root: a sub-problem to solve exactly elsewhere
//       (exact_cbc.py).
// The files come from `refinery optimize --egraph` (`refinery batch
// --egraphs` over a zoo: run_zoo.sh), each e-node priced by the target's
// cost model (seconds).
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <stdexcept>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "extract/greedy.h"
#include "extract/ilp.h"
#include "extract/problem.h"
#include "extract/reduce.h"

namespace {

using namespace refinery;

int usage() {
  fmt::print(stderr,
             "usage: bench_extract run [--time-limit S] [--acyclicity cuts|levels|both] [--no-requirement-cuts] "
             "[--no-entry-choices] "
             "[--no-path-bound] [--path-work N] [--path-share F] [--layers-share F] [--condensed-share F] "
             "[--relaxation-only] "
             "[--cbc NAME=VALUE]... "
             "[--window-share F] [--window-classes N] [--window-stride N] [--window-max N] [--window-nodes N] "
             "[--window-seconds S] FILE.json...\n"
             "       bench_extract bound [--path-work N] FILE.json...\n"
             "       bench_extract greedy [--single-moves N] FILE.json...\n"
             "       bench_extract reduced [--root N] FILE.json OUT.json\n");
  return 2;
}

// An extraction-gym file as a flat problem: one class per "eclass", a
// child "c.i" needs class c.
extract::Problem gym_problem(const nlohmann::json& j) {
  extract::Problem p;
  std::map<std::string, std::uint32_t> class_index;
  auto index = [&](const std::string& eclass) {
    auto [it, added] = class_index.try_emplace(eclass, static_cast<std::uint32_t>(class_index.size()));
    if (added) p.classes.emplace_back();
    return it->second;
  };
  std::map<std::string, std::string> class_of_node;
  for (const auto& [id, node] : j.at("nodes").items()) class_of_node[id] = node.at("eclass").get<std::string>();
  for (const auto& [id, node] : j.at("nodes").items()) {
    extract::Candidate cand{node.at("cost").get<double>(), {}};
    for (const auto& kid : node.at("children")) cand.kids.push_back(index(class_of_node.at(kid.get<std::string>())));
    p.classes[index(node.at("eclass").get<std::string>())].push_back(std::move(cand));
  }
  for (const auto& r : j.at("root_eclasses")) p.roots.push_back(index(r.get<std::string>()));
  return p;
}

// A file that cannot be read or is not such JSON: an error naming it (main
// exits 2).
extract::Problem read_gym(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot be read", file));
  try {
    return gym_problem(nlohmann::json::parse(in));
  } catch (const std::exception& e) {  // not JSON, a field missing or of another type, an unknown child
    throw std::runtime_error(fmt::format("{}: not extraction-gym JSON: {}", file, e.what()));
  }
}

double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int run(const std::vector<std::string>& files, const std::string& acyclicity, const extract::IlpOptions& base) {
  fmt::print("{:<28} {:>6} {:>6} {:>6} {:>6} {:>10} {:>10} {:>10} {:>7} {:>11} {:>8} {:>7} {:>6} {:>7}\n", "file",
             "cls", "cands", "r.cls", "r.cand", "tree ms", "greedy ms", "ilp ms", "ilp-%", "status", "gap %", "rounds",
             "cuts", "cpu s");
  for (const std::string& file : files) {
    extract::Problem p = read_gym(file);
    double tree = extract::dag_cost(p, extract::extract_greedy_tree(p));
    double t0 = cpu_now();
    double greedy = extract::dag_cost(p, extract::extract_greedy_dag(p).solution);
    double greedy_cpu = cpu_now() - t0;
    std::vector<extract::Acyclicity> modes;
    if (acyclicity != "levels") modes.push_back(extract::Acyclicity::CycleCuts);
    if (acyclicity != "cuts") modes.push_back(extract::Acyclicity::Levels);
    for (auto mode : modes) {
      extract::IlpOptions options = base;
      options.acyclicity = mode;
      extract::IlpResult r = extract::extract_ilp(p, options);
      std::string name = file.substr(file.find_last_of('/') + 1);
      if (modes.size() > 1) name += mode == extract::Acyclicity::Levels ? " [levels]" : " [cuts]";
      bool valid = extract::check_solution(p, r.solution).empty();
      fmt::print(
          "{:<28} {:>6} {:>6} {:>6} {:>6} {:>10.5f} {:>10.5f} {:>10.5f} {:>7.3f} {:>11} {:>8.4f} {:>7} {:>6} "
          "{:>7.2f}{}\n",
          name, r.reduction.front().classes, r.reduction.front().candidates, r.reduction.back().classes,
          r.reduction.back().candidates, tree * 1e3, greedy * 1e3, r.cost * 1e3,
          greedy > 0 ? 100 * (greedy - r.cost) / greedy : 0.0, to_string(r.status), 100 * r.gap(), r.rounds, r.cuts,
          r.cpu_seconds, valid ? "" : "  INVALID");
      std::string steps;
      for (const auto& s : r.reduction) steps += fmt::format(" {} {}/{}", s.name, s.classes, s.candidates);
      fmt::print(
          "    reduction:{}; greedy {:.3f} s CPU; bound {:.6g} ms (condensed {:.6g} ms, path {:.6g} ms, layers {:.6g} "
          "ms){}\n",
          steps, greedy_cpu, r.bound * 1e3, r.condensed_bound * 1e3, r.path_bound * 1e3, r.layers_bound * 1e3,
          r.detail.empty() ? "" : "; " + r.detail);
    }
  }
  return 0;
}

int bound(const std::vector<std::string>& files, std::size_t path_work) {
  fmt::print("{:<36} {:>12} {:>12} {:>8} {:>7}\n", "file", "greedy ms", "path ms", "gap %", "cpu s");
  for (const std::string& file : files) {
    extract::Problem p = read_gym(file);
    const double greedy = extract::dag_cost(p, extract::extract_greedy_dag(p).solution);
    extract::Reduced red = extract::reduce(p, greedy);
    const double t0 = cpu_now();
    const extract::Problem& q = red.problem;
    double path = red.fixed_cost;
    if (!q.classes.empty()) path += extract::path_bounds(q.classes, q.roots, path_work).of_answer(q.roots);
    fmt::print("{:<36} {:>12.6g} {:>12.6g} {:>8.3f} {:>7.2f}\n", file.substr(file.find_last_of('/') + 1), greedy * 1e3,
               path * 1e3, greedy > 0 ? 100 * (greedy - path) / greedy : 0.0, cpu_now() - t0);
  }
  return 0;
}

int greedy(const std::vector<std::string>& files, std::size_t single_moves) {
  fmt::print("{:<36} {:>12} {:>7} {:>12} {:>7} {:>8}\n", "file", "greedy ms", "cpu s", "+single ms", "cpu s", "gain %");
  for (const std::string& file : files) {
    extract::Problem p = read_gym(file);
    double t0 = cpu_now();
    const double plain = extract::dag_cost(p, extract::extract_greedy_dag(p).solution);
    const double t1 = cpu_now();
    const double moved =
        extract::dag_cost(p, extract::extract_greedy_dag(p, {.single_move_rounds = single_moves}).solution);
    const double t2 = cpu_now();
    fmt::print("{:<36} {:>12.6g} {:>7.3f} {:>12.6g} {:>7.3f} {:>8.3f}\n", file.substr(file.find_last_of('/') + 1),
               plain * 1e3, t1 - t0, moved * 1e3, t2 - t1, plain > 0 ? 100 * (plain - moved) / plain : 0.0);
  }
  return 0;
}

// The reduced problem (or what its class `root` reaches) as extraction-gym
// JSON, with greedy's answer on it.
int reduced(const std::string& file, const std::string& out, long root) {
  extract::Problem p = read_gym(file);
  const double greedy = extract::dag_cost(p, extract::extract_greedy_dag(p).solution);
  extract::Reduced red = extract::reduce(p, greedy);
  const extract::Problem& q = red.problem;
  if (root >= static_cast<long>(q.classes.size()))
    throw std::runtime_error(fmt::format("{}: --root {}: the reduced problem has {} classes", file, root,
                                         q.classes.size()));
  std::vector<std::uint32_t> keep;  // the classes written, in the order found; each named by its reduced index
  std::vector<std::uint8_t> kept(q.classes.size(), 0);
  auto visit = [&](std::uint32_t c) {
    if (kept[c]) return;
    kept[c] = 1;
    keep.push_back(c);
  };
  if (root >= 0)
    visit(static_cast<std::uint32_t>(root));
  else
    for (std::uint32_t r : q.roots) visit(r);
  for (std::size_t k = 0; k < keep.size(); ++k)
    for (const auto& cand : q.classes[keep[k]])
      for (std::uint32_t kid : cand.kids) visit(kid);
  const extract::Solution greedy_reduced = extract::extract_greedy_dag(q).solution;
  nlohmann::json nodes = nlohmann::json::object(), roots = nlohmann::json::array(), choice = nlohmann::json::object();
  for (std::uint32_t c : keep) {
    const auto& cands = q.classes[c];
    for (std::size_t i = 0; i < cands.size(); ++i) {
      nlohmann::json kids = nlohmann::json::array();
      for (std::uint32_t kid : cands[i].kids) kids.push_back(fmt::format("{}.0", kid));
      nodes[fmt::format("{}.{}", c, i)] = {
          {"op", "c"}, {"eclass", std::to_string(c)}, {"cost", cands[i].cost}, {"children", kids}};
    }
    if (greedy_reduced.choice[c] != extract::kUnchosen) choice[std::to_string(c)] = greedy_reduced.choice[c];
  }
  if (root >= 0)
    roots.push_back(std::to_string(root));
  else
    for (std::uint32_t r : q.roots) roots.push_back(std::to_string(r));
  nlohmann::json j = {{"nodes", nodes},
                      {"root_eclasses", roots},
                      {"fixed_cost", root >= 0 ? 0.0 : red.fixed_cost},
                      {"greedy_choice", choice}};
  std::ofstream f(out);
  if (!(f << j.dump() << '\n')) throw std::runtime_error(fmt::format("{}: cannot be written", out));
  fmt::print("{}: {} classes, {} candidates\n", out, keep.size(), nodes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage();
  std::string acyclicity = "cuts";
  extract::IlpOptions options;
  std::vector<std::string> rest;
  long root = -1;
  std::size_t single_moves = extract::kGreedyWithMoves.single_move_rounds;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--time-limit" && i + 1 < args.size())
      options.time_limit_s = std::atof(args[++i].c_str());
    else if (args[i] == "--acyclicity" && i + 1 < args.size())
      acyclicity = args[++i];
    else if (args[i] == "--no-requirement-cuts")
      options.requirement_cuts = false;
    else if (args[i] == "--no-entry-choices")
      options.entry_choices = false;
    else if (args[i] == "--no-path-bound")
      options.path_bound = false;
    else if (args[i] == "--path-work" && i + 1 < args.size())
      options.path_work = static_cast<std::size_t>(std::atol(args[++i].c_str()));
    else if (args[i] == "--path-share" && i + 1 < args.size())
      options.path_share = std::atof(args[++i].c_str());
    else if (args[i] == "--layers-share" && i + 1 < args.size())
      options.layers_share = std::atof(args[++i].c_str());
    else if (args[i] == "--condensed-share" && i + 1 < args.size())
      options.condensed_share = std::atof(args[++i].c_str());
    else if (args[i] == "--window-share" && i + 1 < args.size())
      options.windows.share = std::atof(args[++i].c_str());
    else if (args[i] == "--window-classes" && i + 1 < args.size())
      options.windows.answer_classes = static_cast<std::size_t>(std::atol(args[++i].c_str()));
    else if (args[i] == "--window-stride" && i + 1 < args.size())
      options.windows.stride = static_cast<std::size_t>(std::atol(args[++i].c_str()));
    else if (args[i] == "--window-max" && i + 1 < args.size())
      options.windows.max_classes = static_cast<std::size_t>(std::atol(args[++i].c_str()));
    else if (args[i] == "--window-nodes" && i + 1 < args.size())
      options.windows.max_nodes = static_cast<std::size_t>(std::atol(args[++i].c_str()));
    else if (args[i] == "--window-seconds" && i + 1 < args.size())
      options.windows.seconds = std::atof(args[++i].c_str());
    else if (args[i] == "--single-moves" && i + 1 < args.size())
      single_moves = static_cast<std::size_t>(std::atol(args[++i].c_str()));
    else if (args[i] == "--root" && i + 1 < args.size())
      root = std::atol(args[++i].c_str());
    else if (args[i] == "--relaxation-only")
      options.relaxation_only = true;
    else if (args[i] == "--cbc" && i + 1 < args.size() && args[i + 1].find('=') != std::string::npos) {
      const std::string& kv = args[++i];
      options.cbc_parameters.emplace_back(kv.substr(0, kv.find('=')), kv.substr(kv.find('=') + 1));
    } else
      rest.push_back(args[i]);
  }
  try {
    if (args[0] == "run" && !rest.empty()) return run(rest, acyclicity, options);
    if (args[0] == "bound" && !rest.empty()) return bound(rest, options.path_work);
    if (args[0] == "greedy" && !rest.empty()) return greedy(rest, single_moves);
    if (args[0] == "reduced" && rest.size() == 2) return reduced(rest[0], rest[1], root);
  } catch (const std::exception& e) {  // a bad file (read_gym), or one whose nodes lack a field
    fmt::print(stderr, "bench_extract: {}\n", e.what());
    return 2;
  }
  return usage();
}

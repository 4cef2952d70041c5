// Runs ONNX's backend test suites (as shipped by Debian's libonnx-testdata)
// through the ONNX importer and the interpreter. Each test is PASS, FAIL or
// UNSUPPORTED; failures listed in the exceptions file (with a reason each)
// are expected, and an expected failure that passes is itself an error, so
// the list stays honest. Exit status 0 when nothing unexpected happened.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "frontends/onnx.h"
#include "ir/graph.h"
#include "runtime/interpreter.h"

namespace fs = std::filesystem;
using namespace refinery;

namespace {

const std::vector<std::string> kSuites{"node", "pytorch-converted", "pytorch-operator", "simple"};
constexpr double kRtol = 1e-3, kAtol = 1e-7;  // onnx/backend/test/runner

enum class Status { Pass, Fail, Unsupported };

struct Outcome {
  Status status = Status::Pass;
  std::string reason;
};

struct Options {
  fs::path data = "/usr/share/libonnx-testdata/data";
  fs::path exceptions;
  std::vector<std::string> suites = kSuites;
  std::string filter;  // substring of suite/test
  bool quiet = false;  // print only failures, unexpected results and totals
};

bool contains(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }

std::string shape_str(const std::vector<int64_t>& d) {
  return d.empty() ? std::string("scalar") : fmt::format("{}", fmt::join(d, "x"));
}

// First disagreement between an output and its expected value, or empty.
std::string compare(const ir::Tensor& got, const ir::Tensor& want) {
  if (got.dtype() != want.dtype())
    return fmt::format("dtype {} but expected {}", ir::dtype_name(got.dtype()), ir::dtype_name(want.dtype()));
  if (got.dims() != want.dims())
    return fmt::format("shape {} but expected {}", shape_str(got.dims()), shape_str(want.dims()));
  bool exact = !ir::is_float(want.dtype());
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (exact) {
      if (got.as_int(i) != want.as_int(i))
        return fmt::format("index {}: {} but expected {}", i, got.as_int(i), want.as_int(i));
      continue;
    }
    double g = got.as_double(i), w = want.as_double(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (std::isinf(w) && g == w) continue;
    if (!(std::fabs(g - w) <= kAtol + kRtol * std::fabs(w)))
      return fmt::format("index {}: {} but expected {}", i, g, w);
  }
  return {};
}

// numpy has no bfloat16: ONNX's test data stores bfloat16 tensors as their
// uint16 bit patterns. Read them back as the bfloat16 the model declares.
ir::Tensor bf16_from_bits(const ir::Tensor& t) {
  if (t.dtype() != ir::DType::u16) return t;
  std::vector<std::byte> bytes(t.bytes().begin(), t.bytes().end());
  return ir::Tensor(ir::DType::bf16, t.dims(), std::move(bytes));
}

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (int i = 0;; ++i) {
    fs::path p = dir / fmt::format("{}_{}.pb", prefix, i);
    if (!fs::exists(p)) break;
    out.push_back(p);
  }
  return out;
}

Outcome run_test(const fs::path& dir) {
  auto graph = frontends::import_onnx(dir / "model.onnx");
  if (!graph && contains(graph.error().message, "opset")) {
    // Older models (the pytorch-* and simple suites are opset 6 to 10) are
    // brought to opset 13 by ONNX's own version converter. When the converted
    // model is invalid, that is the converter's limit, not ours: unsupported.
    auto upgraded = frontends::import_onnx(dir / "model.onnx", {.upgrade_old_opset = true});
    if (!upgraded)
      return {Status::Unsupported,
              fmt::format("{}; converted to opset 13: {}", graph.error().message, upgraded.error().message)};
    graph = std::move(upgraded);
  }
  if (!graph) {
    const std::string msg = graph.error().str();
    // The model is outside what Refinery reads (opset, or a construct the
    // importer does not support): unsupported, not failed.
    if (contains(msg, "opset") || contains(msg, "not supported") || contains(msg, "unsupported") ||
        contains(msg, "ONNX type 8"))  // STRING: Refinery has no string tensors
      return {Status::Unsupported, fmt::format("import: {}", graph.error().message)};
    return {Status::Fail, fmt::format("import: {}", msg)};
  }
  if (auto ops = runtime::unsupported_ops(*graph); !ops.empty())
    return {Status::Unsupported, fmt::format("ops: {}", fmt::join(ops, ", "))};

  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().starts_with("test_data_set_")) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {Status::Fail, "no test_data_set_* folder"};

  for (const fs::path& set : sets) {
    std::string where = sets.size() > 1 ? set.filename().string() + ": " : "";
    std::vector<ir::Tensor> inputs, expected;
    for (const fs::path& p : numbered(set, "input")) {
      auto t = frontends::read_tensor_proto(p);
      if (!t) return {Status::Unsupported, fmt::format("{}input data: {}", where, t.error().message)};
      inputs.push_back(std::move(*t));
    }
    for (const fs::path& p : numbered(set, "output")) {
      auto t = frontends::read_tensor_proto(p);
      if (!t) return {Status::Unsupported, fmt::format("{}output data: {}", where, t.error().message)};
      expected.push_back(std::move(*t));
    }
    if (inputs.size() != graph->inputs().size())
      return {Status::Fail, fmt::format("{}the model takes {} inputs, the test gives {}", where, graph->inputs().size(),
                                        inputs.size())};
    for (size_t i = 0; i < inputs.size(); ++i)
      if (graph->value(graph->inputs()[i]).type.dtype == ir::DType::bf16) inputs[i] = bf16_from_bits(inputs[i]);
    auto outputs = runtime::run(*graph, inputs, {.threads = 1});
    if (!outputs) return {Status::Fail, fmt::format("{}run: {}", where, outputs.error().str())};
    if (outputs->size() != expected.size())
      return {Status::Fail, fmt::format("{}{} outputs, expected {}", where, outputs->size(), expected.size())};
    for (size_t i = 0; i < expected.size(); ++i) {
      if ((*outputs)[i].dtype() == ir::DType::bf16) expected[i] = bf16_from_bits(expected[i]);
      if (std::string why = compare((*outputs)[i], expected[i]); !why.empty())
        return {Status::Fail,
                fmt::format("{}output {} ('{}'): {}", where, i, graph->value(graph->outputs()[i]).name, why)};
    }
  }
  return {Status::Pass, {}};
}

// "suite/test  reason" lines; '#' starts a comment.
std::map<std::string, std::string> read_exceptions(const fs::path& file, bool& ok) {
  std::map<std::string, std::string> out;
  std::ifstream in(file);
  if (!in) {
    fmt::print(stderr, "conformance: cannot read {}\n", file.string());
    ok = false;
    return out;
  }
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream s(line);
    std::string name, reason;
    if (!(s >> name)) continue;
    std::getline(s, reason);
    reason.erase(0, reason.find_first_not_of(" \t"));
    if (reason.empty()) {
      fmt::print(stderr, "{}:{}: exception '{}' has no reason\n", file.string(), n, name);
      ok = false;
    }
    out[name] = reason;
  }
  return out;
}

int usage() {
  fmt::print(stderr,
             "usage: conformance [--data DIR] [--exceptions FILE] [--suite NAME]... [--filter TEXT] [--quiet]\n"
             "Runs ONNX's backend tests under DIR/{{node,pytorch-converted,pytorch-operator,simple}}.\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::vector<std::string> suites;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--quiet")
      opt.quiet = true;
    else if (a == "--data" && (v = next()))
      opt.data = v;
    else if (a == "--exceptions" && (v = next()))
      opt.exceptions = v;
    else if (a == "--suite" && (v = next()))
      suites.emplace_back(v);
    else if (a == "--filter" && (v = next()))
      opt.filter = v;
    else
      return usage();
  }
  if (!suites.empty()) opt.suites = suites;

  bool ok = true;
  std::map<std::string, std::string> exceptions;
  if (!opt.exceptions.empty()) exceptions = read_exceptions(opt.exceptions, ok);
  std::set<std::string> seen;

  struct Totals {
    int pass = 0, fail = 0, excepted = 0, unsupported = 0;
  };
  std::map<std::string, Totals> per_suite;
  Totals all;
  int unexpected = 0;
  auto start = std::chrono::steady_clock::now();
  for (const std::string& suite : opt.suites) {
    fs::path root = opt.data / suite;
    if (!fs::is_directory(root)) {
      fmt::print(stderr, "conformance: no suite at {}\n", root.string());
      return 2;
    }
    std::vector<fs::path> tests;
    for (const auto& e : fs::directory_iterator(root))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx")) tests.push_back(e.path());
    std::sort(tests.begin(), tests.end());
    Totals& t = per_suite[suite];
    for (const fs::path& dir : tests) {
      std::string name = suite + "/" + dir.filename().string();
      if (!opt.filter.empty() && !contains(name, opt.filter)) continue;
      seen.insert(name);
      Outcome o = run_test(dir);
      auto ex = exceptions.find(name);
      bool excepted = ex != exceptions.end();
      std::string line;
      switch (o.status) {
        case Status::Pass:
          ++t.pass;
          if (excepted) {
            ++unexpected;
            line = fmt::format("PASS {} (listed in the exceptions: remove it)", name);
          } else if (!opt.quiet) {
            line = fmt::format("PASS {}", name);
          }
          break;
        case Status::Fail:
          if (excepted) {
            ++t.excepted;
            if (!opt.quiet) line = fmt::format("FAIL {} {} (excepted: {})", name, o.reason, ex->second);
          } else {
            ++t.fail;
            ++unexpected;
            line = fmt::format("FAIL {} {}", name, o.reason);
          }
          break;
        case Status::Unsupported:
          ++t.unsupported;
          if (excepted) {
            ++unexpected;
            line = fmt::format("UNSUPPORTED {} {} (listed in the exceptions: remove it)", name, o.reason);
          } else if (!opt.quiet) {
            line = fmt::format("UNSUPPORTED {} {}", name, o.reason);
          }
          break;
      }
      if (!line.empty()) fmt::print("{}\n", line);
    }
    all.pass += t.pass, all.fail += t.fail, all.excepted += t.excepted, all.unsupported += t.unsupported;
  }
  if (opt.filter.empty() && opt.suites == kSuites)
    for (const auto& [name, reason] : exceptions)
      if (!seen.count(name)) {
        fmt::print("STALE {} is in the exceptions but is not a test\n", name);
        ++unexpected;
      }

  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("\n");
  for (const auto& [suite, t] : per_suite)
    fmt::print("{}: {} passed, {} failed, {} excepted, {} unsupported\n", suite, t.pass, t.fail, t.excepted,
               t.unsupported);
  fmt::print("conformance: {} passed, {} failed, {} excepted, {} unsupported ({:.1f} s)\n", all.pass, all.fail,
             all.excepted, all.unsupported, seconds);
  fmt::print("{} passed, {} failed\n", all.pass, unexpected);
  return ok && unexpected == 0 ? 0 : 1;
}

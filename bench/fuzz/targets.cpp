#include "bench/fuzz/targets.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <new>

#include "frontends/nir.h"
#include "frontends/nir_internal.h"
#include "frontends/onnx.h"
#include "ir/text.h"
#include "rules/rules.h"

namespace refinery::fuzz {
namespace {

namespace fs = std::filesystem;

// One folder per process for the files the readers take; removed at exit.
class Scratch {
 public:
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "refinery-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("refinery fuzz: mkdtemp");
      std::abort();
    }
    dir_ = pattern;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  // Writes `bytes` to NAME in the folder, after removing what an earlier
  // input left there (a sidecar, external data).
  fs::path write(const std::string& name, Bytes bytes) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec)) fs::remove_all(e.path(), ec);
    fs::path file = dir_ / name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::perror("refinery fuzz: cannot write the input file");
      std::abort();
    }
    return file;
  }

 private:
  fs::path dir_;
};

Scratch& scratch() {
  static Scratch s;
  return s;
}

Outcome from_diag(const Diag& diag) { return {diag.limitation ? Verdict::Limitation : Verdict::BadInput, diag.str()}; }

// The CLI's last guard (cli/main.cpp): bad_alloc is "out of memory", any
// other exception an internal error.
template <class F>
Outcome guarded(F&& read) {
  try {
    return read();
  } catch (const std::bad_alloc&) {
    return {Verdict::OutOfMemory, "out of memory"};
  } catch (const std::exception& e) {
    return {Verdict::InternalError, fmt::format("exception: {}", e.what())};
  } catch (...) {
    return {Verdict::InternalError, "exception of unknown type"};
  }
}

template <class T>
Outcome verdict_of(const Expected<T>& result) {
  return result ? Outcome{} : from_diag(result.error());
}

int abort_on_finding(const char* target, const Outcome& outcome) {
  if (outcome.verdict != Verdict::InternalError) return 0;
  std::fprintf(stderr, "refinery fuzz %s: internal error: %s\n", target, outcome.message.c_str());
  std::abort();
}

}  // namespace

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::Accepted: return "accepted";
    case Verdict::BadInput: return "bad input";
    case Verdict::Limitation: return "limitation";
    case Verdict::OutOfMemory: return "out of memory";
    case Verdict::InternalError: return "internal error";
  }
  return "?";
}

Outcome check_onnx(Bytes bytes) {
  return guarded([&] {
    fs::path file = scratch().write("model.onnx", bytes);
    std::vector<Diag> notes;
    return verdict_of(frontends::import_onnx(file, {.notes = &notes}));
  });
}

// The reader in this process, not import_nir's child (frontends/nir_internal.h):
// the fuzzer sees no coverage of a child. A crash or a hang inside libhdf5
// is therefore a finding here that `refinery` itself turns into an error.
Outcome check_nir(Bytes bytes) {
  return guarded([&] { return verdict_of(frontends::import_nir_named(scratch().write("model.nir", bytes))); });
}

Outcome check_ir_text(Bytes bytes) {
  return guarded([&]() -> Outcome {
    size_t nul = 0;
    while (nul < bytes.size() && bytes[nul] != 0) ++nul;
    fs::path file = scratch().write("model.ir", bytes.first(nul));
    if (nul < bytes.size()) {
      fs::path side = file;
      side += ".bin";
      std::ofstream out(side, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(bytes.data() + nul + 1),
                static_cast<std::streamsize>(bytes.size() - nul - 1));
    }
    auto graph = ir::read_ir_file(file);
    if (!graph) return from_diag(graph.error());
    // docs/ir.md: a graph prints and parses back to the identical graph.
    auto again = ir::parse_graph(ir::print_graph(*graph), file.string());
    if (!again)
      return {Verdict::InternalError, fmt::format("the printed graph does not parse: {}", again.error().str())};
    if (std::string diff = ir::graph_difference(*graph, *again); !diff.empty())
      return {Verdict::InternalError, fmt::format("the printed graph parses to another graph: {}", diff)};
    return {};
  });
}

Outcome check_rules(Bytes bytes) {
  return guarded([&]() -> Outcome {
    std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    auto set = rules::parse_rules(text, "fuzz.rules");
    if (!set) return from_diag(set.error());
    auto rewrites = set->rewrites();
    if (rewrites.size() != set->rules().size())
      return {Verdict::InternalError,
              fmt::format("{} rules compiled to {} rewrites", set->rules().size(), rewrites.size())};
    return {};
  });
}

const std::vector<Target>& targets() {
  static const std::vector<Target> all{
      {"onnx", check_onnx}, {"nir", check_nir}, {"ir_text", check_ir_text}, {"rules", check_rules}};
  return all;
}

const Target* find_target(std::string_view name) {
  for (const Target& t : targets())
    if (t.name == name) return &t;
  return nullptr;
}

int fuzz_onnx(const uint8_t* data, size_t size) { return abort_on_finding("onnx", check_onnx({data, size})); }
int fuzz_nir(const uint8_t* data, size_t size) { return abort_on_finding("nir", check_nir({data, size})); }
int fuzz_ir_text(const uint8_t* data, size_t size) { return abort_on_finding("ir_text", check_ir_text({data, size})); }
int fuzz_rules(const uint8_t* data, size_t size) { return abort_on_finding("rules", check_rules({data, size})); }

}  // namespace refinery::fuzz

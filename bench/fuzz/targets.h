// Fuzz entry points: each feeds bytes through one public reader of untrusted
// input the way the refinery CLI uses it, and sorts the outcome as the CLI
// would. A Diag is a clean error (exit 2, or 3 for Refinery's limitation) and
// so is std::bad_alloc ("out of memory"); any other exception is what the CLI
// reports as an internal error, and that, a crash or a sanitizer report is a
// finding. The libFuzzer executables (bench/fuzz/fuzz_main.cpp) and the
// regression test (tests/fuzz/) share these functions; see bench/fuzz/README.md.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace refinery::fuzz {

enum class Verdict {
  Accepted,       // the input was read (and, for .ir, printed back to the same graph)
  BadInput,       // a Diag: exit 2
  Limitation,     // a Diag marked as Refinery's limitation: exit 3
  OutOfMemory,    // std::bad_alloc: the CLI says "out of memory", exit 2
  InternalError,  // anything else: a finding
};

struct Outcome {
  Verdict verdict = Verdict::Accepted;
  std::string message;  // the Diag or the exception text
};

std::string_view to_string(Verdict verdict);

using Bytes = std::span<const uint8_t>;

// An ONNX model (the bytes are the model file), imported as `refinery` does:
// parse, subgraph and opset checks, node order, ONNX's checker, Refinery's
// shape inference.
Outcome check_onnx(Bytes bytes);
// A NIR file (HDF5), read by the NIR reader in this process (import_nir runs
// the same reader in a child process, whose coverage the fuzzer would not see).
Outcome check_nir(Bytes bytes);
// A .ir file: the text up to the first NUL byte; the bytes after it, when
// there is one, are the sidecar weights file (.ir.bin). An accepted graph must
// print and parse back to the identical graph.
Outcome check_ir_text(Bytes bytes);
// A .rules file: parsed, checked, and every rule compiled to a rewrite.
Outcome check_rules(Bytes bytes);

struct Target {
  std::string_view name;  // "onnx", "nir", "ir_text", "rules"
  Outcome (*check)(Bytes);
};
const std::vector<Target>& targets();
const Target* find_target(std::string_view name);

// The libFuzzer entry points: return 0 for every clean outcome and abort,
// printing the message, on an internal error.
int fuzz_onnx(const uint8_t* data, size_t size);
int fuzz_nir(const uint8_t* data, size_t size);
int fuzz_ir_text(const uint8_t* data, size_t size);
int fuzz_rules(const uint8_t* data, size_t size);

}  // namespace refinery::fuzz

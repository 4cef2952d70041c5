// fuzz_replay TARGET FILE...: runs files through a fuzz target's entry point
// without libFuzzer (any compiler) and prints each outcome; exits 1 when one
// is an internal error. For reproducing a finding in the normal build.
#include <fmt/format.h>

#include <fstream>
#include <iterator>

#include "bench/fuzz/targets.h"

int main(int argc, char** argv) {
  using namespace refinery::fuzz;
  const Target* target = argc >= 2 ? find_target(argv[1]) : nullptr;
  if (target == nullptr) {
    fmt::print(stderr, "usage: fuzz_replay onnx|nir|ir_text|rules FILE...\n");
    return 2;
  }
  int status = 0;
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      fmt::print(stderr, "fuzz_replay: cannot read {}\n", argv[i]);
      return 2;
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Outcome outcome = target->check({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
    fmt::print("{}: {}{}{}\n", argv[i], to_string(outcome.verdict), outcome.message.empty() ? "" : ": ",
               outcome.message);
    if (outcome.verdict == Verdict::InternalError) status = 1;
  }
  return status;
}

// One libFuzzer executable per target: REFINERY_FUZZ_ENTRY names the entry
// point of bench/fuzz/targets.h (fuzz_onnx, fuzz_nir, fuzz_ir_text, fuzz_rules).
#include "bench/fuzz/targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return refinery::fuzz::REFINERY_FUZZ_ENTRY(data, size);
}

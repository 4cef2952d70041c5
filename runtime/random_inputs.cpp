// Seeded random inputs. The generator is our own (splitmix64), not ATen's, so
// the values stay the same across library versions and platforms.
#include <cstring>

#include "runtime/interpreter.h"

namespace refinery::runtime {
namespace {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  uint64_t state_;
};

template <class T>
void store(std::vector<std::byte>& bytes, size_t i, T v) {
  std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
}

}  // namespace

namespace {

ir::Tensor draw(const ir::TensorType& type, SplitMix64& rng, const std::map<std::string, int64_t>& dims,
                int64_t int_high) {
  std::vector<int64_t> sizes;
  for (const ir::Dim& d : type.shape.dims()) {
    if (d.is_static())
      sizes.push_back(d.size());
    else if (auto it = dims.find(d.name()); d.is_symbol() && it != dims.end())
      sizes.push_back(it->second);
    else
      sizes.push_back(1);
  }
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<std::byte> bytes(static_cast<size_t>(n) * ir::dtype_size(type.dtype));
  auto high = static_cast<uint64_t>(std::max<int64_t>(int_high, 1));
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    double f = rng.uniform() * 2.0 - 1.0;
    uint64_t k = rng.next() % high;
    switch (type.dtype) {
      case ir::DType::f32: store(bytes, i, static_cast<float>(f)); break;
      case ir::DType::f64: store(bytes, i, f); break;
      case ir::DType::f16: store(bytes, i, ir::float_to_half(static_cast<float>(f))); break;
      case ir::DType::bf16: store(bytes, i, ir::float_to_bf16(static_cast<float>(f))); break;
      case ir::DType::i64: store(bytes, i, static_cast<int64_t>(k)); break;
      case ir::DType::i32: store(bytes, i, static_cast<int32_t>(k)); break;
      case ir::DType::i16: store(bytes, i, static_cast<int16_t>(k)); break;
      case ir::DType::i8: store(bytes, i, static_cast<int8_t>(k)); break;
      case ir::DType::u8: store(bytes, i, static_cast<uint8_t>(k)); break;
      case ir::DType::u16: store(bytes, i, static_cast<uint16_t>(k)); break;
      case ir::DType::u32: store(bytes, i, static_cast<uint32_t>(k)); break;
      case ir::DType::u64: store(bytes, i, static_cast<uint64_t>(k)); break;
      case ir::DType::boolean: store(bytes, i, static_cast<uint8_t>(rng.next() >> 63)); break;
    }
  }
  return ir::Tensor(type.dtype, std::move(sizes), std::move(bytes));
}

}  // namespace

std::vector<ir::Tensor> random_inputs(const ir::Graph& graph, uint64_t seed, const std::map<std::string, int64_t>& dims,
                                      int64_t int_high) {
  SplitMix64 rng(seed);
  std::vector<ir::Tensor> out;
  for (ir::ValueId v : graph.inputs()) out.push_back(draw(graph.value(v).type, rng, dims, int_high));
  return out;
}

ir::Tensor random_tensor(const ir::TensorType& type, uint64_t seed, const std::map<std::string, int64_t>& dims,
                         int64_t int_high) {
  SplitMix64 rng(seed);
  return draw(type, rng, dims, int_high);
}

}  // namespace refinery::runtime

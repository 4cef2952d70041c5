// Tensor::hash keys constants by content (rules/compile.cpp's cache of the
// constants rules compute): every byte, the dims and the dtype count.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

#include "ir/tensor.h"

namespace refinery::ir {
namespace {

TEST(TensorHash, EveryByteDimAndDtypeCounts) {
  // 13 floats: six whole words of 8 bytes and a tail of 4.
  std::vector<float> v(13);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.25f * static_cast<float>(i) - 1.f;
  const Tensor t = Tensor::from_values<float>(DType::f32, {13}, v);
  EXPECT_EQ(t.hash(), Tensor::from_values<float>(DType::f32, {13}, v).hash());
  std::set<uint64_t> seen{t.hash()};
  for (size_t byte = 0; byte < v.size() * sizeof(float); ++byte) {
    std::vector<float> w = v;
    reinterpret_cast<unsigned char*>(w.data())[byte] ^= 0x10;
    EXPECT_TRUE(seen.insert(Tensor::from_values<float>(DType::f32, {13}, w).hash()).second) << "byte " << byte;
  }
  std::vector<int32_t> bits(v.size());
  std::memcpy(bits.data(), v.data(), v.size() * sizeof(float));
  EXPECT_TRUE(seen.insert(Tensor::from_values<int32_t>(DType::i32, {13}, bits).hash()).second) << "dtype";
  std::vector<float> six(v.begin(), v.begin() + 12);
  const Tensor a = Tensor::from_values<float>(DType::f32, {2, 6}, six);
  const Tensor b = Tensor::from_values<float>(DType::f32, {6, 2}, six);
  EXPECT_NE(a.hash(), b.hash()) << "dims";
  EXPECT_NE(a.hash(), Tensor::from_values<float>(DType::f32, {12}, six).hash()) << "rank";
}

}  // namespace
}  // namespace refinery::ir

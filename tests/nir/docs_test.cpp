// docs/spiking.md: its ```ir example parses and prints back, and running it
// gives the spike steps its ```spikes block lists.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "ir/io.h"
#include "ir/text.h"
#include "runtime/spiking.h"

namespace refinery {
namespace {

std::string block(const std::string& doc, const std::string& kind) {
  size_t start = doc.find("```" + kind + "\n");
  if (start == std::string::npos) return {};
  start += kind.size() + 4;
  return doc.substr(start, doc.find("```\n", start) - start);
}

TEST(SpikingDocs, ExampleParsesRunsAndMatches) {
  auto doc = ir::read_file(std::string(REFINERY_SOURCE_DIR) + "/docs/spiking.md");
  ASSERT_TRUE(doc.has_value());
  std::string text = block(*doc, "ir");
  auto g = ir::parse_graph(text, "docs/spiking.md");
  ASSERT_TRUE(g.has_value()) << g.error().str();
  EXPECT_EQ(ir::print_graph(*g), text);
  const int64_t steps = 12;
  std::vector<double> x;
  for (int64_t t = 0; t < steps; ++t) x.insert(x.end(), {5.0, 0.0});
  std::vector<ir::Tensor> in{ir::Tensor::from_values<double>(ir::DType::f64, {steps, 2}, x)};
  std::string got;
  for (auto d : {runtime::Discretisation::Euler, runtime::Discretisation::Exact})
    for (auto r : {runtime::Reset::ToValue, runtime::Reset::Subtract}) {
      auto res = runtime::simulate(*g, in, {.dt = 1e-3, .steps = steps, .discretisation = d, .reset = r});
      ASSERT_TRUE(res.has_value()) << res.error().str();
      const auto& spikes = res->layers[0].spikes;
      std::string line = fmt::format("{} {}:", runtime::discretisation_name(d), runtime::reset_name(r));
      for (int n = 0; n < 2; ++n) {
        std::string at;
        for (int64_t t = 0; t < steps; ++t)
          if (spikes[static_cast<size_t>(t * 2 + n)]) at += fmt::format(" {}", t);
        line += fmt::format("{} neuron {} at{}", n ? ";" : "", n, at.empty() ? " none" : at);
      }
      got += line + "\n";
    }
  EXPECT_EQ(got, block(*doc, "spikes"));
}

}  // namespace
}  // namespace refinery

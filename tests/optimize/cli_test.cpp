// refinery optimize end to end: the bundled example and the small zoo
// models, through the rule library, within the default limits; the report
// is written and has every section; bad input exits 2 and writes nothing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>

#include "frontends/onnx.h"
#include "tests/cli/cli_runner.h"

namespace refinery::testing {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) { return scratch_file("refinery_optimize_test", name); }

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(slurp(p)); }

TEST(OptimizeCli, TinyCnnEndToEnd) {
  fs::path out = scratch("tiny.opt.onnx"), rep = scratch("tiny.json");
  CliResult r = run_cli("optimize " + source_path("examples/tiny_cnn.onnx") + " -o " + out.string() +
                        " --target cpu --report " + rep.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  for (const char* want :
       {"(target cpu, learned cost model ", "e-graph:", "rules fired:", "cost (cpu model):", "result:", "wrote"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  ASSERT_TRUE(fs::exists(out));
  EXPECT_TRUE(frontends::import_onnx(out).has_value());
  nlohmann::json j = read_json(rep);
  for (const char* key :
       {"seconds", "saturation", "rules_fired", "rules_used", "explanations", "cost", "validation", "result"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_LE(j["cost"]["after"].get<double>(), j["cost"]["before"].get<double>());
  // The rules the result uses, and those its explanations name, all fired.
  ASSERT_FALSE(j["rules_used"].empty()) << j.dump(2);
  ASSERT_FALSE(j["explanations"].empty()) << j.dump(2);
  for (const auto& [rule, n] : j["rules_used"].items()) EXPECT_TRUE(j["rules_fired"].contains(rule)) << rule;
  for (const auto& e : j["explanations"])
    for (const auto& step : e["steps"]) {
      std::string rule = step.get<std::string>().substr(0, step.get<std::string>().find(' '));
      EXPECT_TRUE(j["rules_fired"].contains(rule)) << rule;
      EXPECT_TRUE(j["rules_used"].contains(rule)) << rule;
    }
}

TEST(OptimizeCli, EveryTargetAndBothExtractors) {
  for (const char* t : {"gpu", "tpu", "h200", "tpu_v5e"})
    for (const char* e : {"greedy", "ilp"}) {
      fs::path out = scratch("tiny_t.onnx");
      CliResult r = run_cli(std::string("optimize ") + source_path("examples/tiny_cnn.onnx") + " -o " + out.string() +
                            " --target " + t + " --extractor " + e + " --time-limit 2");
      EXPECT_EQ(r.code, 0) << t << " " << e << "\n" << r.out << r.err;
      EXPECT_TRUE(fs::exists(out)) << t << " " << e;
      // Every accelerator model rewrites tiny_cnn, and the result validates.
      EXPECT_NE(r.out.find("result:     optimized"), std::string::npos) << t << " " << e << "\n" << r.out;
      EXPECT_NE(r.out.find("): pass"), std::string::npos) << t << " " << e << "\n" << r.out;
    }
}

TEST(OptimizeCli, BadInputExitsTwoAndWritesNothing) {
  fs::path out = scratch("bad.onnx");
  CliResult r =
      run_cli("optimize " + source_path("examples/tiny_cnn.onnx") + " -o " + out.string() + " --target quantum");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown target 'quantum'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  r = run_cli("optimize /nonexistent.onnx -o " + out.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(fs::exists(out));
}

// docs/report.md's example has the keys a real report has, in its order
// (top level and each section's first level): the doc is checked, not trusted.
TEST(OptimizeCli, ReportMatchesTheDocumentedExample) {
  std::string doc = slurp(source_path("docs/report.md"));
  std::size_t open = doc.find("```json\n"), close = doc.find("\n```", open + 8);
  ASSERT_NE(open, std::string::npos);
  ASSERT_NE(close, std::string::npos);
  nlohmann::ordered_json example = nlohmann::ordered_json::parse(doc.substr(open + 8, close - open - 8));
  fs::path out = scratch("doc.opt.onnx"), rep = scratch("doc.json");
  CliResult r = run_cli("optimize " + source_path("examples/tiny_cnn.onnx") + " -o " + out.string() +
                        " --target cpu --report " + rep.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  nlohmann::ordered_json real = nlohmann::ordered_json::parse(slurp(rep));
  auto keys = [](const nlohmann::ordered_json& j) {
    std::vector<std::string> k;
    for (const auto& [key, v] : j.items()) k.push_back(key);
    return k;
  };
  EXPECT_EQ(keys(example), keys(real));
  for (const char* section : {"seconds", "saturation", "extraction", "cost", "graph", "validation"}) {
    ASSERT_TRUE(example[section].is_object()) << section;
    ASSERT_TRUE(real[section].is_object()) << section;
    EXPECT_EQ(keys(example[section]), keys(real[section])) << section;
  }
  EXPECT_EQ(keys(example["saturation"]["phases"][0]), keys(real["saturation"]["phases"][0]));
  EXPECT_EQ(keys(example["saturation"]["phases"][0]["iterations"][0]),
            keys(real["saturation"]["phases"][0]["iterations"][0]));
}

// A model with a custom op (no kernel, no rule knows it) still optimizes:
// validation stands in for the op and compares what each graph feeds it.
TEST(OptimizeCli, AModelWithACustomOpOptimizes) {
  fs::path ir = scratch("custom.ir"), model = scratch("custom.onnx"), out = scratch("custom.opt.onnx");
  {
    std::ofstream f(ir);
    f << R"(graph @main(%x: tensor<8xf32>) attributes {opsets = {"" = 17, "com.example" = 1}} {
  %a = neg(%x) : tensor<8xf32>
  %b = neg(%a) : tensor<8xf32>
  %c = "com.example::Mystery"(%b) {k = 3} : tensor<8xf32>
  %d = relu(%c) : tensor<8xf32>
  return %d
}
)";
  }
  CliResult c = run_cli("convert " + ir.string() + " " + model.string());
  ASSERT_EQ(c.code, 0) << c.out << c.err;
  CliResult r = run_cli("optimize " + model.string() + " -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("result:     optimized"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("validation: 3 samples"), std::string::npos) << r.out;
  // neg-neg adds no node (its right side is ?a): it is credited through the
  // union that made neg(neg(x)) equal to x.
  EXPECT_NE(r.out.find("rules used:  neg-neg (1)"), std::string::npos) << r.out;
  auto g = frontends::import_onnx(out);
  ASSERT_TRUE(g.has_value()) << g.error().str();
  ASSERT_EQ(g->num_nodes(), 2u);  // neg(neg(x)) is gone, the custom op stays
  EXPECT_EQ(g->nodes()[0].op_type, "Mystery");
}

class SmallZoo : public ::testing::TestWithParam<const char*> {};

TEST_P(SmallZoo, OptimizesWithinTheDefaultLimits) {
  fs::path model = fs::path(REFINERY_BINARY_DIR) / "zoo" / (std::string(GetParam()) + ".onnx");
  if (!fs::exists(model)) GTEST_SKIP() << model << " missing (build the zoo_small target)";
  fs::path out = scratch(std::string(GetParam()) + ".opt.onnx"), rep = scratch(std::string(GetParam()) + ".json");
  CliResult r = run_cli("optimize " + model.string() + " -o " + out.string() + " --report " + rep.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  nlohmann::json j = read_json(rep);
  EXPECT_LT(j["seconds"]["total"].get<double>(), 20);
  EXPECT_LE(j["cost"]["after"].get<double>(), j["cost"]["before"].get<double>());
  if (j["result"] == "optimized") {
    EXPECT_TRUE(j["validation"]["passed"].get<bool>());
  }
  EXPECT_TRUE(frontends::import_onnx(out).has_value());
}

// A zoo model rewritten for the TPU: the written graph is the refined one
// (other ops, other node count), it was validated, and it reads back as what
// the report says. bert_encoder: its attention's Q, K and V MatMuls merge
// into one (less data moved). squeezenet1_1 was rewritten here only while the
// TPU model padded NCHW's 13x13 maps to 8x128 tiles (docs/targets.md).
TEST(OptimizeCli, AZooModelIsRewrittenValidatedAndWritten) {
  fs::path model = fs::path(REFINERY_BINARY_DIR) / "zoo" / "bert_encoder.onnx";
  ASSERT_TRUE(fs::exists(model)) << model << " missing (build the zoo_small target)";
  fs::path out = scratch("bert_encoder.tpu.onnx"), rep = scratch("bert_encoder.tpu.json");
  CliResult r =
      run_cli("optimize " + model.string() + " -o " + out.string() + " --target tpu --report " + rep.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  nlohmann::json j = read_json(rep);
  ASSERT_EQ(j["result"], "optimized") << j.dump(2);
  EXPECT_LT(j["cost"]["after"].get<double>(), j["cost"]["before"].get<double>());
  EXPECT_NE(j["graph"]["ops_before"], j["graph"]["ops_after"]);
  ASSERT_TRUE(j["validation"].is_object());
  EXPECT_TRUE(j["validation"]["passed"].get<bool>());
  EXPECT_LE(j["validation"]["max_abs_error"].get<double>(), j["validation"]["atol"].get<double>());
  EXPECT_FALSE(j["rules_used"].empty());
  auto g = frontends::import_onnx(out);
  ASSERT_TRUE(g.has_value()) << g.error().str();
  auto original = frontends::import_onnx(model);
  ASSERT_TRUE(original.has_value());
  // Its GELUs are gelu nodes in the refined graph, written at opset 17 as
  // torch's five ops each (docs/onnx.md, "Ops newer than the model's opset").
  const auto& ops_after = j["graph"]["ops_after"];
  std::size_t gelus = ops_after.contains("Gelu") ? ops_after["Gelu"].get<std::size_t>() : 0;
  EXPECT_EQ(g->num_nodes(), j["graph"]["nodes_after"].get<std::size_t>() + 4 * gelus);
  for (const ir::Node& n : g->nodes()) EXPECT_NE(n.op, ir::Op::Gelu);
  EXPECT_NE(g->num_nodes(), original->num_nodes());
}

// ONNX Runtime's fused Attention (docs/targets.md, export vocabulary): with
// the library's attention rules (rules/lib/fused.rules) the cpu target reaches it from
// attn_matmul's matmul/softmax/matmul and writes a com.microsoft node;
// --portable, and a target without ONNX Runtime, keep to standard ONNX ops.
// Each result validates and agrees in ONNX Runtime.
TEST(OptimizeCli, FusedAttentionOnlyWhereTheTargetRunsIt) {
  fs::path model = fs::path(REFINERY_BINARY_DIR) / "zoo" / "attn_matmul.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << model << " missing (build the zoo_small target)";
  const std::string dims = " --dim batch=2 --dim seq=16";
  auto contrib_ops = [](const fs::path& file) {
    auto g = frontends::import_onnx(file);
    EXPECT_TRUE(g.has_value()) << g.error().str();
    int n = 0;
    for (const auto& node : g->nodes()) n += node.op == ir::Op::MsAttention;
    return n;
  };
  struct Case {
    std::string flags;
    int attention;
  };
  for (const Case& c : {Case{"--target cpu", 1}, Case{"--target cpu --portable", 0}, Case{"--target gpu", 0}}) {
    SCOPED_TRACE(c.flags);
    fs::path out = scratch("attn_fused.onnx"), rep = scratch("attn_fused.json");
    CliResult r = run_cli("optimize " + model.string() + " -o " + out.string() + " " + c.flags + dims +
                          " --time-limit 2 --report " + rep.string());
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(contrib_ops(out), c.attention);
    nlohmann::json j = read_json(rep);
    if (c.attention > 0) {
      EXPECT_TRUE(j["validation"]["passed"].get<bool>());
      EXPECT_TRUE(j["rules_used"].contains("attention-packed")) << j["rules_used"].dump();
      std::string cmd = "node " + source_path("tools/ort/compare.mjs") + " " + model.string() + " " + out.string() +
                        " --rtol 1e-3 --atol 1e-4" + dims + " > " + scratch("attn_fused.ort").string() + " 2>&1";
      EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(scratch("attn_fused.ort"));
    }
  }
}

// bert_encoder's post-norm blocks (4 layers, x = LN(y), LN(x + (f(x) + b))
// twice a layer): each sublayer's output bias goes into the LayerNorm before
// it, and each product that reads x takes - b W into its own bias
// (residual-bias-into-norm; the Attention's packed bias); greedy extraction
// reaches it only by switching the residual and the product's user together
// (extract/greedy.cpp, group moves). The written model has
// one Add a residual and the embedding's (9), no bias Add beside them but
// the 4 the erf GELUs read, and no Sub (export writes a Sub of a constant as
// an Add); it validates and agrees in ONNX Runtime.
TEST(OptimizeCli, PostNormBiasesGoIntoTheLayerNorms) {
  fs::path model = fs::path(REFINERY_BINARY_DIR) / "zoo" / "bert_encoder.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << model << " missing (build the zoo_small target)";
  fs::path out = scratch("bert_ln.onnx"), rep = scratch("bert_ln.json");
  CliResult r = run_cli("optimize " + model.string() + " -o " + out.string() + " --target cpu --report " +
                        rep.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  nlohmann::json j = read_json(rep);
  EXPECT_TRUE(j["validation"]["passed"].get<bool>());
  EXPECT_TRUE(j["rules_used"].contains("residual-bias-into-norm")) << j["rules_used"].dump();
  auto g = frontends::import_onnx(out);
  ASSERT_TRUE(g.has_value()) << g.error().str();
  std::map<ir::Op, int> ops;
  for (const auto& node : g->nodes()) ++ops[node.op];
  EXPECT_EQ(ops[ir::Op::MsAttention], 4);
  EXPECT_EQ(ops[ir::Op::LayerNormalization], 9);
  EXPECT_EQ(ops[ir::Op::Sub], 0);
  // The residuals and the embedding's, the GELU biases, the GELUs' + 1; unfolded, 8 output biases more.
  EXPECT_EQ(ops[ir::Op::Add], 9 + 4 + 4);
  std::string cmd = "node " + source_path("tools/ort/compare.mjs") + " " + model.string() + " " + out.string() +
                    " --rtol 1e-3 --atol 1e-4 --dim batch=2 > " + scratch("bert_ln.ort").string() + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(scratch("bert_ln.ort"));
}

INSTANTIATE_TEST_SUITE_P(Models, SmallZoo,
                         ::testing::Values("mlp", "bert_encoder", "squeezenet1_1", "mobilenet_v2",
                                           "shufflenet_v2_x1_0"));

// The transformer corpus (docs/zoo.md), exported as people export them
// (dynamic batch/seq, the exporter's own types, opsets 13 and 17): each
// optimizes for every target, validates at batch 2 and seq 16, and the
// result loads and agrees in ONNX Runtime (set up by scripts/setup.sh).
class Transformers : public ::testing::TestWithParam<const char*> {};

TEST_P(Transformers, OptimizesForEveryTargetValidatesAndRunsInOrt) {
  fs::path model = fs::path(REFINERY_BINARY_DIR) / "zoo" / (std::string(GetParam()) + ".onnx");
  if (!fs::exists(model)) GTEST_SKIP() << model << " missing (build the zoo_small target)";
  ASSERT_TRUE(fs::exists(source_path("tools/ort/node_modules/onnxruntime-node")))
      << "tools/ort/node_modules/onnxruntime-node is missing: run scripts/setup.sh";
  const std::string dims = " --dim batch=2 --dim seq=16";
  for (const char* target : {"cpu", "gpu", "tpu"}) {
    SCOPED_TRACE(target);
    std::string stem = std::string(GetParam()) + "." + target;
    fs::path out = scratch(stem + ".onnx"), rep = scratch(stem + ".json");
    CliResult r = run_cli("optimize " + model.string() + " -o " + out.string() + " --target " + target +
                          " --time-limit 2" + dims + " --report " + rep.string());
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    nlohmann::json j = read_json(rep);
    if (j["result"] == "optimized") {
      EXPECT_TRUE(j["validation"]["passed"].get<bool>()) << r.out;
    }
    auto g = frontends::import_onnx(out);
    ASSERT_TRUE(g.has_value()) << g.error().str();
    std::string cmd = "node " + source_path("tools/ort/compare.mjs") + " " + model.string() + " " + out.string() +
                      " --rtol 1e-3 --atol 1e-4" + dims + " > " + scratch(stem + ".ort").string() + " 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(scratch(stem + ".ort"));
  }
}

INSTANTIATE_TEST_SUITE_P(Models, Transformers,
                         ::testing::Values("vit_tiny", "vit_tiny_op13", "gpt_decoder", "gpt_decoder_op13",
                                           "bert_masked", "bert_masked_op13", "torch_encoder", "torch_encoder_grad",
                                           "torch_encoder_op13", "attn_matmul", "attn_baddbmm", "attn_einsum",
                                           "attn_2d"));

}  // namespace
}  // namespace refinery::testing

// The CLI's reports end to end: optimize --report --html writes both, and
// `report html` draws the same page from the saved JSON; a batch writes
// index.html and a page per job (a failed one with its reproduce command);
// `report html` on a summary and `report merge` draw the batch page again.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_runner.h"

namespace refinery::testing {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("refinery_report_cli_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

const fs::path kTiny = source_path("examples/tiny_cnn.onnx");

TEST(ReportCli, OptimizeWritesThePageThatReportHtmlDrawsFromTheJson) {
  fs::path d = fresh_dir("optimize");
  CliResult r = run_cli("optimize " + kTiny.string() + " -o " + (d / "o.onnx").string() + " --report " +
                        (d / "r.json").string() + " --html " + (d / "r.html").string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(slurp(d / "r.json"));
  EXPECT_EQ(j.at("refinery_report"), 9);
  EXPECT_TRUE(j.at("neuromorphic").is_null()) << "a cpu target has no chip mapping";
  // The report says what priced the graphs: optimize's default target, cpu, is the learned model, with its file.
  EXPECT_EQ(j.at("target"), "cpu");
  EXPECT_EQ(j.at("cost").at("model_kind"), "learned");
  const std::string model_file = j.at("cost").at("model_file").get<std::string>();
  EXPECT_TRUE(model_file.ends_with("cpu.ubj")) << model_file;
  EXPECT_NE(j.at("command").get<std::string>().find("optimize " + kTiny.string()), std::string::npos);
  EXPECT_GT(j.at("cost").at("flops_before").get<double>(), 0);
  ASSERT_FALSE(j.at("validation").is_null()) << "tiny_cnn is expected to be optimized";
  EXPECT_EQ(j.at("validation").at("outputs").size(), 1u);
  std::string page = slurp(d / "r.html");
  EXPECT_NE(page.find("id=\"egraph-growth\""), std::string::npos);
  EXPECT_NE(page.find("<tr><td>cost model</td><td>learned (" + model_file + ")</td></tr>"), std::string::npos);
  r = run_cli("report html " + (d / "r.json").string() + " -o " + (d / "again.html").string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(slurp(d / "again.html"), page);
  // A verify report that does not name the rules: every rule is unverified.
  std::ofstream(d / "verify.json") << R"({"summary": {}, "rules": [{"name": "no-such-rule", "verdict": "refuted"}]})";
  r = run_cli("report html " + (d / "r.json").string() + " -o " + (d / "v.html").string() + " --rules-report " +
              (d / "verify.json").string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(slurp(d / "v.html").find("not verified in this report"), std::string::npos);
  // cpu-analytic: the analytic model, no file.
  r = run_cli("optimize " + kTiny.string() + " -o " + (d / "a.onnx").string() + " --target cpu-analytic --report " +
              (d / "a.json").string() + " --html " + (d / "a.html").string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  j = nlohmann::json::parse(slurp(d / "a.json"));
  EXPECT_EQ(j.at("target"), "cpu-analytic");
  EXPECT_EQ(j.at("cost").at("model_kind"), "analytic");
  EXPECT_TRUE(j.at("cost").at("model_file").is_null());
  EXPECT_NE(slurp(d / "a.html").find("<tr><td>cost model</td><td>analytic</td></tr>"), std::string::npos);
}

TEST(ReportCli, BadInputsNameTheFile) {
  fs::path d = fresh_dir("bad");
  std::ofstream(d / "x.json") << "{\"hello\": 1}";
  CliResult r = run_cli("report html " + (d / "x.json").string() + " -o " + (d / "x.html").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find((d / "x.json").string() + ": not a model report"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "x.html"));
  r = run_cli("optimize " + kTiny.string() + " -o " + (d / "o.onnx").string() + " --html " + (d / "p.html").string() +
              " --rules-report " + (d / "x.json").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not a rule verification report"), std::string::npos) << r.err;
}

TEST(ReportCli, BatchWritesAnIndexAndAPagePerJob) {
  fs::path d = fresh_dir("batch");
  fs::create_directories(d / "models");
  fs::copy_file(kTiny, d / "models/tiny.onnx");
  std::ofstream(d / "models/broken.onnx") << "not a model";
  CliResult r = run_cli("batch " + (d / "models").string() + " -o " + (d / "out").string() + " --target cpu --jobs 2");
  ASSERT_EQ(r.code, 1) << r.out << r.err;  // broken.onnx fails
  EXPECT_NE(r.out.find((d / "out/index.html").string()), std::string::npos) << r.out;
  std::string index = slurp(d / "out/index.html");
  EXPECT_NE(index.find("<a href=\"cpu/models/tiny.onnx.html\">"), std::string::npos);
  EXPECT_NE(index.find("<a href=\"cpu/models/broken.onnx.html\">"), std::string::npos);
  std::string tiny = slurp(d / "out/cpu/models/tiny.onnx.html");
  EXPECT_NE(tiny.find("href=\"../../index.html\""), std::string::npos);
  EXPECT_NE(tiny.find("id=\"egraph-growth\""), std::string::npos);
  std::string broken = slurp(d / "out/cpu/models/broken.onnx.html");
  EXPECT_NE(broken.find("id=\"failure\""), std::string::npos);
  EXPECT_NE(broken.find("<pre id=\"reproduce\">"), std::string::npos);
  EXPECT_NE(broken.find(" optimize " + (d / "models/broken.onnx").string() + " -o "), std::string::npos) << broken;
  // The journal keeps the command; report html on the summary draws the same index.
  nlohmann::json s = nlohmann::json::parse(slurp(d / "out/summary.json"));
  EXPECT_NE(s.at("jobs").at(0).at("command").get<std::string>().find(" optimize "), std::string::npos);
  fs::remove(d / "out/index.html");
  r = run_cli("report html " + (d / "out/summary.json").string() + " -o " + (d / "out/index.html").string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(slurp(d / "out/index.html"), index);
  fs::remove(d / "out/index.html");
  r = run_cli("report merge " + (d / "out").string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(slurp(d / "out/index.html"), index);
  // A measurement (bench/ort/bench.mjs --json) is matched to a job by its
  // output file, a relative path being relative to the measurement file.
  std::ofstream(d / "out/bench.json") << R"({"rows": [{"orig": "x", "opt": "cpu/models/tiny.onnx", "speedup": 1.5}]})";
  r = run_cli("report html " + (d / "out/summary.json").string() + " -o " + (d / "out/measured.html").string() +
              " --measured " + (d / "out/bench.json").string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::string measured = slurp(d / "out/measured.html");
  EXPECT_NE(measured.find("<td data-v=\"1.5\" class=\"num\">1.500×</td>"), std::string::npos);
  EXPECT_EQ(measured.find("data-v=\"1.5\"", measured.find("data-v=\"1.5\"") + 1), std::string::npos);  // tiny's only
  std::ofstream(d / "out/bad.json") << R"({"rows": [{"opt": "cpu/models/tiny.onnx"}]})";
  r = run_cli("report html " + (d / "out/summary.json").string() + " -o " + (d / "out/measured.html").string() +
              " --measured " + (d / "out/bad.json").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find((d / "out/bad.json").string() + ": a row without"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace refinery::testing

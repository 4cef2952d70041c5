// The model and batch pages drawn from reports: hostile names stay text,
// every section is there, verdicts are shown only when a verify report
// gives them, and the batch table carries its sort values and links.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <regex>

#include "report/batch_page.h"
#include "report/model_page.h"

namespace refinery::report {
namespace {

using json = nlohmann::ordered_json;

const std::string kHostile = "<script>alert(1)</script><img src=x onerror=alert(2)>";

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A report as refinery optimize writes it (version 4), with hostile names in
// every string a model or a rule file can choose.
json sample_report() {
  return json::parse(R"json({
    "refinery_report": 5, "model": "m.onnx", "output": "o.onnx", "target": "cpu", "command": "refinery optimize m.onnx",
    "extractor": "greedy", "result": "optimized", "reason": "",
    "seconds": {"seed": 0.001, "saturate": 0.01, "total": 0.5},
    "saturation": {"strategy": "phased", "stop_reason": "Saturated", "egraph": {"nodes": 40, "classes": 30},
      "phases": [{"name": "simplify", "rules": 5, "stop_reason": "Saturated",
                  "iterations": [{"nodes": 10, "classes": 10, "applied": 2, "seconds": 0.001},
                                 {"nodes": 20, "classes": 15, "applied": 0, "seconds": 0.001}]},
                 {"name": "explore", "rules": 7, "stop_reason": "Saturated",
                  "iterations": [{"nodes": 30, "classes": 25, "applied": 0, "seconds": 0.001}]}]},
    "rules_fired": {"fold-div-const": 8, "proved-rule": 3},
    "rules_used": {"fold-div-const": 8, "proved-rule": 2},
    "explanations": [{"value": "v1", "steps": ["proved-rule", "fold-div-const (backward)"]}],
    "extraction": {"extractor": "greedy", "status": "greedy (dag)", "detail": "", "objective": 1, "greedy_objective": 1,
                   "bound": null, "gap": null, "seconds": 0, "cpu_seconds": 0, "reduction": []},
    "cost": {"model": "cpu", "unit": "seconds", "before": 0.004, "after": 0.003, "speedup": 1.3333,
             "flops_before": 2000000, "flops_after": 1500000, "bytes_before": 4096, "bytes_after": 2048, "gain_flag": null},
    "graph": {"nodes_before": 12, "nodes_after": 9, "constants_folded": 2,
              "ops_before": {"Div": 4, "Relu": 3}, "ops_after": {"Mul": 1, "Relu": 3}},
    "validation": {"passed": true, "samples": 3, "seed": 0, "atol": 0.0001, "rtol": 0.001,
      "max_abs_error": 1e-06, "max_rel_error": 2e-05, "worst_output": "y", "first_divergence": "",
      "outputs": [{"name": "y", "max_abs_error": 1e-06, "max_rel_error": 2e-05, "within_tolerance": true},
                  {"name": "z", "max_abs_error": 0.5, "max_rel_error": 0.1, "within_tolerance": false}],
      "spike_trains": [{"layer": "lif1", "op": "lif", "original_spikes": 40, "refined_spikes": 40, "identical": true}],
      "rounding_check": true, "verdict": "rounds differently"}
  })json");
}

json hostile_report() {
  json r = sample_report();
  r["model"] = kHostile + ".onnx";
  r["rules_used"][kHostile] = 1;
  r["graph"]["ops_after"][kHostile] = 1;
  r["explanations"].push_back({{"value", kHostile}, {"steps", {kHostile}}});
  r["validation"]["outputs"][0]["name"] = kHostile;
  return r;
}

// The page's only scripts are its own two (the error catcher, the sorter).
void expect_no_injection(const std::string& page) {
  EXPECT_EQ(count(page, "<script"), 2u);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("alert(1)</script>"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

TEST(ModelPage, HostileNamesStayText) {
  json r = hostile_report();
  expect_no_injection(*model_page(&r, {}));
}

TEST(ModelPage, ShowsEverySection) {
  json r = sample_report();
  std::string page = *model_page(&r, {});
  for (const char* want : {"id=\"ops\"", "id=\"rules\"", "id=\"explanations\"", "id=\"egraph-growth\"",
                           "id=\"outputs\"", "id=\"spike-trains\""})
    EXPECT_NE(page.find(want), std::string::npos) << want;
  // FLOPs and bytes beside the cost, as before → after with the change.
  EXPECT_NE(page.find("2 M → 1.5 M <span class=\"gain\">(-25%)</span>"), std::string::npos);
  EXPECT_NE(page.find("4 ms → 3 ms"), std::string::npos);
  // Ops: Div -4 and Mul +1 changed; Relu the same.
  EXPECT_NE(page.find("<td data-v=\"-4\" class=\"num\">-4</td>"), std::string::npos);
  EXPECT_NE(page.find("<td data-v=\"1\" class=\"num\">+1</td>"), std::string::npos);
  // The explanation chain, in order.
  auto a = page.find("<code>proved-rule</code></li>"), b = page.find("<code>fold-div-const (backward)</code></li>");
  ASSERT_NE(a, std::string::npos);
  EXPECT_LT(a, b);
  // Growth: 3 iterations and the end, a marker per phase.
  EXPECT_EQ(count(page, "<line class=\"marker\""), 2u);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(page, m, std::regex("class=\"series\"[^>]*points=\"([^\"]*)\"")));
  EXPECT_EQ(count(m[1].str(), ","), 4u);
  // Per-output errors with the tolerance.
  EXPECT_NE(page.find("0.0001 + 0.001·|a|"), std::string::npos);
  EXPECT_NE(page.find("<span class=\"loss\">no</span>"), std::string::npos);
  // No failure section for a validated result.
  EXPECT_EQ(page.find("id=\"failure\""), std::string::npos);
}

TEST(ModelPage, VerdictsOnlyFromAVerifyReport) {
  json r = sample_report();
  std::string page = *model_page(&r, {});
  EXPECT_EQ(count(page, "not verified in this report"), 2u);
  RuleVerdicts v{
      .source = "verify.json",
      .by_rule = {
          {"proved-rule", {.verdict = "proved (binary32-exact)", .binary32 = "exact", .shapes = {"[2,3]", "[1]"}}}}};
  page = *model_page(&r, {.verdicts = &v});
  EXPECT_EQ(count(page, "not verified in this report"), 1u);  // fold-div-const: the file does not list it
  EXPECT_NE(page.find("proved (binary32-exact)"), std::string::npos);
  EXPECT_NE(page.find("<code>[2,3]; [1]</code>"), std::string::npos);
  EXPECT_NE(page.find("<code>verify.json</code>"), std::string::npos);
}

TEST(ModelPage, AFailedJobSaysWhatFailedAndHowToRerunIt) {
  JobInfo job{.key = "cpu/crash.onnx",
              .status = "crashed",
              .reason = "killed by SIGSEGV",
              .command = "refinery optimize 'crash <1>.onnx' -o out",
              .log = "out/cpu/crash.onnx.log",
              .log_tail = "last <line>\n",
              .failed = true};
  std::string page = *model_page(nullptr, {.job = job, .index_href = "../index.html"});
  EXPECT_NE(page.find("id=\"failure\""), std::string::npos);
  EXPECT_NE(page.find("killed by SIGSEGV"), std::string::npos);
  EXPECT_NE(page.find("<pre id=\"reproduce\">refinery optimize &#39;crash &lt;1&gt;.onnx&#39; -o out</pre>"),
            std::string::npos);
  EXPECT_NE(page.find("last &lt;line&gt;"), std::string::npos);
  EXPECT_NE(page.find("href=\"../index.html\""), std::string::npos);
  // A report that failed validation names the diverging value and its command.
  json r = sample_report();
  r["result"] = "validation failed";
  r["validation"]["passed"] = false;
  r["validation"]["first_divergence"] = "value 'x' (node 'n', mul) element 3";
  page = *model_page(&r, {});
  EXPECT_NE(page.find("value &#39;x&#39; (node &#39;n&#39;, mul) element 3"), std::string::npos);
  EXPECT_NE(page.find("<pre id=\"reproduce\">refinery optimize m.onnx</pre>"), std::string::npos);
}

TEST(ModelPage, AValueOfTheWrongTypeIsAnError) {
  json r = sample_report();
  r["graph"]["ops_before"]["Div"] = "four";
  auto page = model_page(&r, {});
  ASSERT_FALSE(page);
  EXPECT_NE(page.error().message.find("wrong type"), std::string::npos) << page.error().message;
}

TEST(ModelPage, ReportsAreReadOnlyUpToThisVersion) {
  EXPECT_TRUE(parse_report(sample_report().dump(), "r.json"));
  json future = sample_report();
  future["refinery_report"] = 99;
  auto bad = parse_report(future.dump(), "r.json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().str().rfind("r.json", 0), 0u) << bad.error().str();
  EXPECT_FALSE(parse_report("{\"refinery_batch_summary\": 1}", "s.json"));
  EXPECT_FALSE(parse_report("not json", "x.json"));
}

std::vector<BatchRow> sample_rows() {
  std::vector<BatchRow> rows;
  rows.push_back({.key = "cpu/a.onnx",
                  .model = "zoo/a.onnx",
                  .target = "cpu",
                  .status = "written",
                  .wall_seconds = 2.5,
                  .report = sample_report(),
                  .measured_speedup = 1.25,
                  .page = "cpu/zoo/a.onnx.html"});
  rows.push_back({.key = "cpu/" + kHostile, .model = kHostile, .target = "cpu", .status = "crashed", .failed = true,
                  .reason = "killed by SIGSEGV", .wall_seconds = 0.1, .page = "cpu/" + kHostile + ".html"});
  return rows;
}

TEST(BatchPage, TableHasSortValuesLinksAndPlots) {
  std::string page = batch_page(sample_rows(), {});
  for (const char* key : {"model", "target", "status", "nodes_before", "nodes_after", "flops_before", "flops_after",
                          "cost_before", "cost_after", "gain", "measured", "error", "optimize_s", "wall_s"})
    EXPECT_NE(page.find(fmt::format("data-key=\"{}\"", key)), std::string::npos) << key;
  EXPECT_NE(page.find("<table class=\"sortable\" id=\"jobs\">"), std::string::npos);
  EXPECT_NE(page.find("<td data-v=\"0.004\" class=\"num\">4 ms</td>"), std::string::npos);   // cost before
  EXPECT_NE(page.find("<td data-v=\"25\" class=\"num\">+25%</td>"), std::string::npos);      // cost gain
  EXPECT_NE(page.find("<td data-v=\"1.25\" class=\"num\">1.250×</td>"), std::string::npos);  // measured
  EXPECT_NE(page.find("<td data-v=\"2000000\" class=\"num\">2 M</td>"), std::string::npos);  // FLOPs before
  EXPECT_NE(page.find("<a href=\"cpu/zoo/a.onnx.html\">zoo/a.onnx</a>"), std::string::npos);
  EXPECT_NE(page.find("id=\"plot-gain\""), std::string::npos);
  EXPECT_NE(page.find("id=\"plot-time\""), std::string::npos);
  EXPECT_NE(page.find("2 jobs · 1 crashed · 1 written"), std::string::npos);
}

TEST(BatchPage, HostileNamesStayTextAndLinksStayPaths) {
  std::string page = batch_page(sample_rows(), {});
  expect_no_injection(page);
  EXPECT_NE(
      page.find("href=\"cpu/%3Cscript%3Ealert%281%29%3C/script%3E%3Cimg%20src%3Dx%20onerror%3Dalert%282%29%3E.html\""),
      std::string::npos);
}

}  // namespace
}  // namespace refinery::report

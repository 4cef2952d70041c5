#include "report/model_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

#include "ir/io.h"
#include "optimize/report.h"
#include "report/html.h"
#include "report/plot.h"

namespace refinery::report {

using json = nlohmann::ordered_json;

Expected<json> parse_report(std::string_view text, const std::string& file) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return fail("not JSON (a report written by refinery optimize --report)", "", file);
  if (!j.contains("refinery_report") || !j["refinery_report"].is_number_integer())
    return fail("not a model report: no \"refinery_report\" version (a batch summary has \"refinery_batch_summary\")",
                "", file);
  const int version = j["refinery_report"].get<int>();
  if (version < 1 || version > optimize::Report::kVersion)
    return fail(fmt::format("report version {} (this refinery reads 1 to {})", version, optimize::Report::kVersion),
                "", file);
  return j;
}

Expected<json> load_report(const std::filesystem::path& file) {
  auto text = ir::read_file(file);
  if (!text) return std::unexpected(text.error());
  return parse_report(*text, file.string());
}

namespace {

// j[a][b]... as a number, when every key is there and the value is one.
std::optional<double> num(const json& j, std::initializer_list<const char*> path) {
  const json* at = &j;
  for (const char* k : path) {
    if (!at->is_object() || !at->contains(k)) return std::nullopt;
    at = &(*at)[k];
  }
  return at->is_number() ? std::optional<double>(at->get<double>()) : std::nullopt;
}

std::string str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

std::string status_class(std::string_view result) {
  if (result == "optimized" || result == "written") return "ok";
  if (result == "kept original") return "kept";
  return "bad";
}

std::string fact_row(std::string_view label, std::string_view value_html) {
  return fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", escape(label), value_html);
}

std::string before_after(const std::optional<double>& before, const std::optional<double>& after,
                         const std::function<std::string(double)>& text) {
  if (!before || !after) return "<span class=\"muted\">not in this report</span>";
  std::string change;
  if (*before > 0 && *after != *before) {
    double pct = 100 * (*after - *before) / *before;
    change = fmt::format(" <span class=\"{}\">({:+.3g}%)</span>", pct < 0 ? "gain" : "loss", pct);
  }
  return fmt::format("{} → {}{}", escape(text(*before)), escape(text(*after)), change);
}

std::string count_of(double n) { return fmt::format("{:g}", n); }
// Energy at a readable scale: "412 nJ", "28.4 µJ", "3.1 mJ".
std::string energy_text(double j) {
  if (std::fabs(j) >= 1e-3) return fmt::format("{:.4g} mJ", j * 1e3);
  if (std::fabs(j) >= 1e-6) return fmt::format("{:.4g} µJ", j * 1e6);
  return fmt::format("{:.4g} nJ", j * 1e9);
}

std::string summary_section(const json& r) {
  std::string out = "<h2>Summary</h2>\n<table class=\"facts\">\n";
  const bool chip = r.contains("neuromorphic") && r["neuromorphic"].is_object();
  const json& cost = r.value("cost", json::object());
  const std::string unit = str(cost, "unit");
  out += fact_row("cost (" + str(cost, "model") + " model)",
                  before_after(num(r, {"cost", "before"}), num(r, {"cost", "after"}),
                               [&](double c) { return cost_text(c, unit); }));
  // What priced the graphs (report version 8): the learned model with its
  // file, or the analytic one.
  if (std::string kind = str(cost, "model_kind"); !kind.empty()) {
    std::string file = str(cost, "model_file");
    out += fact_row("cost model", escape(file.empty() ? kind : kind + " (" + file + ")"));
  }
  if (chip) {  // a neuromorphic target: the graph mapped onto the chip (docs/report.md)
    const json& n = r["neuromorphic"];
    auto row = [&](const char* label, const char* key, std::string (*text)(double)) {
      out += fact_row(label, before_after(num(n, {"before", key}), num(n, {"after", key}), text));
    };
    row("chip cores", "cores", count_of);
    row("neurons", "neurons", count_of);
    row("synapses", "synapses", count_of);
    row("synaptic events per step (measured rates)", "synaptic_events_per_step", count_text);
    row(fmt::format("energy per inference ({} steps)", number_text(num(n, {"steps"}))).c_str(),
        "energy_per_inference_j", energy_text);
  }
  out += fact_row("FLOPs", before_after(num(r, {"cost", "flops_before"}), num(r, {"cost", "flops_after"}), count_text));
  out += fact_row("bytes moved",
                  before_after(num(r, {"cost", "bytes_before"}), num(r, {"cost", "bytes_after"}), count_text));
  if (std::string flag = str(r.value("cost", json::object()), "gain_flag"); !flag.empty())
    out += fact_row("flagged", "<span class=\"status bad\" id=\"gain-flag\">" + escape(flag) + "</span>");
  out += fact_row("nodes",
                  before_after(num(r, {"graph", "nodes_before"}), num(r, {"graph", "nodes_after"}), count_of));
  if (auto folded = num(r, {"graph", "constants_folded"}))
    out += fact_row("constant expressions folded", count_of(*folded));
  // Report version 9: channel counts widened to the runtime's blocks.
  std::string padded;
  for (const json& p : r.value("graph", json::object()).value("channels_padded", json::array()))
    padded += fmt::format("{}{} values {} -> {}", padded.empty() ? "" : "; ", p.value("values", json::array()).size(),
                          p.value("from", 0), p.value("to", 0));
  if (!padded.empty())
    out += fact_row("channels widened to the runtime's blocks", "<span id=\"channels-padded\">" + escape(padded) +
                                                                 "</span>");
  const json& x = r.value("extraction", json::object());
  const std::string status = str(x, "status");
  out += fact_row(
      "extraction",
      escape(status.starts_with(str(x, "extractor")) ? status : fmt::format("{} ({})", str(x, "extractor"), status)) +
          (str(x, "detail").empty() ? "" : " — " + escape(str(x, "detail"))));
  const json& s = r.value("saturation", json::object());
  out += fact_row("saturation",
                  escape(fmt::format("{} strategy, stopped: {}; e-graph {} nodes, {} classes", str(s, "strategy"),
                                     str(s, "stop_reason"), number_text(num(s, {"egraph", "nodes"})),
                                     number_text(num(s, {"egraph", "classes"})))));
  std::string stages;
  if (r.contains("seconds") && r["seconds"].is_object())
    for (const auto& [stage, secs] : r["seconds"].items())
      if (secs.is_number())
        stages +=
            fmt::format("{}{} {}", stages.empty() ? "" : ", ", escape(stage), escape(seconds_text(secs.get<double>())));
  out += fact_row("time", stages);
  return out + "</table>\n";
}

// A neuromorphic target: each population on the chip before and after
// (neurons, synapses, cores, measured events), and each synapse layer's
// weights against the chip's format.
std::string chip_section(const json& r) {
  if (!r.contains("neuromorphic") || !r["neuromorphic"].is_object()) return "";
  const json& n = r["neuromorphic"];
  std::string out = fmt::format(
      "<h2>On the chip ({})</h2>\n<p>Spike rates measured by simulating {} samples of {} steps on seeded input spike "
      "trains (rate {}); a synaptic event is a spike arriving at a nonzero synapse.</p>\n",
      escape(str(r, "target")), number_text(num(n, {"samples"})), number_text(num(n, {"steps"})),
      number_text(num(n, {"input_rate"})));
  for (const char* side : {"before", "after"}) {
    const json& m = n.value(side, json::object());
    out += fmt::format("<h3>{}</h3>\n<table class=\"sortable\" id=\"chip-{}\"><thead><tr>", side, side) +
           sort_header("layer", "layer", false) + sort_header("op", "op", false) +
           sort_header("neurons", "neurons", true) + sort_header("synapses", "synapses", true) +
           sort_header("fan_in", "fan-in", true) + sort_header("cores", "cores", true) +
           sort_header("events", "synaptic events per step", true) + "</tr></thead><tbody>\n";
    for (const json& p : m.value("populations", json::array())) {
      auto cell = [&](const char* key, std::string (*text)(double)) {
        auto v = num(p, {key});
        return sort_cell(v ? escape(text(*v)) : "—", v, "num");
      };
      out += "<tr>" + sort_cell("<code>" + escape(str(p, "layer")) + "</code>", str(p, "layer")) +
             sort_cell(escape(str(p, "op")), str(p, "op")) + cell("neurons", count_of) + cell("synapses", count_of) +
             cell("fan_in", count_of) + cell("cores", count_of) + cell("synaptic_events_per_step", count_text) +
             "</tr>\n";
    }
    out += "</tbody></table>\n";
  }
  const json weights = n.value("after", json::object()).value("weights", json::array());
  if (!weights.empty()) {
    out += "<h3>Weights in the chip's format (written graph)</h3>\n<table id=\"chip-weights\"><thead><tr><th>layer</th>"
           "<th>op</th><th class=\"num\">bits needed</th><th class=\"num\">chip bits</th><th>fits</th></tr></thead>"
           "<tbody>\n";
    for (const json& w : weights) {
      const bool fits = w.value("fits", false);
      out += fmt::format(
          "<tr><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
          escape(str(w, "layer")), escape(str(w, "op")), number_text(num(w, {"bits_needed"})),
          number_text(num(w, {"weight_bits"})),
          fits ? "yes" : fmt::format("<span class=\"loss\">no: over by {} bits</span>",
                                     number_text(std::optional<double>(num(w, {"bits_needed"}).value_or(0) -
                                                                       num(w, {"weight_bits"}).value_or(0)))));
    }
    out += "</tbody></table>\n";
  }
  const json rescaled = n.value("rescaled", json::array());
  if (!rescaled.empty()) {
    out += "<h3>Rescaled into the chip's format</h3>\n<table id=\"chip-rescaled\"><thead><tr><th>synapse layer</th>"
           "<th>neuron</th><th class=\"num\">weights divided by</th><th>bits</th></tr></thead><tbody>\n";
    for (const json& x : rescaled)
      out += fmt::format("<tr><td><code>{}</code></td><td><code>{}</code> (input gain × the same)</td><td "
                         "class=\"num\">{}</td><td>{} → {}</td></tr>\n",
                         escape(str(x, "layer")), escape(str(x, "neuron")), number_text(num(x, {"factor"})),
                         number_text(num(x, {"bits_before"})), number_text(num(x, {"bits_after"})));
    out += "</tbody></table>\n";
  }
  const json secondary = n.value("secondary_figures", json());
  if (secondary.is_object() && !secondary.empty()) {
    out += "<p class=\"muted\">Figures of this chip's spec from secondary sources:</p>\n<ul class=\"muted\">\n";
    for (const auto& [k, v] : secondary.items())
      out += "<li><code>" + escape(k) + "</code>: " + escape(v.is_string() ? v.get<std::string>() : v.dump()) +
             "</li>\n";
    out += "</ul>\n";
  }
  return out;
}

std::string ops_section(const json& r) {
  const json& g = r.value("graph", json::object());
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> ops;
  const json before = g.value("ops_before", json::object()), after = g.value("ops_after", json::object());
  for (const auto& [op, n] : before.items()) ops[op].first = n.get<std::int64_t>();
  for (const auto& [op, n] : after.items()) ops[op].second = n.get<std::int64_t>();
  std::vector<std::pair<std::string, std::pair<std::int64_t, std::int64_t>>> rows(ops.begin(), ops.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::llabs(a.second.second - a.second.first) > std::llabs(b.second.second - b.second.first);
  });
  std::string out =
      "<h2>What changed: ops before and after</h2>\n<table class=\"sortable\" id=\"ops\">\n<thead><tr>" +
      sort_header("op", "op", false) + sort_header("before", "before", true) + sort_header("after", "after", true) +
      sort_header("change", "change", true) + "</tr></thead>\n<tbody>\n";
  for (const auto& [op, n] : rows) {
    const std::int64_t d = n.second - n.first;
    out += "<tr" + std::string(d == 0 ? " class=\"muted\"" : "") + ">" + sort_cell(escape(op), op) +
           sort_cell(fmt::format("{}", n.first), std::optional<double>(n.first), "num") +
           sort_cell(fmt::format("{}", n.second), std::optional<double>(n.second), "num") +
           sort_cell(d ? fmt::format("{:+d}", d) : "0", std::optional<double>(d), "num") + "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string rules_section(const json& r, const ModelPageOptions& o) {
  std::string out = "<h2>Rules used and their proofs</h2>\n";
  out += o.verdicts ? fmt::format("<p>Verdicts from <code>{}</code> (<code>refinery rules verify --json</code>).</p>\n",
                                  escape(o.verdicts->source.string()))
                    : "<p class=\"muted\">No rule verification report was given (<code>--rules-report FILE</code>, "
                      "written by <code>refinery rules verify --json FILE</code>): no rule is verified in this "
                      "report.</p>\n";
  const json used = r.value("rules_used", json::object());
  const json fired = r.value("rules_fired", json::object());
  if (used.empty()) return out + "<p>No rule is used by the written graph.</p>\n";
  out += "<table class=\"sortable\" id=\"rules\">\n<thead><tr>" + sort_header("rule", "rule", false) +
         sort_header("chosen", "chosen nodes", true) + sort_header("fired", "unions made", true) +
         sort_header("verdict", "proof verdict", false) + sort_header("exactness", "binary32 class", false) +
         "<th>bounded shapes</th><th>numeric check</th></tr></thead>\n<tbody>\n";
  for (const auto& [rule, n] : used.items()) {
    std::optional<double> f = fired.contains(rule) ? std::optional<double>(fired[rule].get<double>()) : std::nullopt;
    out += "<tr>" + sort_cell("<code>" + escape(rule) + "</code>", rule) +
           sort_cell(fmt::format("{}", n.get<std::int64_t>()), std::optional<double>(n.get<double>()), "num") +
           sort_cell(number_text(f), f, "num");
    const RuleVerdict* v = nullptr;
    if (o.verdicts)
      if (auto it = o.verdicts->by_rule.find(rule); it != o.verdicts->by_rule.end()) v = &it->second;
    if (!v) {
      out += sort_cell("<span class=\"muted\">not verified in this report</span>", "~") + sort_cell("", "~") +
             "<td></td><td></td></tr>\n";
      continue;
    }
    std::string verdict = v->verdict + (v->condition.empty() ? "" : " " + v->condition);
    const bool proved = v->verdict.starts_with("proved (");
    std::vector<std::string> shapes(v->shapes.begin(), v->shapes.end());
    out += sort_cell(fmt::format("<span class=\"status {}\">{}</span>", proved ? "ok" : "bad", escape(verdict)),
                     verdict) +
           sort_cell(escape(v->binary32.empty() ? "—" : v->binary32), v->binary32) +
           fmt::format("<td><code>{}</code></td><td>{}</td></tr>\n", escape(fmt::format("{}", fmt::join(shapes, "; "))),
                       escape(v->numeric));
  }
  return out + "</tbody></table>\n";
}

std::string explanations_section(const json& r) {
  const json ex = r.value("explanations", json::array());
  std::string out = "<h2>Why each changed value is equal</h2>\n";
  if (ex.empty()) return out + "<p>No value of the original is computed differently.</p>\n";
  out += "<p>For each value of the original now computed by another node: the rewrites on the e-graph's explanation "
         "from its original node to the chosen one, in order.</p>\n<table id=\"explanations\"><thead><tr><th>value</th>"
         "<th>chain of rewrites</th></tr></thead><tbody>\n";
  for (const json& e : ex) {
    std::string chain = "<ol class=\"chain\"><li>the original node</li>";
    for (const json& step : e.value("steps", json::array()))
      chain += "<li class=\"step\"><code>" + escape(step.get<std::string>()) + "</code></li>";
    chain += "<li class=\"step\">the refined node</li></ol>";
    out += fmt::format("<tr><td><code>{}</code></td><td>{}</td></tr>\n", escape(str(e, "value")), chain);
  }
  return out + "</tbody></table>\n";
}

std::string growth_section(const json& r) {
  const json phases = r.value("saturation", json::object()).value("phases", json::array());
  LineChart chart{.id = "egraph-growth",
                  .title = "E-graph growth per iteration",
                  .x_label = "iteration (all phases)",
                  .y_label = "count",
                  .series = {{"nodes", {}}, {"classes", {}}}};
  std::string table = "<table id=\"phases\"><thead><tr><th>phase</th><th class=\"num\">rules</th><th "
                      "class=\"num\">iterations</th><th>stopped</th></tr></thead><tbody>\n";
  for (const json& p : phases) {
    chart.markers.push_back({static_cast<double>(chart.series[0].values.size()), str(p, "name")});
    const json its = p.value("iterations", json::array());
    for (const json& it : its) {
      chart.series[0].values.push_back(num(it, {"nodes"}).value_or(0));
      chart.series[1].values.push_back(num(it, {"classes"}).value_or(0));
    }
    table +=
        fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
                    escape(str(p, "name")), number_text(num(p, {"rules"})), its.size(), escape(str(p, "stop_reason")));
  }
  // The size at the end, after the last iteration's unions.
  if (auto n = num(r, {"saturation", "egraph", "nodes"}); n && !chart.series[0].values.empty()) {
    chart.series[0].values.push_back(*n);
    chart.series[1].values.push_back(num(r, {"saturation", "egraph", "classes"}).value_or(0));
  }
  return "<h2>E-graph growth</h2>\n<p>Nodes and classes at the start of each iteration, and at the end; a dashed line "
         "starts a phase.</p>\n" +
         line_chart_svg(chart) + table + "</tbody></table>\n";
}

std::string validation_section(const json& r) {
  std::string out = "<h2>Validation</h2>\n";
  if (!r.contains("validation") || r["validation"].is_null())
    return out + "<p>Not needed: the original is written unchanged.</p>\n";
  const json& v = r["validation"];
  const bool passed = v.value("passed", false);
  const double atol = num(v, {"atol"}).value_or(0), rtol = num(v, {"rtol"}).value_or(0);
  // Spiking graphs are simulated through time: the steps are the
  // neuromorphic section's (one inference).
  auto steps = num(r, {"neuromorphic", "steps"});
  const bool spiking = !v.value("spike_trains", json::array()).empty();
  out += fmt::format(
      "<p><span class=\"status {}\">{}</span> {} — {} samples{} from seed {}, tolerance |a − b| ≤ {:g} + {:g}·|a| "
      "(a: the original's value){}.</p>\n",
      passed ? "ok" : "bad", passed ? "passed" : "FAILED", escape(str(v, "verdict")), number_text(num(v, {"samples"})),
      spiking && steps ? fmt::format(" of {} steps", number_text(steps)) : "", number_text(num(v, {"seed"})), atol,
      rtol, spiking ? "; spike trains must be identical, layer by layer" : "");
  if (!str(v, "first_divergence").empty())
    out += "<p>First diverging value: <code>" + escape(str(v, "first_divergence")) + "</code></p>\n";
  const json outputs = v.value("outputs", json::array());
  if (!outputs.empty()) {
    out += "<table class=\"sortable\" id=\"outputs\"><thead><tr>" + sort_header("output", "output", false) +
           sort_header("abs", "max abs error", true) + sort_header("rel", "max rel error", true) +
           "<th>tolerance</th>" + sort_header("within", "within tolerance (f32)", false) + "</tr></thead><tbody>\n";
    for (const json& o : outputs) {
      const bool within = o.value("within_tolerance", false);
      out += "<tr>" + sort_cell("<code>" + escape(str(o, "name")) + "</code>", str(o, "name")) +
             sort_cell(number_text(num(o, {"max_abs_error"})), num(o, {"max_abs_error"}), "num") +
             sort_cell(number_text(num(o, {"max_rel_error"})), num(o, {"max_rel_error"}), "num") +
             fmt::format("<td>{:g} + {:g}·|a|</td>", atol, rtol) +
             sort_cell(within ? "yes" : "<span class=\"loss\">no</span>", within ? "yes" : "no") + "</tr>\n";
    }
    out += "</tbody></table>\n";
  } else {
    out += fmt::format("<p>Largest errors: abs {}, rel {} (output <code>{}</code>); this report has no per-output "
                       "figures.</p>\n",
                       number_text(num(v, {"max_abs_error"})), number_text(num(v, {"max_rel_error"})),
                       escape(str(v, "worst_output")));
  }
  if (v.contains("rounding") && v["rounding"].is_object()) {
    const json& rd = v["rounding"];
    out += fmt::format(
        "<p>f64 rounding check: {} — f64 difference {}, original f32 error {}, refined f32 error {}. {}</p>\n",
        rd.value("within_rounding", false) ? "the f32 difference is rounding" : "not rounding",
        number_text(num(rd, {"f64_max_abs_error"})), number_text(num(rd, {"original_f32_error"})),
        number_text(num(rd, {"refined_f32_error"})), escape(str(rd, "verdict")));
  }
  const json spikes = v.value("spike_trains", json::array());
  if (!spikes.empty()) {
    out += "<h3>Spike-train agreement</h3>\n<table class=\"sortable\" id=\"spike-trains\"><thead><tr>" +
           sort_header("layer", "layer", false) + sort_header("op", "op", false) +
           sort_header("orig", "spikes (original)", true) + sort_header("refined", "spikes (refined)", true) +
           sort_header("identical", "trains identical", false) + "</tr></thead><tbody>\n";
    for (const json& t : spikes) {
      const bool same = t.value("identical", false);
      out += "<tr>" + sort_cell("<code>" + escape(str(t, "layer")) + "</code>", str(t, "layer")) +
             sort_cell(escape(str(t, "op")), str(t, "op")) +
             sort_cell(number_text(num(t, {"original_spikes"})), num(t, {"original_spikes"}), "num") +
             sort_cell(number_text(num(t, {"refined_spikes"})), num(t, {"refined_spikes"}), "num") +
             sort_cell(same ? "yes" : "<span class=\"loss\">no</span>", same ? "yes" : "no") + "</tr>\n";
    }
    out += "</tbody></table>\n";
  }
  return out;
}

std::string failure_section(const json* r, const ModelPageOptions& o) {
  const bool report_failed = r && str(*r, "result") == "validation failed";
  const bool job_failed = o.job && o.job->failed;
  if (!report_failed && !job_failed) return "";
  std::string out = "<h2 id=\"failure\">What failed</h2>\n<table class=\"facts\">\n";
  if (o.job)
    out += fact_row("job", fmt::format("<span class=\"status bad\">{}</span> after {}", escape(o.job->status),
                                       escape(seconds_text(o.job->wall_seconds))));
  std::string reason = o.job && !o.job->reason.empty() ? o.job->reason : r ? str(*r, "reason") : "";
  if (!reason.empty()) out += fact_row("reason", "<code>" + escape(reason) + "</code>");
  if (r && r->contains("validation") && (*r)["validation"].is_object() &&
      !str((*r)["validation"], "first_divergence").empty())
    out += fact_row("where", "<code>" + escape(str((*r)["validation"], "first_divergence")) + "</code>");
  std::string command = o.job && !o.job->command.empty() ? o.job->command : r ? str(*r, "command") : "";
  out += fact_row("reproduce", command.empty() ? "<span class=\"muted\">the command is not in this report</span>"
                                               : "<pre id=\"reproduce\">" + escape(command) + "</pre>");
  if (o.job && !o.job->log.empty()) out += fact_row("log", "<code>" + escape(o.job->log) + "</code>");
  out += "</table>\n";
  if (o.job && !o.job->log_tail.empty())
    out += "<p>The log's last lines:</p>\n<pre>" + escape(o.job->log_tail) + "</pre>\n";
  return out;
}

}  // namespace

Expected<std::string> model_page(const json* r, const ModelPageOptions& o) try {
  std::string model = r ? str(*r, "model") : "";
  if (model.empty() && o.job) model = o.job->key;
  const std::string target = r ? str(*r, "target") : "";
  std::string body;
  if (!o.index_href.empty())
    body += "<p><a href=\"" + escape(url_path(o.index_href)) + "\">← all models of the batch</a></p>\n";
  std::string result = r ? str(*r, "result") : o.job ? o.job->status : "";
  if (o.job && o.job->failed) result = o.job->status;
  body += fmt::format("<h1>{}</h1>\n<p>target <b>{}</b> · <span class=\"status {}\" id=\"result\">{}</span>{}</p>\n",
                      escape(model), escape(target.empty() && o.job ? o.job->key : target), status_class(result),
                      escape(result),
                      r && !str(*r, "reason").empty() && str(*r, "result") == "kept original"
                          ? " — " + escape(str(*r, "reason"))
                          : "");
  if (r && !str(*r, "output").empty())
    body += "<p class=\"muted\">written to <code>" + escape(str(*r, "output")) + "</code></p>\n";
  body += failure_section(r, o);
  if (r) {
    body += summary_section(*r);
    body += chip_section(*r);
    body += ops_section(*r);
    body += rules_section(*r, o);
    body += explanations_section(*r);
    body += growth_section(*r);
    body += validation_section(*r);
  } else {
    body += "<p class=\"muted\">This job wrote no report.</p>\n";
  }
  return html_page(fmt::format("{} ({}) — refinery report", model, target), body);
} catch (const json::exception& e) {
  // A report edited by hand, or not one of ours: a value of the wrong type.
  return fail(fmt::format("a report value has the wrong type: {}", e.what()));
}

}  // namespace refinery::report

#include "report/batch_page.h"

#include <fmt/format.h>

#include <functional>
#include <map>

#include "report/html.h"
#include "report/plot.h"

namespace refinery::report {

using json = nlohmann::ordered_json;

namespace {

std::optional<double> num(const std::optional<json>& r, const char* a, const char* b = nullptr) {
  if (!r || !r->is_object() || !r->contains(a)) return std::nullopt;
  const json* v = &(*r)[a];
  if (b) {
    if (!v->is_object() || !v->contains(b)) return std::nullopt;
    v = &(*v)[b];
  }
  return v->is_number() ? std::optional<double>(v->get<double>()) : std::nullopt;
}

// The cost gain in percent: how much cheaper the written graph models.
std::optional<double> gain(const BatchRow& row) {
  auto before = num(row.report, "cost", "before"), after = num(row.report, "cost", "after");
  if (!before || !after || *before <= 0) return std::nullopt;
  return 100 * (1 - *after / *before);
}

std::string cell_num(std::optional<double> v, const std::function<std::string(double)>& text) {
  return sort_cell(v ? escape(text(*v)) : "<span class=\"muted\">—</span>", v, "num");
}

// The report's cost unit: "seconds", or "joules per time step" on a
// neuromorphic target; reports before version 6 priced in seconds only.
std::string cost_unit(const BatchRow& row) {
  if (!row.report || !row.report->is_object() || !row.report->contains("cost")) return "seconds";
  const json& c = (*row.report)["cost"];
  return c.is_object() && c.contains("unit") && c["unit"].is_string() ? c["unit"].get<std::string>() : "seconds";
}

// The validation column: the largest output error, and for a spiking model
// how many layers' spike trains were identical.
std::string validation_cell(const BatchRow& row) {
  auto error = num(row.report, "validation", "max_abs_error");
  std::string shown = error ? escape(fmt::format("{:.3g}", *error)) : "<span class=\"muted\">—</span>";
  if (row.report && row.report->is_object() && row.report->contains("validation")) {
    const json& v = (*row.report)["validation"];
    if (v.is_object() && v.contains("spike_trains") && v["spike_trains"].is_array() && !v["spike_trains"].empty()) {
      std::size_t identical = 0;
      for (const json& t : v["spike_trains"]) identical += t.is_object() && t.value("identical", false);
      const std::size_t n = v["spike_trains"].size();
      shown += fmt::format("<br><small class=\"{}\">spike trains identical in {} of {} layer{}</small>",
                           identical == n ? "gain" : "loss", identical, n, n == 1 ? "" : "s");
    }
  }
  return sort_cell(shown, error, "num");
}

std::string plain(double v) { return fmt::format("{:g}", v); }
std::string times(double v) { return fmt::format("{:.3f}×", v); }
std::string percent(double v) { return fmt::format("{:+.3g}%", v); }

}  // namespace

std::string batch_page(const std::vector<BatchRow>& rows, const BatchPageOptions& o) {
  std::map<std::string, std::size_t> totals;
  for (const BatchRow& r : rows) ++totals[r.status];
  std::string body = "<h1>" + escape(o.title) + "</h1>\n<p id=\"totals\">" + fmt::format("{} jobs", rows.size());
  for (const auto& [status, n] : totals) body += fmt::format(" · {} {}", n, escape(status));
  body +=
      "</p>\n<p class=\"muted\">Click a column header to sort; each model links to its page. Costs are under the "
      "target's cost model: seconds, or nJ per time step on a neuromorphic chip; the measured speedup is a real "
      "runtime's, where ";
  body += o.measured_source.empty() ? "a measurement file was given (none was)."
                                    : "measured (<code>" + escape(o.measured_source) + "</code>).";
  body += "</p>\n";

  body += "<div class=\"wide\"><table class=\"sortable\" id=\"jobs\">\n<thead><tr>" +
          sort_header("model", "model", false) + sort_header("target", "target", false) +
          sort_header("status", "status", false) + sort_header("nodes_before", "nodes before", true) +
          sort_header("nodes_after", "nodes after", true) + sort_header("flops_before", "FLOPs before", true) +
          sort_header("flops_after", "FLOPs after", true) + sort_header("cost_before", "cost before", true) +
          sort_header("cost_after", "cost after", true) + sort_header("gain", "cost gain", true) +
          sort_header("measured", "measured speedup", true) + sort_header("error", "max abs error", true) +
          sort_header("optimize_s", "optimize time", true) + sort_header("wall_s", "job time", true) +
          "</tr></thead>\n<tbody>\n";
  BarChart gains{.id = "plot-gain", .title = "Cost gain under the target's model (%)", .unit = "%"};
  BarChart opt_times{.id = "plot-time", .title = "Optimize time per model", .unit = "s"};
  for (const BatchRow& r : rows) {
    std::string result =
        r.report && r.report->is_object() && r.report->contains("result") && (*r.report)["result"].is_string()
            ? (*r.report)["result"].get<std::string>()
            : "";
    std::string status_html = fmt::format("<span class=\"status {}\">{}</span>",
                                          r.failed ? "bad" : result == "optimized" ? "ok" : "kept", escape(r.status));
    if (!result.empty() && result != r.status)
      status_html += " <span class=\"muted\" style=\"white-space: nowrap\">" + escape(result) + "</span>";
    if (r.failed && !r.reason.empty()) status_html += "<br><small>" + escape(r.reason) + "</small>";
    std::string model_html = escape(r.model);
    if (!r.page.empty()) model_html = "<a href=\"" + escape(url_path(r.page)) + "\">" + model_html + "</a>";
    const std::string unit = cost_unit(r);
    auto cost = [&](double c) { return cost_text(c, unit); };
    body += "<tr>" + sort_cell(model_html, r.model) + sort_cell(escape(r.target), r.target) +
            sort_cell(status_html, r.status) + cell_num(num(r.report, "graph", "nodes_before"), plain) +
            cell_num(num(r.report, "graph", "nodes_after"), plain) +
            cell_num(num(r.report, "cost", "flops_before"), count_text) +
            cell_num(num(r.report, "cost", "flops_after"), count_text) +
            cell_num(num(r.report, "cost", "before"), cost) + cell_num(num(r.report, "cost", "after"), cost) +
            cell_num(gain(r), percent) + cell_num(r.measured_speedup, times) + validation_cell(r) +
            cell_num(num(r.report, "seconds", "total"), seconds_text) +
            cell_num(std::optional<double>(r.wall_seconds), seconds_text) + "</tr>\n";
    const std::string label = r.model + " (" + r.target + ")";
    gains.bars.push_back({label, gain(r), r.page});
    opt_times.bars.push_back({label, num(r.report, "seconds", "total"), r.page});
  }
  body += "</tbody></table></div>\n<h2>Across the batch</h2>\n<div class=\"plots\">\n" + bar_chart_svg(gains) +
          bar_chart_svg(opt_times) + "</div>\n";
  return html_page(o.title, body);
}

}  // namespace refinery::report

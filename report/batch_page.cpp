#include "report/batch_page.h"

#include <fmt/format.h>

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

std::string cell_num(std::optional<double> v, std::string (*text)(double)) {
  return sort_cell(v ? escape(text(*v)) : "<span class=\"muted\">—</span>", v, "num");
}

std::string plain(double v) { return fmt::format("{:g}", v); }
std::string sci(double v) { return fmt::format("{:.3g}", v); }
std::string times(double v) { return fmt::format("{:.3f}×", v); }
std::string percent(double v) { return fmt::format("{:+.3g}%", v); }

}  // namespace

std::string batch_page(const std::vector<BatchRow>& rows, const BatchPageOptions& o) {
  std::map<std::string, std::size_t> totals;
  for (const BatchRow& r : rows) ++totals[r.status];
  std::string body = "<h1>" + escape(o.title) + "</h1>\n<p id=\"totals\">" + fmt::format("{} jobs", rows.size());
  for (const auto& [status, n] : totals) body += fmt::format(" · {} {}", n, escape(status));
  body += "</p>\n<p class=\"muted\">Click a column header to sort; each model links to its page. Costs are seconds "
          "under the target's cost model; the measured speedup is a real runtime's, where ";
  body += o.measured_source.empty() ? "a measurement file was given (none was)."
                                    : "measured (<code>" + escape(o.measured_source) + "</code>).";
  body += "</p>\n";

  body += "<div class=\"wide\"><table class=\"sortable\" id=\"jobs\">\n<thead><tr>" + sort_header("model", "model", false) +
          sort_header("target", "target", false) + sort_header("status", "status", false) +
          sort_header("nodes_before", "nodes before", true) + sort_header("nodes_after", "nodes after", true) +
          sort_header("flops_before", "FLOPs before", true) + sort_header("flops_after", "FLOPs after", true) +
          sort_header("cost_before", "cost before", true) + sort_header("cost_after", "cost after", true) +
          sort_header("gain", "cost gain", true) + sort_header("measured", "measured speedup", true) +
          sort_header("error", "max abs error", true) + sort_header("optimize_s", "optimize time", true) +
          sort_header("wall_s", "job time", true) + "</tr></thead>\n<tbody>\n";
  BarChart gains{.id = "plot-gain", .title = "Cost gain under the target's model (%)", .unit = "%"};
  BarChart opt_times{.id = "plot-time", .title = "Optimize time per model", .unit = "s"};
  for (const BatchRow& r : rows) {
    std::string result = r.report && r.report->is_object() && r.report->contains("result") && (*r.report)["result"].is_string()
                             ? (*r.report)["result"].get<std::string>()
                             : "";
    std::string status_html = fmt::format("<span class=\"status {}\">{}</span>",
                                          r.failed ? "bad" : result == "optimized" ? "ok" : "kept", escape(r.status));
    if (!result.empty() && result != r.status)
      status_html += " <span class=\"muted\" style=\"white-space: nowrap\">" + escape(result) + "</span>";
    if (r.failed && !r.reason.empty()) status_html += "<br><small>" + escape(r.reason) + "</small>";
    std::string model_html = escape(r.model);
    if (!r.page.empty()) model_html = "<a href=\"" + escape(url_path(r.page)) + "\">" + model_html + "</a>";
    auto validation_error = num(r.report, "validation", "max_abs_error");
    body += "<tr>" + sort_cell(model_html, r.model) + sort_cell(escape(r.target), r.target) +
            sort_cell(status_html, r.status) + cell_num(num(r.report, "graph", "nodes_before"), plain) +
            cell_num(num(r.report, "graph", "nodes_after"), plain) +
            cell_num(num(r.report, "cost", "flops_before"), count_text) +
            cell_num(num(r.report, "cost", "flops_after"), count_text) +
            cell_num(num(r.report, "cost", "before"), seconds_text) +
            cell_num(num(r.report, "cost", "after"), seconds_text) + cell_num(gain(r), percent) +
            cell_num(r.measured_speedup, times) + cell_num(validation_error, sci) +
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

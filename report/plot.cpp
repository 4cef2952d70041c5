#include "report/plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/html.h"

namespace refinery::report {

namespace {

constexpr const char* kColors[] = {"#3b6fd4", "#d4793b", "#3ba55c", "#9b4dca"};

// A label at most `n` characters, the end kept (model names differ at the end).
std::string clip(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : "…" + s.substr(s.size() - (n - 1));
}

std::string value_text(double v, const std::string& unit) {
  if (unit == "s") return seconds_text(v);
  return fmt::format("{:.3g}{}", v, unit.empty() ? "" : " " + unit);
}

// A "nice" step for about `ticks` ticks over [0, span].
double nice_step(double span, int ticks) {
  double raw = span / ticks, mag = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

}  // namespace

std::string bar_chart_svg(const BarChart& c) {
  const double label_w = 250, plot_w = 360, value_w = 90, row_h = 18, top = 34, bottom = 10;
  const double width = label_w + plot_w + value_w,
               height = top + row_h * std::max<std::size_t>(c.bars.size(), 1) + bottom;
  double lo = 0, hi = 0;
  for (const Bar& b : c.bars)
    if (b.value && std::isfinite(*b.value)) lo = std::min(lo, *b.value), hi = std::max(hi, *b.value);
  if (hi == lo) hi = lo + 1;
  auto x_of = [&](double v) { return label_w + plot_w * (v - lo) / (hi - lo); };
  std::string out = fmt::format(
      "<svg class=\"plot\" id=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n"
      "<text x=\"8\" y=\"20\" font-size=\"14\" font-weight=\"600\">{}</text>\n",
      escape(c.id), width, height, width, height, escape(c.title), escape(c.title));
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#888\"/>\n", x_of(0), top - 4,
                     height - bottom);
  if (c.bars.empty())
    out += fmt::format("<text x=\"8\" y=\"{}\" font-size=\"12\" fill=\"#7a8090\">no data</text>\n", top + 12);
  for (std::size_t i = 0; i < c.bars.size(); ++i) {
    const Bar& b = c.bars[i];
    const double y = top + row_h * i;
    std::string label = fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>",
                                    label_w - 6, y + 13, escape(clip(b.label, 34)));
    if (!b.href.empty()) label = fmt::format("<a href=\"{}\">{}</a>", escape(url_path(b.href)), label);
    out += fmt::format("<g class=\"bar\"><title>{}</title>{}", escape(b.label), label);
    if (b.value && std::isfinite(*b.value)) {
      double x0 = x_of(std::min(0.0, *b.value)), x1 = x_of(std::max(0.0, *b.value));
      out += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>", x0, y + 3,
                         std::max(x1 - x0, 0.5), row_h - 6, *b.value < 0 ? "#c64b4b" : kColors[0]);
      out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>", label_w + plot_w + 6, y + 13,
                         escape(value_text(*b.value, c.unit)));
    } else {
      out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"#7a8090\">no value</text>", x_of(0) + 4,
                         y + 13);
    }
    out += "</g>\n";
  }
  return out + "</svg>\n";
}

std::string line_chart_svg(const LineChart& c) {
  const double left = 64, right = 130, top = 34, bottom = 40, plot_w = 480, plot_h = 220;
  const double width = left + plot_w + right, height = top + plot_h + bottom;
  std::size_t n = 0;
  double hi = 0;
  for (const Series& s : c.series) {
    n = std::max(n, s.values.size());
    for (double v : s.values) hi = std::max(hi, v);
  }
  if (hi <= 0) hi = 1;
  const double step = nice_step(hi, 5);
  hi = std::ceil(hi / step) * step;
  const double x_span = n > 1 ? static_cast<double>(n - 1) : 1;
  auto x_of = [&](double x) { return left + plot_w * x / x_span; };
  auto y_of = [&](double y) { return top + plot_h * (1 - y / hi); };
  std::string out = fmt::format(
      "<svg class=\"plot\" id=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n"
      "<text x=\"8\" y=\"20\" font-size=\"14\" font-weight=\"600\">{}</text>\n",
      escape(c.id), width, height, width, height, escape(c.title), escape(c.title));
  for (double y = 0; y <= hi * (1 + 1e-9); y += step)
    out += fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#e3e5ec\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{}</text>\n",
        left, y_of(y), left + plot_w, y_of(y), left - 6, y_of(y) + 4, escape(count_text(y)));
  const std::size_t x_step = std::max<std::size_t>(1, static_cast<std::size_t>(nice_step(x_span, 8)));
  for (std::size_t x = 0; x < std::max<std::size_t>(n, 1); x += x_step)
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n",
                       x_of(static_cast<double>(x)), top + plot_h + 15, x);
  out += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#888\"/><line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" "
      "y2=\"{2}\" stroke=\"#888\"/>\n"
      "<text x=\"{4}\" y=\"{5}\" font-size=\"12\" text-anchor=\"middle\">{6}</text>\n"
      "<text x=\"14\" y=\"{7}\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 {7})\">{8}</text>\n",
      left, top, top + plot_h, left + plot_w, left + plot_w / 2, height - 6, escape(c.x_label), top + plot_h / 2,
      escape(c.y_label));
  for (std::size_t k = 0; k < c.markers.size(); ++k) {
    const Marker& m = c.markers[k];
    // Phases can start an iteration apart: labels alternate between two rows.
    out += fmt::format(
        "<line class=\"marker\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#aab\" "
        "stroke-dasharray=\"4 3\"/><text x=\"{3:.1f}\" y=\"{4}\" font-size=\"11\" fill=\"#556\">{5}</text>\n",
        x_of(m.x), top, top + plot_h, x_of(m.x) + 3, top + 11 + 13 * (k % 2), escape(m.label));
  }
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    const Series& s = c.series[k];
    const char* color = kColors[k % std::size(kColors)];
    std::string points;
    for (std::size_t i = 0; i < s.values.size(); ++i)
      points += fmt::format("{}{:.1f},{:.1f}", i ? " " : "", x_of(static_cast<double>(i)), y_of(s.values[i]));
    out += fmt::format("<polyline class=\"series\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n",
                       color, points);
    for (std::size_t i = 0; i < s.values.size(); ++i)
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"><title>{} {}: {}</title></circle>",
                         x_of(static_cast<double>(i)), y_of(s.values[i]), color, escape(s.name), i, s.values[i]);
    out += fmt::format(
        "\n<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"3\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
        "font-size=\"12\">{}</text>\n",
        left + plot_w + 12, top + 12 + 18 * k, color, left + plot_w + 28, top + 16 + 18 * k, escape(s.name));
  }
  return out + "</svg>\n";
}

}  // namespace refinery::report

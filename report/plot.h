// Plots as inline SVG, drawn here (no library, no network): horizontal bars
// for one figure per model (a batch page's cost gains and times) and lines
// over iterations (a model page's e-graph growth).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace refinery::report {

struct Bar {
  std::string label;
  std::optional<double> value;  // none: drawn as "no value" (a failed job)
  std::string href;             // the label links here when set
};

struct BarChart {
  std::string id, title, unit;  // unit follows each value ("%", "s")
  std::vector<Bar> bars;
};
// One row per bar; negative values extend left of the zero line.
std::string bar_chart_svg(const BarChart& chart);

struct Series {
  std::string name;
  std::vector<double> values;  // y at x = 0, 1, 2, ...
};

struct Marker {
  double x = 0;  // where a vertical line is drawn, labelled
  std::string label;
};

struct LineChart {
  std::string id, title, x_label, y_label;
  std::vector<Series> series;
  std::vector<Marker> markers;
};
std::string line_chart_svg(const LineChart& chart);

}  // namespace refinery::report

// The HTML shell every report page shares: escaping, number formatting, and
// one page layout with inline CSS and JS (no network: the page opens from
// disk). The script sorts tables whose header cells carry data-key (click a
// header; "#sort=KEY" or "#sort=-KEY" in the URL sorts on load), records any
// script error in the page (<html data-js-error="...">) and marks the page
// ready (<body data-ready="1">) once it has run: docs/report.md.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace refinery::report {

// Text for HTML content and attribute values (and SVG): & < > " ' escaped.
std::string escape(std::string_view text);
// A relative path for an href: each byte outside [A-Za-z0-9/._~-] as %XX.
std::string url_path(std::string_view path);

// "1.23 ms", "4.5 s": seconds at a readable scale.
std::string seconds_text(double seconds);
// A report's cost in its unit (the report's cost.unit): seconds as
// seconds_text, "joules per time step" as "2.45 nJ/step".
std::string cost_text(double cost, std::string_view unit);
// "1.2 G", "35 M", "870": large counts (FLOPs, bytes) with SI prefixes.
std::string count_text(double count);
// A number at 4 significant digits; "—" when absent.
std::string number_text(std::optional<double> value);

// A sortable table's header cell: data-key KEY, numeric or text sort.
std::string sort_header(std::string_view key, std::string_view label, bool numeric);
// A body cell shown as `shown` (already HTML) that sorts by `sort_value`.
std::string sort_cell(std::string_view shown_html, std::string_view sort_value, std::string_view css_class = {});
std::string sort_cell(std::string_view shown_html, std::optional<double> sort_value, std::string_view css_class = {});

// A whole page: doctype, title, the inline style and script, the body.
std::string html_page(std::string_view title, std::string_view body_html);

}  // namespace refinery::report

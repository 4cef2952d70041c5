#include "report/html.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

namespace refinery::report {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  return out;
}

std::string url_path(std::string_view path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '~' || c == '-')
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

std::string seconds_text(double s) {
  if (!std::isfinite(s)) return "—";
  if (s == 0) return "0 s";
  if (std::fabs(s) < 1e-3) return fmt::format("{:.3g} µs", s * 1e6);
  if (std::fabs(s) < 1) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} s", s);
}

std::string cost_text(double cost, std::string_view unit) {
  if (unit == "joules per time step") return std::isfinite(cost) ? fmt::format("{:.4g} nJ/step", cost * 1e9) : "—";
  return seconds_text(cost);
}

std::string count_text(double n) {
  if (!std::isfinite(n)) return "—";
  const double a = std::fabs(n);
  if (a >= 1e12) return fmt::format("{:.3g} T", n / 1e12);
  if (a >= 1e9) return fmt::format("{:.3g} G", n / 1e9);
  if (a >= 1e6) return fmt::format("{:.3g} M", n / 1e6);
  if (a >= 1e4) return fmt::format("{:.3g} k", n / 1e3);
  return fmt::format("{:g}", n);
}

std::string number_text(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return "—";
  return fmt::format("{:.4g}", *v);
}

std::string sort_header(std::string_view key, std::string_view label, bool numeric) {
  return fmt::format("<th data-key=\"{}\" data-type=\"{}\" aria-sort=\"none\" tabindex=\"0\">{}</th>", escape(key),
                     numeric ? "number" : "text", escape(label));
}

std::string sort_cell(std::string_view shown, std::string_view sort_value, std::string_view css_class) {
  return fmt::format("<td data-v=\"{}\"{}>{}</td>", escape(sort_value),
                     css_class.empty() ? "" : fmt::format(" class=\"{}\"", escape(css_class)), shown);
}

std::string sort_cell(std::string_view shown, std::optional<double> sort_value, std::string_view css_class) {
  // Absent and non-finite values sort last (an empty data-v).
  std::string v = sort_value && std::isfinite(*sort_value) ? fmt::format("{}", *sort_value) : "";
  return sort_cell(shown, v, css_class);
}

namespace {

constexpr std::string_view kStyle = R"css(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em 2em; color: #1d2330; background: #fff; }
h1 { font-size: 1.5em; margin: 0 0 .3em; } h2 { font-size: 1.15em; margin: 1.6em 0 .5em; border-bottom: 1px solid #dde; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .4em 0; font-size: 13px; } th, td { padding: .25em .5em; border-bottom: 1px solid #e6e8ef; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.wide { overflow-x: auto; }
th[data-key] { cursor: pointer; user-select: none; white-space: nowrap; background: #f4f5f9; }
th[data-key]:hover { background: #e8ebf5; }
th[aria-sort="ascending"]::after { content: " \25B2"; font-size: .75em; } th[aria-sort="descending"]::after { content: " \25BC"; font-size: .75em; }
.status { font-weight: 600; padding: .05em .45em; border-radius: .3em; white-space: nowrap; }
.ok { background: #dff3e4; color: #17602c; } .kept { background: #eef0f4; color: #4a5060; } .bad { background: #fbe1e1; color: #8d1c1c; }
.muted { color: #7a8090; } .gain { color: #17602c; } .loss { color: #8d1c1c; }
code, pre { font: 12.5px ui-monospace, SFMono-Regular, Menlo, monospace; } pre { background: #f6f7fa; padding: .6em; overflow-x: auto; white-space: pre-wrap; }
.chain { list-style: none; padding-left: 0; margin: 0; } .chain li { display: inline; } .chain .step::before { content: " \2192  "; color: #7a8090; }
.plots { display: flex; flex-wrap: wrap; gap: 1.5em; } svg.plot { background: #fbfbfd; border: 1px solid #e6e8ef; }
.facts td:first-child { color: #4a5060; }
)css";

// First in <head>: a script error anywhere on the page is written into the
// page itself, where a headless browser's --dump-dom sees it.
constexpr std::string_view kErrorCatcher = R"js(
window.onerror = function (message, source, line) {
  document.documentElement.setAttribute('data-js-error', String(message) + ' (line ' + line + ')');
};
window.addEventListener('unhandledrejection', function (e) {
  document.documentElement.setAttribute('data-js-error', 'unhandled rejection: ' + String(e.reason));
});
)js";

// Last in <body>: sortable tables, then the ready mark.
constexpr std::string_view kSortScript = R"js(
(function () {
  function value(row, col, numeric) {
    var v = row.cells[col].getAttribute('data-v');
    if (!numeric) return v === null ? row.cells[col].textContent : v;
    return v === null || v === '' ? NaN : Number(v);
  }
  function sortBy(table, th, descending) {
    var col = th.cellIndex, numeric = th.getAttribute('data-type') === 'number';
    var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows), dir = descending ? -1 : 1;
    rows.sort(function (a, b) {
      var x = value(a, col, numeric), y = value(b, col, numeric);
      if (numeric) {
        if (isNaN(x) || isNaN(y)) return isNaN(x) - isNaN(y);  // absent values last, either way
        return dir * (x - y);
      }
      return dir * String(x).localeCompare(String(y));
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(th.parentNode.cells, function (c) { c.setAttribute('aria-sort', 'none'); });
    th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
  }
  var tables = document.querySelectorAll('table.sortable');
  Array.prototype.forEach.call(tables, function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      if (!th.hasAttribute('data-key')) return;
      var toggle = function () { sortBy(table, th, th.getAttribute('aria-sort') === 'ascending'); };
      th.addEventListener('click', toggle);
      th.addEventListener('keydown', function (e) { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); toggle(); } });
    });
  });
  var m = /(?:^#|&)sort=(-?)([A-Za-z0-9_]+)/.exec(window.location.hash);
  if (m && tables.length) {
    var th = tables[0].querySelector('th[data-key="' + m[2] + '"]');
    if (th) sortBy(tables[0], th, m[1] === '-');
  }
  document.body.setAttribute('data-ready', '1');
})();
)js";

}  // namespace

std::string html_page(std::string_view title, std::string_view body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "script-src 'unsafe-inline'; img-src data:\">\n"
      "<title>{}</title>\n<script>{}</script>\n<style>{}</style>\n</head>\n<body>\n{}\n<script>{}</script>\n</body>\n"
      "</html>\n",
      escape(title), kErrorCatcher, kStyle, body, kSortScript);
}

}  // namespace refinery::report

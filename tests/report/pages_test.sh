#!/usr/bin/env bash
# The reports as a person and a program see them:
#  1. real reports (optimize --report on examples/tiny_cnn.onnx, a batch's
#     model reports, summary.json and journal.json, a failing job among them;
#     and docs/report.md's example)
#     validate against report/schema/*.schema.json (/usr/bin/python3 with
#     jsonschema: Debian's python3-jsonschema);
#  2. the pages open in headless Chromium (Debian's chromium) from disk: each
#     renders with no script error (the page writes any into
#     <html data-js-error>) and no console message (--enable-logging=stderr
#     prints each as a CONSOLE line; the pages log nothing), runs its script
#     to the end (<body data-ready="1">), and has its table and plots; a URL
#     ending in #sort=KEY sorts the batch table in the browser; a model named
#     <script>... injects nothing.
#
#   bash tests/report/pages_test.sh REFINERY_EXE
#
# Chromium or jsonschema missing is a failure (scripts/setup.sh installs both).
# Ends with "N passed, M failed".
set -u
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
EXE="${1:?usage: pages_test.sh REFINERY_EXE}"
PY=/usr/bin/python3
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1${2:+: $2}"; }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

command -v chromium >/dev/null || { ko chromium "chromium is not installed: run scripts/setup.sh"; finish; }
$PY -c 'import jsonschema' 2>/dev/null || { ko jsonschema "$PY lacks jsonschema: run scripts/setup.sh"; finish; }

# The inputs: tiny_cnn, a copy named to inject script, and a file that is no model.
HOSTILE='<img src=x onerror=document.body.setAttribute("data-pwned",1)><script>document.title="pwned".onnx'
mkdir -p "$TMP/models"
cp "$ROOT/examples/tiny_cnn.onnx" "$TMP/models/tiny_cnn.onnx"
cp "$ROOT/examples/tiny_cnn.onnx" "$TMP/models/$HOSTILE"
echo "not a model" >"$TMP/models/broken.onnx"

"$EXE" optimize "$ROOT/examples/tiny_cnn.onnx" -o "$TMP/tiny.opt.onnx" --report "$TMP/tiny.json" --html "$TMP/tiny.html" \
  >"$TMP/optimize.log" 2>&1 && ok "optimize --report --html" || ko "optimize --report --html" "$(tail -5 "$TMP/optimize.log")"
"$EXE" batch "$TMP/models" -o "$TMP/out" --target cpu,gpu --jobs 2 >"$TMP/batch.log" 2>&1
rc=$?
[ "$rc" -eq 1 ] && ok "batch exits 1 (broken.onnx)" || ko "batch exit" "exit $rc; $(tail -5 "$TMP/batch.log")"

# A spiking network for a neuromorphic chip (tests/nir/data/two_affines.ir:
# two synapse layers that affine-affine merges, then a LIF; validation
# compares spike trains).
mkdir -p "$TMP/nir"
# The README's NIR batch command as written (two files of ../shared/nir),
# with this network added.
readme_batch=$(grep -m1 '^    build/cli/refinery batch ../shared/nir/' "$ROOT/README.md" | sed 's/^ *build\/cli\/refinery //')
[ -n "$readme_batch" ] || ko "README's NIR batch command" "not found in README.md"
readme_batch=${readme_batch//..\/shared\/nir/$ROOT\/..\/shared\/nir}
readme_batch=${readme_batch//\/tmp\/nir.out/$TMP\/nir_out}
"$EXE" convert "$ROOT/tests/nir/data/two_affines.ir" "$TMP/nir/two_affines.nir" >"$TMP/convert.log" 2>&1 &&
  "$EXE" $readme_batch "$TMP/nir" --jobs 2 >"$TMP/nir_batch.log" 2>&1 &&
  ok "the README's NIR batch, and a NIR model for loihi2" ||
  ko "the README's NIR batch, and a NIR model for loihi2" "$(tail -5 "$TMP/convert.log" "$TMP/nir_batch.log")"

# 1. The JSON against the schemas.
$PY - "$ROOT/report/schema" "$TMP" "$ROOT/docs/report.md" <<'PY' && ok "reports match the schemas" || ko "reports match the schemas"
import glob, json, os, sys
import jsonschema
schemas, tmp, doc = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
# docs/report.md's example is a report too.
example = doc[doc.index("```json\n") + 8:]
json.dump(json.loads(example[:example.index("\n```")]), open(os.path.join(tmp, "doc_example.json"), "w"))
def check(schema_file, files):
    schema = json.load(open(os.path.join(schemas, schema_file)))
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    assert files, f"no files for {schema_file}"
    for f in files:
        errors = list(v.iter_errors(json.load(open(f))))
        for e in errors[:5]:
            print(f"{f}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
        assert not errors, f
    print(f"{schema_file}: {len(files)} files valid")
reports = [os.path.join(tmp, "tiny.json"), os.path.join(tmp, "doc_example.json")] + \
    glob.glob(os.path.join(tmp, "out", "**", "*.report.json"), recursive=True)
assert len(reports) == 6, reports  # tiny.json, the doc's example and two models for two targets
nir = glob.glob(os.path.join(tmp, "nir_out", "**", "*.report.json"), recursive=True)
assert len(nir) == 3, nir  # the README's two and the two-affines network, for loihi2
check("report.schema.json", reports + nir)
check("batch.schema.json", [os.path.join(tmp, d, f) for d in ("out", "nir_out") for f in ("summary.json", "journal.json")])
jobs = json.load(open(os.path.join(tmp, "nir_out", "summary.json")))["jobs"]
assert [j["result"]["cost_unit"] for j in jobs] == ["joules per time step"] * 3, jobs
# The schema rejects what it should: an unknown key, a wrong version.
r = json.load(open(reports[0]))
v = jsonschema.Draft202012Validator(json.load(open(os.path.join(schemas, "report.schema.json"))))
assert not v.is_valid({**r, "surprise": 1}) and not v.is_valid({**r, "refinery_report": 3})
PY

# 2. The pages in the browser. render URL NAME: dumps the DOM to $TMP/NAME.dom
# and Chromium's log to $TMP/NAME.err.
render() {
  timeout 120 chromium --headless --disable-gpu --no-sandbox --no-first-run --disable-extensions \
    --user-data-dir="$TMP/chromium-profile" --enable-logging=stderr --v=0 --virtual-time-budget=3000 \
    --dump-dom "$1" >"$TMP/$2.dom" 2>"$TMP/$2.err"
}
# check NAME WHAT PYTHON-CHECKS...: the DOM rendered, no script error, no console line, then the checks.
check() {
  local name=$1 what=$2; shift 2
  if ! [ -s "$TMP/$name.dom" ]; then ko "$what" "no DOM: $(tail -3 "$TMP/$name.err")"; return; fi
  if grep -q ':CONSOLE' "$TMP/$name.err"; then ko "$what" "console: $(grep ':CONSOLE' "$TMP/$name.err" | head -3)"; return; fi
  $PY - "$TMP/$name.dom" "$@" <<'PY' && ok "$what" || ko "$what"
import sys
from html.parser import HTMLParser
class Dom(HTMLParser):
    def __init__(self):
        super().__init__(); self.elements = []; self.stack = []
    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), list(self.stack)))
        if tag not in ("meta", "br", "img", "input", "link", "rect", "line", "circle", "polyline"): self.stack.append(tag)
    def handle_endtag(self, tag):
        while self.stack and self.stack.pop() != tag: pass
dom = Dom(); dom.feed(open(sys.argv[1]).read())
def find(tag, **attrs):
    return [e for e in dom.elements if e[0] == tag and all(e[1].get(k) == v for k, v in attrs.items())]
html = find("html")[0][1]
assert "data-js-error" not in html, "script error: " + html["data-js-error"]
assert find("body", **{"data-ready": "1"}), "the page's script did not run to the end"
assert not find("img") and not [e for e in dom.elements if "data-pwned" in e[1]], "a name injected markup"
assert len(find("script")) == 2, "scripts: %d" % len(find("script"))
for check in sys.argv[2:]:
    exec(check)
PY
}

INDEX="file://$TMP/out/index.html"
render "$INDEX" index
check index "batch page renders: table with a row per job, both plots, links" \
  'assert len(find("table", id="jobs")) == 1' \
  'rows = [e for e in find("tr") if "tbody" in e[2]]; assert len(rows) == 6, len(rows)' \
  'assert find("svg", id="plot-gain") and find("svg", id="plot-time")' \
  'assert len([e for e in find("rect") if e[1].get("height") == "12"]) >= 4, "bars"' \
  'links = [e[1]["href"] for e in find("a") if e[1].get("href", "").endswith(".html")]; assert len(links) >= 6, links'
# Sorting in the browser: by model ascending (unsorted, the rows are by key:
# target first), by job time descending.
render "$INDEX#sort=model" sorted_model
check sorted_model "#sort=model sorts the table by model" \
  'th = find("th", **{"data-key": "model"})[0]; assert th[1]["aria-sort"] == "ascending", th' \
  'models = [e[1]["data-v"] for e in find("td") if "tbody" in e[2]][0::14]; assert len(models) == 6 and models == sorted(models), models'
render "$INDEX#sort=-wall_s" sorted_time
check sorted_time "#sort=-wall_s sorts the table by job time, descending" \
  'vals = [float(v) for v in [e[1]["data-v"] for e in find("td") if "tbody" in e[2]][13::14]]; assert vals == sorted(vals, reverse=True) and len(vals) == 6, vals'

render "file://$TMP/out/cpu/models/tiny_cnn.onnx.html" model
check model "model page renders: ops diff, rules, explanations, growth plot, per-output validation" \
  'assert find("table", id="ops") and find("svg", id="egraph-growth") and find("table", id="outputs")' \
  'assert find("polyline", **{"class": "series"}), "no growth line"'
render "file://$TMP/out/cpu/models/broken.onnx.html" broken
check broken "failed job page renders: what failed and the command to rerun it" \
  'assert find("h2", id="failure") and find("pre", id="reproduce")'
hostile_page=$($PY -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$TMP/out/cpu/models/$HOSTILE.html")
render "file://$hostile_page" hostile
check hostile "a model named <img ...><script>... renders as text" 'assert "/models/&lt;img src=x onerror=" in open(sys.argv[1]).read().split("<h1>")[1].split("</h1>")[0]'
render "file://$TMP/nir_out/index.html" nir_index
check nir_index "batch page of a NIR model: costs in nJ per step, spike trains identical" \
  'cells = [e for e in find("td") if "tbody" in e[2]]; text = open(sys.argv[1]).read(); assert text.count("nJ/step") == 6, text.count("nJ/step")' \
  'assert "spike trains identical in 1 of 1 layer" in open(sys.argv[1]).read()'
render "file://$TMP/nir_out/loihi2/nir/two_affines.nir.html" nir_model
check nir_model "NIR model page: the chip before and after, weights, spike-train agreement" \
  'assert find("table", id="chip-before") and find("table", id="chip-after") and find("table", id="chip-weights")' \
  'assert find("table", id="spike-trains")' \
  'text = open(sys.argv[1]).read(); assert "2 → 1" in text and "passed</span> exact — 3 samples of 100 steps" in text, "cores 2 -> 1 and the verdict"'
render "file://$TMP/tiny.html" single
check single "optimize --html page renders" 'assert find("svg", id="egraph-growth")'
finish

#!/usr/bin/env bash
# Optimizes every zoo model with `refinery optimize --target cpu`, then
# measures original against optimized under ONNX Runtime (bench.mjs: single
# thread, full ORT optimization for both, alternating runs).
#
#   bench/ort/run_zoo.sh BUILD_DIR [OUT_DIR]
#
# Environment: ZOO (default BUILD_DIR/zoo), RUNS (default 20), MODELS (names, default every zoo model),
# OPTIMIZE_FLAGS (extra flags for refinery optimize, e.g. "--rules a.rules").
# OUT_DIR (default BUILD_DIR/zoo_opt) gets X.onnx (a link to the zoo's),
# X.opt.onnx and X.report.json per model, and bench.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: bench/ort/run_zoo.sh BUILD_DIR [OUT_DIR]}
out=${2:-$build/zoo_opt}
mkdir -p "$out"
zoo=${ZOO:-$build/zoo}
models=${MODELS:-$(cd "$zoo" && ls *.onnx | sed "s/\.onnx$//")}
start=$(date +%s.%N)
for m in $models; do
  ln -sf "$(realpath "$zoo/$m.onnx")" "$out/$m.onnx"
  # shellcheck disable=SC2086
  if ! "$build/cli/refinery" optimize "$zoo/$m.onnx" -o "$out/$m.opt.onnx" --target cpu \
       --report "$out/$m.report.json" ${OPTIMIZE_FLAGS:-} > "$out/$m.log" 2>&1; then
    echo "optimize $m failed:"; cat "$out/$m.log"; rm -f "$out/$m.onnx"
  fi
done
end=$(date +%s.%N)
echo "== optimized the zoo in $(echo "$end - $start" | bc) s"
/usr/bin/python3 - "$out" $models <<'PY'
import json, sys, os
out = sys.argv[1]
print(f"{'model':<20} {'e-graph nodes':>13} {'iters':>5} {'stop':<16} {'time s':>7} {'cost x':>7}  rules used")
for m in sys.argv[2:]:
    p = os.path.join(out, m + '.report.json')
    if not os.path.exists(p): continue
    r = json.load(open(p))
    it = sum(len(ph['iterations']) for ph in r['saturation']['phases'])
    used = ', '.join(f"{k} ({v})" for k, v in sorted(r['rules_used'].items(), key=lambda kv: -kv[1])) or '-'
    print(f"{m:<20} {r['saturation']['egraph']['nodes']:>13} {it:>5} {r['saturation']['stop_reason']:<16} "
          f"{r['seconds']['total']:>7.2f} {r['cost']['speedup'] or 1:>7.3f}  {r['result']}: {used}")
PY
node bench/ort/bench.mjs --models "$out" --runs "${RUNS:-20}" --json "$out/bench.json"

#!/usr/bin/env bash
# Optimizes every zoo model with one `refinery batch --target cpu`, then
# measures original against optimized under ONNX Runtime (bench.mjs: single
# thread, full ORT optimization for both, alternating runs).
#
#   bench/ort/run_zoo.sh BUILD_DIR [OUT_DIR]
#
# Environment: ZOO (default BUILD_DIR/zoo), RUNS (default 20), MODELS (names, default every zoo model),
# JOBS (models optimized at once, default 1: each model's optimize time as on its own),
# TIMEOUT (seconds per model, default none), BATCH_FLAGS (extra flags for refinery batch, e.g.
# "--time-limit 10 --node-limit 50000").
# OUT_DIR (default BUILD_DIR/zoo_opt) gets models.txt (the manifest), the
# batch's output (cpu/X.onnx, cpu/X.onnx.report.json, cpu/X.onnx.log,
# journal.json, summary.json; docs/batch.md), pairs.txt (bench.mjs's --pairs) and bench.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: bench/ort/run_zoo.sh BUILD_DIR [OUT_DIR]}
out=${2:-$build/zoo_opt}
mkdir -p "$out"
zoo=${ZOO:-$build/zoo}
models=${MODELS:-$(cd "$zoo" && ls *.onnx | sed "s/\.onnx$//")}
for m in $models; do realpath "$zoo/$m.onnx"; done > "$out/models.txt"
start=$(date +%s.%N)
# Exit 1 (some model failed) is reported below, model by model; 2 is a bad invocation.
# shellcheck disable=SC2086
"$build/cli/refinery" batch "$out/models.txt" -o "$out" --target cpu --jobs "${JOBS:-1}" \
  --timeout "${TIMEOUT:-0}" --progress=plain ${BATCH_FLAGS:-} || [[ $? == 1 ]]
end=$(date +%s.%N)
echo "== optimized the zoo in $(echo "$end - $start" | bc) s"
/usr/bin/python3 - "$out/summary.json" "$out/pairs.txt" <<'PY'
import json, sys
jobs = json.load(open(sys.argv[1]))['jobs']
print(f"{'model':<20} {'e-graph nodes':>13} {'iters':>5} {'stop':<16} {'time s':>7} {'cost x':>7}  rules used")
pairs = []
for j in jobs:
    m = j['key'].split('/', 1)[1].removesuffix('.onnx')
    if j['status'] != 'written':
        print(f"optimize {m} failed: {j['status']}: {j.get('reason', '')} (log: {j['log']})")
        continue
    r = json.load(open(j['report']))
    it = sum(len(ph['iterations']) for ph in r['saturation']['phases'])
    used = ', '.join(f"{k} ({v})" for k, v in sorted(r['rules_used'].items(), key=lambda kv: -kv[1])) or '-'
    print(f"{m:<20} {r['saturation']['egraph']['nodes']:>13} {it:>5} {r['saturation']['stop_reason']:<16} "
          f"{r['seconds']['total']:>7.2f} {r['cost']['speedup'] or 1:>7.3f}  {r['result']}: {used}")
    pairs.append(f"{j['model']}:{j['output']}")
open(sys.argv[2], 'w').write(','.join(pairs))
PY
node bench/ort/bench.mjs --pairs "$(cat "$out/pairs.txt")" --runs "${RUNS:-20}" --json "$out/bench.json"

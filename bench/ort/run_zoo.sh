#!/usr/bin/env bash
# Optimizes every zoo model with one `refinery batch --target cpu` (the
# learned cost model; TARGET=cpu-analytic for the analytic one), then
# measures original against optimized under ONNX Runtime (bench.mjs: single
# thread, full ORT optimization for both, alternating runs).
#
#   bench/ort/run_zoo.sh BUILD_DIR [OUT_DIR]
#
# Environment: ZOO (zoo folders, space-separated; default BUILD_DIR/zoo and BUILD_DIR/zoo_real, those that
# exist), TARGET (default cpu), RUNS (default 20), MODELS (names, default every model of those folders),
# JOBS (models optimized at once, default 1: each model's optimize time as on its own),
# TIMEOUT (seconds per model, default none), BATCH_FLAGS (extra flags for refinery batch, e.g.
# "--time-limit 10 --node-limit 50000"), BENCH_FLAGS (extra flags for bench.mjs, e.g. "--dim batch=2 --dim seq=64":
# symbolic dims are 1 otherwise).
# OUT_DIR (default BUILD_DIR/zoo_opt) gets models.txt (the manifest), the
# batch's output (TARGET/X.onnx, TARGET/X.onnx.report.json, TARGET/X.onnx.log,
# journal.json, summary.json; docs/batch.md), pairs.txt (bench.mjs's --pairs), bench.json and
# speedups.txt: per model the measured speedup and control (bench.mjs), the FLOPs before and after
# and the rules whose rewrites the extracted graph uses (the report's rules_used).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: bench/ort/run_zoo.sh BUILD_DIR [OUT_DIR]}
out=${2:-$build/zoo_opt}
mkdir -p "$out"
zoos=${ZOO:-$(for z in "$build/zoo" "$build/zoo_real"; do [[ -d $z ]] && echo "$z"; done)}
: > "$out/models.txt"
for zoo in $zoos; do
  for f in "$zoo"/*.onnx; do
    m=$(basename "$f" .onnx)
    if [[ -z ${MODELS:-} || " $MODELS " == *" $m "* ]]; then realpath "$f" >> "$out/models.txt"; fi
  done
done
start=$(date +%s.%N)
# Exit 1 (some model failed) is reported below, model by model; 2 is a bad invocation.
# shellcheck disable=SC2086
"$build/cli/refinery" batch "$out/models.txt" -o "$out" --target "${TARGET:-cpu}" --jobs "${JOBS:-1}" \
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
# shellcheck disable=SC2086
node bench/ort/bench.mjs --pairs "$(cat "$out/pairs.txt")" --runs "${RUNS:-20}" --json "$out/bench.json" ${BENCH_FLAGS:-}
/usr/bin/python3 - "$out/summary.json" "$out/bench.json" <<'PY' | tee "$out/speedups.txt"
import json, sys
jobs = json.load(open(sys.argv[1]))['jobs']
bench = json.load(open(sys.argv[2]))
rows = bench['rows'] if isinstance(bench, dict) and 'rows' in bench else bench
by_name = {r['model']: r for r in rows}
print(f"{'model':<22} {'speedup':>8} {'control':>8} {'GFLOP before':>12} {'after':>8}  rewrites that made the difference")
for j in jobs:
    if j['status'] != 'written':
        continue
    m = j['key'].split('/', 1)[1].removesuffix('.onnx')
    r = json.load(open(j['report']))
    b = by_name.get(m, {})
    c = r['cost']
    used = ', '.join(f"{k} ({v})" for k, v in sorted(r['rules_used'].items(), key=lambda kv: -kv[1])[:6]) or '- (original kept)'
    sp = f"{b['speedup']:.3f}x" if 'speedup' in b else '-'
    ct = f"{b['control']:.3f}x" if b.get('control') is not None else '-'
    print(f"{m:<22} {sp:>8} {ct:>8} {c['flops_before'] / 1e9:>12.4f} {c['flops_after'] / 1e9:>8.4f}  {used}")
PY

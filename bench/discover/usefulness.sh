#!/usr/bin/env bash
# Usefulness of discovered rules (docs/discovery.md, "Experiments"): each zoo
# model optimized with the hand library alone and with the library plus
# discovered rules; prints the modelled cost of each, whether the optimized
# output changed, which discovered rules the extraction used (the report's
# rules_used: rules whose right side is in the extracted graph) and which
# only fired, and, for the models whose output changed, the two optimized
# models' ONNX Runtime latency (bench/ort/bench.mjs: single thread, median
# of RUNS, with a control session).
#
#   bench/discover/usefulness.sh BUILD_DIR DISCOVERED.rules[,MORE.rules] [MODEL...]
#
# Models default to every model built in the zoo folder: ZOO=DIR (default
# BUILD_DIR/zoo, targets zoo_small, zoo; ZOO=BUILD_DIR/zoo_real for the
# real-exports zoo, target zoo_real). TARGET=T optimizes for T (default cpu).
# MIN_GAIN=G passes --min-gain G to both optimizations (the gate that
# keeps the original when the extracted graph is less than G% cheaper);
# RUNS=N (default 30) ORT repeats; KEEP=DIR keeps the optimized models there;
# JOBS=N models optimized at once (default 1).
set -euo pipefail
build=${1:?usage: usefulness.sh BUILD_DIR DISCOVERED.rules[,MORE.rules] [MODEL...]}
IFS=, read -r -a found <<<"${2:?usage: usefulness.sh BUILD_DIR DISCOVERED.rules[,MORE.rules] [MODEL...]}"
shift 2
models=("$@")
zoo=${ZOO:-$build/zoo}
if [ ${#models[@]} -eq 0 ]; then
  for f in "$zoo"/*.onnx; do models+=("$(basename "$f" .onnx)"); done
fi
here=$(cd "$(dirname "$0")/../.." && pwd)
exe=$build/cli/refinery
lib=("$here"/rules/lib/*.rules)
gate=()
[ -n "${MIN_GAIN:-}" ] && gate=(--min-gain "$MIN_GAIN")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for m in "${models[@]}"; do
  src=$zoo/$m.onnx
  if [ -f "$src" ]; then realpath "$src"; else echo "missing $src (build targets zoo_small, zoo, zoo_real)" >&2; fi
done >"$out/models.txt"
# Each model optimized twice by `refinery batch` (docs/batch.md): with the
# library, and with the library plus the discovered rules. Exit 1 (a job
# failed) shows in the table; 2 is a bad invocation.
"$exe" batch "$out/models.txt" -o "$out/lib" --target "${TARGET:-cpu}" "${gate[@]}" --rules "${lib[@]}" --jobs "${JOBS:-1}" \
  --quiet >"$out/lib.txt" || [ $? -eq 1 ]
"$exe" batch "$out/models.txt" -o "$out/disc" --target "${TARGET:-cpu}" "${gate[@]}" --rules "${lib[@]}" "${found[@]}" \
  --jobs "${JOBS:-1}" --quiet >"$out/disc.txt" || [ $? -eq 1 ]
printf '| model | cost, library (before -> after) | cost, library + discovered (before -> after) | output | discovered rules used | discovered rules fired |\n|---|---|---|---|---|---|\n'
/usr/bin/python3 - "$out" "${KEEP:-}" >"$out/table.txt" <<'PY'
import filecmp, json, os, shutil, sys
out, keep = sys.argv[1], sys.argv[2]
jobs = {b: {j["model"]: j for j in json.load(open(os.path.join(out, b, "summary.json")))["jobs"]} for b in ("lib", "disc")}
pairs = []
def cost(j):
    if j["status"] != "written":
        return f"{j['status']}: {j['reason']}"
    r = j["result"]
    return f"{r['cost_before'] * 1e3:.4g} ms -> {r['cost_after'] * 1e3:.4g} ms"
for model, a in jobs["lib"].items():
    b = jobs["disc"][model]
    m = os.path.basename(model)[:-5]
    used = fired = "none"
    same = "failed"
    if a["status"] == b["status"] == "written":
        same = "same" if filecmp.cmp(a["output"], b["output"], shallow=False) else "changed"
        if same == "changed":
            pairs.append(f"{a['output']}:{b['output']}")
        r = json.load(open(b["report"]))
        used = " ".join(k for k in r["rules_used"] if k.startswith("disc-")) or "none"
        fired = " ".join(k for k in r["rules_fired"] if k.startswith("disc-")) or "none"
        if keep:
            shutil.copy(a["output"], os.path.join(keep, m + ".lib.onnx"))
            shutil.copy(b["output"], os.path.join(keep, m + ".disc.onnx"))
    print(f"| {m} | {cost(a)} | {cost(b)} | {same} | {used} | {fired} |")
open(os.path.join(out, "pairs.txt"), "w").write(",".join(pairs))
PY
cat "$out/table.txt"
if [ -s "$out/pairs.txt" ] && [ -d "$here/tools/ort/node_modules" ]; then
  echo
  echo "ONNX Runtime, library-optimized (A) vs library+discovered-optimized (B):"
  node "$here/bench/ort/bench.mjs" --pairs "$(cat "$out/pairs.txt")" --runs "${RUNS:-30}" --warmup 5 || true
fi

#!/usr/bin/env bash
# The learned CPU cost model's accuracy on what it never saw (docs/targets.md,
# "The learned CPU model"; figures in docs/measurements.md):
#
#   bench/cost/run.sh BUILD_DIR [OUT_DIR]
#
# 1. `refinery measure` over the zoo: every kernel ONNX Runtime would run,
#    as a micro-model in three shape variants, and every whole model, timed
#    (single thread, 'all'); resumed when OUT_DIR/data already has timings.
# 2. Equivalent graphs: each model of EQUIV_MODELS saturated once per
#    target and extracted with four cost models (cpu analytic, cpu learned,
#    gpu, tpu) plus the original; every pair of the distinct ones is timed
#    interleaved (bench/ort/bench.mjs --clock cpu: A, B, B, A, ... for
#    PAIR_RUNS rounds, default 40, and a sign test over the rounds).
# 3. bench_cost: leave one model family out (per-kernel Kendall tau and
#    MAPE, whole-model MAPE and tau of `refinery cost` against the timings,
#    pairwise ranking of the equivalent graphs), the analytic cpu beside it.
#
# Environment: ZOO (default BUILD_DIR/zoo), EQUIV_MODELS (zoo names, default
# the small CNNs and transformers below), TIME_LIMIT (seconds of saturation
# per optimize, default 10), JOBS (models optimized at once, default 1),
# PAIR_RUNS (rounds per pair of equivalent graphs, default 40).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: bench/cost/run.sh BUILD_DIR [OUT_DIR]}
out=${2:-$build/cost_bench}
zoo=${ZOO:-$build/zoo}
exe=$build/cli/refinery
mkdir -p "$out/equiv"
echo "== load before: $(uptime)"
"$exe" measure "$zoo"/*.onnx -o "$out/data"

models=${EQUIV_MODELS:-"squeezenet1_1 mobilenet_v2 shufflenet_v2_x1_0 resnet18 mlp bert_encoder vit_tiny torch_encoder gpt_decoder attn_matmul"}
# Every model optimized for each variant by `refinery batch` (docs/batch.md):
# one batch for the analytic models (cpu-analytic, gpu, tpu), one for the learned cpu (--target cpu).
: > "$out/equiv/models.txt"
for m in $models; do [[ -f "$zoo/$m.onnx" ]] && realpath "$zoo/$m.onnx" >> "$out/equiv/models.txt"; done
common=(--min-gain 0 --time-limit "${TIME_LIMIT:-10}" --jobs "${JOBS:-1}" --quiet)
# Exit 1 (some job failed) leaves that job out below; 2 is a bad invocation.
"$exe" batch "$out/equiv/models.txt" -o "$out/equiv/analytic" --target cpu-analytic,gpu,tpu "${common[@]}" ||
  [[ $? == 1 ]]
"$exe" batch "$out/equiv/models.txt" -o "$out/equiv/learned" --target cpu "${common[@]}" || [[ $? == 1 ]]
# "MODEL VARIANT FILE" for the original and every written graph.
/usr/bin/python3 - "$out/equiv" > "$out/equiv/graphs.txt" <<'PY'
import json, os, sys
d = sys.argv[1]
for line in open(os.path.join(d, "models.txt")):
    print(os.path.basename(line.strip())[:-5], "original", line.strip())
for batch in ("analytic", "learned"):
    for j in json.load(open(os.path.join(d, batch, "summary.json")))["jobs"]:
        m = os.path.basename(j["model"])[:-5]
        if j["status"] != "written":
            print(f"optimize {m} for {j['target']} failed (left out): {j['reason']}", file=sys.stderr)
            continue
        print(m, j["target"], j["output"])
PY
# Distinct graphs only (the same extraction twice is one graph): told apart
# by what three analytic models price them at. Then every pair of one
# model's distinct graphs.
declare -A seen=() distinct=()
while read -r m v f; do
  sum=""
  # (the whole JSON first: grep -m1 on the pipe ended it early, and pipefail stopped the script on that SIGPIPE)
  for t in cpu-analytic gpu tpu; do
    json=$("$exe" cost "$f" --target $t --json -)
    sum+=$(grep -m1 total_ms <<< "$json")
  done
  [[ -n "${seen[$m$sum]:-}" ]] && continue
  seen[$m$sum]=1
  distinct[$m]+="$(realpath "$f") "
done < "$out/equiv/graphs.txt"
pairs=""
for m in "${!distinct[@]}"; do
  read -ra fs <<< "${distinct[$m]}"
  for ((i = 0; i < ${#fs[@]}; i++)); do
    for ((j = i + 1; j < ${#fs[@]}; j++)); do pairs+="${fs[i]}:${fs[j]},"; done
  done
done
echo "== timing $(tr -cd , <<< "$pairs" | wc -c) pairs, load: $(uptime)"
node bench/ort/bench.mjs --pairs "$pairs" --clock cpu --no-control --runs "${PAIR_RUNS:-40}" \
  --json "$out/equiv/pairs.json" > "$out/equiv/pairs.txt"
echo "== load after: $(uptime)"
"$build/bench/cost/bench_cost" "$out/data/dataset.jsonl" "$out/equiv/pairs.json" --work "$out/lomo"

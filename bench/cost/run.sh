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
#    gpu, tpu) plus the original: the distinct ones are timed the same way.
# 3. bench_cost: leave one model family out (per-kernel Kendall tau and
#    MAPE, whole-model MAPE and tau of `refinery cost` against the timings,
#    pairwise ranking of the equivalent graphs), the analytic cpu beside it.
#
# Environment: ZOO (default BUILD_DIR/zoo), EQUIV_MODELS (zoo names, default
# the small CNNs and transformers below), TIME_LIMIT (seconds of saturation
# per optimize, default 10).
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
manifest=$out/equiv/manifest.jsonl
cp "$out/data/overhead.onnx" "$out/equiv/overhead.onnx"
echo "{\"id\":\"overhead\",\"kind\":\"overhead\",\"file\":\"$(realpath "$out/equiv/overhead.onnx")\"}" > "$manifest"
for m in $models; do
  [[ -f "$zoo/$m.onnx" ]] || continue
  cp "$zoo/$m.onnx" "$out/equiv/$m.original.onnx"
  for v in cpu cpu-learned gpu tpu; do
    flags=(--target "${v%-learned}")
    [[ $v == cpu-learned ]] && flags+=(--cost-model learned)
    "$exe" optimize "$zoo/$m.onnx" -o "$out/equiv/$m.$v.onnx" "${flags[@]}" --min-gain 0 \
      --time-limit "${TIME_LIMIT:-10}" --quiet > /dev/null || echo "optimize $m for $v failed (left out)"
  done
  # Distinct graphs only (the same extraction twice is one graph): told
  # apart by what three analytic models price them at.
  declare -A seen=()
  for f in "$out/equiv/$m".*.onnx; do
    sum=""
    for t in cpu gpu tpu; do sum+=$("$exe" cost "$f" --target $t --json - | grep -m1 total_ms); done
    [[ -n "${seen[$sum]:-}" ]] && continue
    seen[$sum]=1
    v=$(basename "$f" .onnx); v=${v#"$m".}
    echo "{\"id\":\"equiv:$m:$v\",\"kind\":\"model\",\"file\":\"$(realpath "$f")\",\"models\":[\"$m\"]}" >> "$manifest"
  done
  unset seen
done
node tools/ort/measure.mjs "$manifest" "$out/equiv/dataset.jsonl" --runs 15 --min-ms 200
echo "== load after: $(uptime)"
"$build/bench/cost/bench_cost" "$out/data/dataset.jsonl" "$out/equiv/dataset.jsonl" --work "$out/lomo"

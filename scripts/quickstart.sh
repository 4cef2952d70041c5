#!/usr/bin/env bash
# The main job on the bundled example: set up, build, and optimize the model
# for the CPU, priced by the cost model learned from ONNX Runtime's timings
# (what changed, cost before and after, validation error), then
# check the optimized model against the original in ONNX Runtime.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh refinery
model=${1:-examples/tiny_cnn.onnx}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
name=$(basename "$model" .onnx)
echo "== refinery optimize $model --target cpu (the learned cost model; cpu-analytic: the analytic one)"
build/cli/refinery optimize "$model" -o "$out/$name.opt.onnx" --target cpu --report "$out/$name.report.json"
echo "== ONNX Runtime: original vs optimized"
node tools/ort/compare.mjs "$model" "$out/$name.opt.onnx" --rtol 1e-3 --atol 1e-4

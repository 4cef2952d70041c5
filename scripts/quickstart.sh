#!/usr/bin/env bash
# The main job on the bundled example: set up, build, inspect the model, and
# round-trip it through the textual IR back to ONNX, checked in ONNX Runtime.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh refinery
model=${1:-examples/tiny_cnn.onnx}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
name=$(basename "$model" .onnx)
echo "== refinery inspect $model"
build/cli/refinery inspect "$model"
echo "== round trip: $model -> $name.ir -> $name.onnx"
build/cli/refinery convert "$model" "$out/$name.ir"
build/cli/refinery convert "$out/$name.ir" "$out/$name.onnx"
echo "== ONNX Runtime: original vs round-tripped, bit for bit"
node tools/ort/compare.mjs "$model" "$out/$name.onnx" --exact
echo "== reference interpreter"
build/cli/refinery run "$out/$name.ir"

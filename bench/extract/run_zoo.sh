#!/usr/bin/env bash
# Exports every zoo model's saturated e-graph (and examples/tiny_cnn's) for
# each target in extraction-gym JSON, then runs the extractors on them.
#   bench/extract/run_zoo.sh BUILD_DIR [OUT_DIR] [-- bench_extract run flags]
set -euo pipefail
build=${1:?usage: run_zoo.sh BUILD_DIR [OUT_DIR] [-- run flags]}
out=${2:-/tmp/refinery-extract}
shift $(( $# >= 2 ? 2 : 1 ))
[[ ${1:-} == -- ]] && shift
root=$(cd "$(dirname "$0")/../.." && pwd)
bench=$build/bench/extract/bench_extract
mkdir -p "$out"
models=("$root/examples/tiny_cnn.onnx")
for m in "$build"/zoo/*.onnx; do models+=("$m"); done
files=()
for target in cpu gpu tpu; do
  for m in "${models[@]}"; do
    f=$out/$(basename "$m" .onnx).$target.json
    [[ -s $f ]] || "$bench" export --target "$target" "$m" "$f"
    files+=("$f")
  done
done
"$bench" run "$@" "${files[@]}"

#!/usr/bin/env bash
# Saturates every zoo model (and examples/tiny_cnn) for each target with one
# `refinery batch --egraphs` (each child writes its e-graph in
# extraction-gym JSON, priced by the target's model: cpu's is the learned
# one), then runs the extractors on those files.
#   bench/extract/run_zoo.sh BUILD_DIR [OUT_DIR] [-- bench_extract run flags]
# Environment: ZOO (default BUILD_DIR/zoo), JOBS (default 1), BATCH_FLAGS (extra
# flags for refinery batch). A file already in OUT_DIR is reused (--resume).
set -euo pipefail
build=${1:?usage: run_zoo.sh BUILD_DIR [OUT_DIR] [-- run flags]}
out=${2:-/tmp/refinery-extract}
shift $(( $# >= 2 ? 2 : 1 ))
[[ ${1:-} == -- ]] && shift
root=$(cd "$(dirname "$0")/../.." && pwd)
zoo=${ZOO:-$build/zoo}
mkdir -p "$out"
{ realpath "$root/examples/tiny_cnn.onnx"; for m in "$zoo"/*.onnx; do realpath "$m"; done; } > "$out/models.txt"
# Exit 1 (some model failed validation or errored) leaves the others' files;
# bench_extract runs on what was written.
# shellcheck disable=SC2086
"$build/cli/refinery" batch "$out/models.txt" -o "$out" --target cpu,gpu,tpu --egraphs --resume \
  --jobs "${JOBS:-1}" --progress=plain ${BATCH_FLAGS:-} || [[ $? == 1 ]]
mapfile -t files < <(ls "$out"/{cpu,gpu,tpu}/*.egraph.json 2>/dev/null)
"$build/bench/extract/bench_extract" run "$@" "${files[@]}"

#!/usr/bin/env bash
# Usefulness of discovered rules (docs/discovery.md, "Experiments"): each zoo
# model optimized with the hand library alone and with the library plus
# discovered rules; prints the modelled cost of each, which discovered rules
# the extraction used, and, for the models whose output changed, the two
# optimized models' ONNX Runtime latency (bench/ort/bench.mjs).
#
#   bench/discover/usefulness.sh BUILD_DIR DISCOVERED.rules [MODEL...]
#
# Models default to the small zoo (BUILD_DIR/zoo, target zoo_small).
set -euo pipefail
build=${1:?usage: usefulness.sh BUILD_DIR DISCOVERED.rules [MODEL...]}
found=${2:?usage: usefulness.sh BUILD_DIR DISCOVERED.rules [MODEL...]}
shift 2
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  models=(mlp bert_encoder squeezenet1_1 mobilenet_v2 shufflenet_v2_x1_0 attn_2d attn_matmul attn_einsum attn_baddbmm)
fi
here=$(cd "$(dirname "$0")/../.." && pwd)
exe=$build/cli/refinery
lib=("$here"/rules/lib/*.rules)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cost() { sed -n "s/.*cost (cpu model): \(.*\) -> \(.*\) (.*/\1 -> \2/p" "$1"; }
printf '| model | cost, library (before -> after) | cost, library + discovered (before -> after) | output | discovered rules in the report (fired or used) |\n|---|---|---|---|---|\n'
pairs=()
for m in "${models[@]}"; do
  src=$build/zoo/$m.onnx
  [ -f "$src" ] || { echo "missing $src (build target zoo_small)" >&2; continue; }
  "$exe" optimize "$src" -o "$out/$m.lib.onnx" --target cpu --rules "${lib[@]}" --progress never >"$out/$m.lib.txt"
  "$exe" optimize "$src" -o "$out/$m.disc.onnx" --target cpu --rules "${lib[@]}" "$found" --progress never \
    --report "$out/$m.disc.json" >"$out/$m.disc.txt"
  a=$(cost "$out/$m.lib.txt"); b=$(cost "$out/$m.disc.txt")
  used=$(grep -o '"disc-[a-z0-9-]*' "$out/$m.disc.json" | tr -d '"' | sort -u | tr '\n' ' ' || true)
  same=same; cmp -s "$out/$m.lib.onnx" "$out/$m.disc.onnx" || { same=changed; pairs+=("$out/$m.lib.onnx:$out/$m.disc.onnx"); }
  printf '| %s | %s | %s | %s | %s |\n' "$m" "$a" "$b" "$same" "${used:-none}"
done
if [ ${#pairs[@]} -gt 0 ] && [ -d "$here/tools/ort/node_modules" ]; then
  echo
  echo "ONNX Runtime, library-optimized (A) vs library+discovered-optimized (B):"
  (IFS=,; node "$here/bench/ort/bench.mjs" --pairs "${pairs[*]}" --runs 30 --warmup 5) || true
fi

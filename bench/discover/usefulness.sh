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
# Models default to every model built in BUILD_DIR/zoo (targets zoo_small,
# zoo). MIN_GAIN=G passes --min-gain G to both optimizations (the gate that
# keeps the original when the extracted graph is less than G% cheaper);
# RUNS=N (default 30) ORT repeats; KEEP=DIR keeps the optimized models there.
set -euo pipefail
build=${1:?usage: usefulness.sh BUILD_DIR DISCOVERED.rules[,MORE.rules] [MODEL...]}
IFS=, read -r -a found <<<"${2:?usage: usefulness.sh BUILD_DIR DISCOVERED.rules[,MORE.rules] [MODEL...]}"
shift 2
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  for f in "$build"/zoo/*.onnx; do models+=("$(basename "$f" .onnx)"); done
fi
here=$(cd "$(dirname "$0")/../.." && pwd)
exe=$build/cli/refinery
lib=("$here"/rules/lib/*.rules)
gate=()
[ -n "${MIN_GAIN:-}" ] && gate=(--min-gain "$MIN_GAIN")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cost() { sed -n "s/.*cost (cpu model): \(.*\) -> \(.*\) (.*/\1 -> \2/p" "$1"; }
disc() { jq -r "$1 | keys[] | select(startswith(\"disc-\"))" "$2" | tr '\n' ' '; }
printf '| model | cost, library (before -> after) | cost, library + discovered (before -> after) | output | discovered rules used | discovered rules fired |\n|---|---|---|---|---|---|\n'
pairs=()
for m in "${models[@]}"; do
  src=$build/zoo/$m.onnx
  [ -f "$src" ] || { echo "missing $src (build targets zoo_small, zoo)" >&2; continue; }
  "$exe" optimize "$src" -o "$out/$m.lib.onnx" --target cpu "${gate[@]}" --rules "${lib[@]}" --progress never >"$out/$m.lib.txt"
  "$exe" optimize "$src" -o "$out/$m.disc.onnx" --target cpu "${gate[@]}" --rules "${lib[@]}" "${found[@]}" \
    --progress never --report "$out/$m.disc.json" >"$out/$m.disc.txt"
  a=$(cost "$out/$m.lib.txt"); b=$(cost "$out/$m.disc.txt")
  used=$(disc .rules_used "$out/$m.disc.json"); fired=$(disc .rules_fired "$out/$m.disc.json")
  same=same; cmp -s "$out/$m.lib.onnx" "$out/$m.disc.onnx" || { same=changed; pairs+=("$out/$m.lib.onnx:$out/$m.disc.onnx"); }
  printf '| %s | %s | %s | %s | %s | %s |\n' "$m" "$a" "$b" "$same" "${used:-none}" "${fired:-none}"
  [ -n "${KEEP:-}" ] && cp "$out/$m".{lib,disc}.onnx "$KEEP"/ 2>/dev/null || true
done
if [ ${#pairs[@]} -gt 0 ] && [ -d "$here/tools/ort/node_modules" ]; then
  echo
  echo "ONNX Runtime, library-optimized (A) vs library+discovered-optimized (B):"
  (IFS=,; node "$here/bench/ort/bench.mjs" --pairs "${pairs[*]}" --runs "${RUNS:-30}" --warmup 5) || true
fi

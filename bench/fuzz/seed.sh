#!/usr/bin/env bash
# Gathers the seed corpora and dictionaries of the fuzz targets
# (bench/fuzz/README.md):
#
#   bench/fuzz/seed.sh OUT [ZOO]
#
# writes OUT/seeds/<target>/ (copies of the real files we have, named by their
# content hash) and OUT/<target>.dict. ZOO: a folder of zoo models (the
# zoo_small target's build/zoo), used when given and present.
set -euo pipefail
out=${1:?usage: seed.sh OUT [ZOO]}
zoo=${2:-}
src=$(cd "$(dirname "$0")/../.." && pwd)
shared=$(cd "$src/.." && pwd)/shared
testdata=/usr/share/libonnx-testdata/data

add() {  # add TARGET FILE...: copy each file, named by its content hash
  local target=$1
  shift
  mkdir -p "$out/seeds/$target"
  for f in "$@"; do
    [ -f "$f" ] || continue
    cp "$f" "$out/seeds/$target/$(sha1sum <"$f" | cut -c1-16)"
  done
}

# ONNX: the example, the tests' models, ONNX's backend test models (all under
# 64 KB), the small zoo models; the regression inputs.
mapfile -t onnx < <(find "$src/examples" "$src/tests" -name '*.onnx'
  [ -d "$testdata" ] && find "$testdata" -name '*.onnx' -size -256k
  [ -n "$zoo" ] && [ -d "$zoo" ] && find "$zoo" -maxdepth 1 -name '*.onnx' -size -2M
  find "$src/tests/fuzz/onnx" -type f 2>/dev/null)
add onnx "${onnx[@]}"

# NIR: the real files in shared/nir and the tests' files.
mapfile -t nir < <(find "$shared/nir" "$src/tests" -name '*.nir' 2>/dev/null
  find "$src/tests/fuzz/nir" -type f 2>/dev/null)
add nir "${nir[@]}"

# .ir: every .ir file of the tree, each with its sidecar after a NUL byte
# (the layout check_ir_text reads), and the failing cases.
mkdir -p "$out/seeds/ir_text"
while IFS= read -r f; do
  tmp=$(mktemp)
  cat "$f" >"$tmp"
  if [ -f "$f.bin" ]; then
    printf '\0' >>"$tmp"
    cat "$f.bin" >>"$tmp"
  fi
  add ir_text "$tmp"
  rm -f "$tmp"
done < <(find "$src/tests" "$src/examples" "$src/docs" -name '*.ir' 2>/dev/null)
mapfile -t irs < <(find "$src/tests/fuzz/ir_text" -type f 2>/dev/null)
add ir_text "${irs[@]}"

# Rules: the library, the pending and the tests' rule files (failing ones too).
mapfile -t rules < <(find "$src/rules" "$src/tests" -name '*.rules'
  find "$src/tests/fuzz/rules" -type f 2>/dev/null)
add rules "${rules[@]}"

# Dictionaries: the op names (ours and ONNX's, from ir/ops.def), attribute
# names from the op table, and each format's keywords.
ops=$(sed -nE 's/^OP\([A-Za-z0-9_]+, "([^"]+)", "([^"]*)"\).*/\1\n\2/p' "$src/ir/ops.def" | sort -u | grep -v '^$')
attrs=$(grep -ohE '(string|int|float|ints|floats|strings)_attr\("[A-Za-z_]+"|ints_per_axis\("[A-Za-z_]+"' "$src"/ir/ops/*.cpp |
  sed -E 's/.*\("//; s/"$//' | sort -u)
dict() {  # dict FILE WORD...: one quoted entry a line
  local file=$1
  shift
  for w in "$@"; do printf '"%s"\n' "$w"; done >"$file"
}
# shellcheck disable=SC2086
dict "$out/ir_text.dict" $ops $attrs graph attributes const dense hex blob elided tensor return loc opaque \
  ints floats strings none true false ir_version opsets f32 f64 f16 bf16 i8 i16 i32 i64 u8 bool '%' '@' '->' '<' '>'
# shellcheck disable=SC2086
dict "$out/rules.dict" $ops $attrs rule '=>' '<=>' ':when' ':let' ':ruleset' ':axioms' '?' simplify explore permute merge
# shellcheck disable=SC2086
dict "$out/onnx.dict" $(sed -nE 's/^OP\([A-Za-z0-9_]+, "[^"]+", "([^"]+)"\).*/\1/p' "$src/ir/ops.def") $attrs \
  ai.onnx com.microsoft external_data location offset length
printf '"HDF5"\n"nir_version"\n"node"\n"nodes"\n"edges"\n"src"\n"dst"\n"type"\n"input"\n"output"\n"weight"\n"bias"\n"tau"\n"r"\n"v_leak"\n"v_threshold"\n"shape"\n' >"$out/nir.dict"

for t in onnx nir ir_text rules; do
  echo "$t: $(find "$out/seeds/$t" -type f | wc -l) seeds"
done

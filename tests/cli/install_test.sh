#!/usr/bin/env bash
# The installed layout (README "Installing", ir/data_dir.h): `cmake --install`
# into a temporary prefix, the prefix moved elsewhere, and the moved binary run
# from another working directory with REFINERY_DATA unset. It must find its
# data in its own prefix, and a binary outside both a prefix and the build
# tree must fail rather than fall back to the source tree.
#
#   bash tests/cli/install_test.sh CMAKE BUILD_DIR
#
# Ends with "N passed, M failed"; exit 1 when any failed.
set -u
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CMAKE="${1:?usage: install_test.sh CMAKE BUILD_DIR}"
BUILD="${2:?usage: install_test.sh CMAKE BUILD_DIR}"
TINY="$ROOT/examples/tiny_cnn.onnx"
# outside the build tree (ctest points TMPDIR into it; CMakeLists.txt)
TMP="$(mktemp -d -p "${REFINERY_OUTER_TMPDIR:-${TMPDIR:-/tmp}}")"
trap 'rm -rf "$TMP"' EXIT
unset REFINERY_DATA

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1${2:+: $2}"; }
# expect_rc NAME RC CMD...: runs CMD (stdout+stderr to $TMP/out) and checks its exit status.
expect_rc() {
  local name=$1 want=$2; shift 2
  "$@" >"$TMP/out" 2>&1
  local rc=$?
  if [ "$rc" -eq "$want" ]; then ok "$name"; else ko "$name" "exit $rc, expected $want; $(tail -c 600 "$TMP/out")"; fi
}
# expect_out NAME TEXT: the last command's output contains TEXT.
expect_out() {
  if grep -qF -- "$2" "$TMP/out"; then ok "$1"; else ko "$1" "no '$2' in: $(tail -c 600 "$TMP/out")"; fi
}

expect_rc "cmake --install" 0 "$CMAKE" --install "$BUILD" --prefix "$TMP/prefix"
n_rules=$(ls "$TMP/prefix/share/refinery/rules/"*.rules 2>/dev/null | wc -l)
n_specs=$(ls "$TMP/prefix/share/refinery/targets/"*.json 2>/dev/null | wc -l)
if [ -x "$TMP/prefix/bin/refinery" ] && [ "$n_rules" -eq "$(ls "$ROOT/rules/lib/"*.rules | wc -l)" ] &&
   [ "$n_specs" -eq "$(ls "$ROOT/targets/specs/"*.json | wc -l)" ]; then
  ok "layout: bin/refinery, share/refinery/rules ($n_rules), share/refinery/targets ($n_specs)"
else
  ko "layout" "$(cd "$TMP/prefix" 2>/dev/null && find . | sort | tr '\n' ' ')"
fi

# The prefix moved: nothing of the build or install paths is left to lean on.
mv "$TMP/prefix" "$TMP/moved"
EXE="$TMP/moved/bin/refinery"
mkdir -p "$TMP/elsewhere" && cd "$TMP/elsewhere" || exit 1

expect_rc "installed: rules list" 0 "$EXE" rules list
expect_out "installed: rules come from the moved prefix" "$TMP/moved/share/refinery/rules/fold.rules:"
# --time-limit 1: the pipeline's outcome is not what is tested here, only that it runs.
expect_rc "installed: optimize --target cpu" 0 "$EXE" optimize "$TINY" -o "$TMP/tiny.cpu.onnx" --target cpu --time-limit 1
[ -s "$TMP/tiny.cpu.onnx" ] && ok "installed: optimize wrote its output" || ko "installed: optimize wrote its output"

# The interpreter module (lib/refinery/librefinery_aten.so, with libtorch) is
# loaded only by a command that runs a graph: without it, inspect works, and
# optimize ends with Refinery's limitation status (3), naming what it looked for.
[ -f "$TMP/moved/lib/refinery/librefinery_aten.so" ] && ok "layout: lib/refinery/librefinery_aten.so" ||
  ko "layout: lib/refinery/librefinery_aten.so" "$(cd "$TMP/moved" && find . -name '*.so' | tr '\n' ' ')"
mv "$TMP/moved/lib/refinery" "$TMP/module-aside"
expect_rc "no module: inspect" 0 "$EXE" inspect "$TINY"
expect_rc "no module: optimize fails" 3 "$EXE" optimize "$TINY" -o "$TMP/tiny.none.onnx" --target cpu --time-limit 1
expect_out "no module: says what it looked for" \
  "cannot find the module librefinery_aten.so (looked for $TMP/moved/lib/refinery/librefinery_aten.so)"
[ ! -e "$TMP/tiny.none.onnx" ] && ok "no module: nothing written" || ko "no module: nothing written"
expect_rc "no module: run fails as a limitation, not bad input" 3 "$EXE" run "$TINY"
mv "$TMP/module-aside" "$TMP/moved/lib/refinery"

# A binary with no prefix around it, outside the build tree: no fallback to the source tree.
mkdir -p "$TMP/lonely/bin" && cp "$EXE" "$TMP/lonely/bin/"
expect_rc "lonely binary: fails" 2 "$TMP/lonely/bin/refinery" rules list
expect_out "lonely binary: says what it looked for" "cannot find Refinery's data"
expect_out "lonely binary: names REFINERY_DATA" "REFINERY_DATA"
# ... and REFINERY_DATA points it at a data root, and at its prefix's module (lib/refinery).
DATA="REFINERY_DATA=$TMP/moved/share/refinery"
expect_rc "lonely binary + REFINERY_DATA: rules list" 0 env "$DATA" "$TMP/lonely/bin/refinery" rules list
expect_rc "lonely binary + REFINERY_DATA: optimize --target gpu" 0 \
  env "$DATA" "$TMP/lonely/bin/refinery" optimize "$TINY" -o "$TMP/tiny.gpu.onnx" --target gpu --time-limit 1

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# Tests of the Python/Node tooling: tools/onnx_tools.py, tools/ort/run.mjs,
# tools/ort/compare.mjs, tools/ort/profile.mjs, bench/ort/bench.mjs, examples/make_examples.py,
# bench/ort/run_zoo.sh, bench/zoo/check_limits.py,
# on examples/tiny_cnn.onnx and the zoo's mlp.
#
#   bash tests/tools/tools_test.sh BUILD_DIR
#
# Uses BUILD_DIR/zoo/mlp.onnx, exporting it there first when missing. Needs
# /usr/bin/python3 with torch and onnx, node, and tools/ort/node_modules
# (scripts/setup.sh installs all of them). Ends with "N passed, M failed".
set -u
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${1:?usage: tools_test.sh BUILD_DIR}"
PY=/usr/bin/python3
TINY="$ROOT/examples/tiny_cnn.onnx"
MLP="$BUILD/zoo/mlp.onnx"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1${2:+: $2}"; }
# expect_rc NAME RC CMD...: runs CMD (stdout+stderr to $TMP/out) and checks its exit status.
expect_rc() {
  local name=$1 want=$2; shift 2
  "$@" >"$TMP/out" 2>&1
  local rc=$?
  if [ "$rc" -eq "$want" ]; then ok "$name"; else ko "$name" "exit $rc, expected $want; $(tail -c 400 "$TMP/out")"; fi
}
# expect_grep NAME PATTERN FILE
expect_grep() {
  if grep -Eq -- "$2" "$3"; then ok "$1"; else ko "$1" "no /$2/ in $(head -c 400 "$3")"; fi
}
# expect_nogrep NAME PATTERN FILE
expect_nogrep() {
  if grep -Eq -- "$2" "$3"; then ko "$1" "/$2/ in $(grep -E -m1 -- "$2" "$3")"; else ok "$1"; fi
}

if [ ! -d "$ROOT/tools/ort/node_modules/onnxruntime-node" ]; then
  echo "tools/ort/node_modules missing: run scripts/setup.sh (or cd tools/ort && npm install --ignore-scripts)"
  echo "0 passed, 1 failed"
  exit 1
fi
if [ ! -f "$MLP" ]; then
  "$PY" "$ROOT/bench/zoo/export_zoo.py" "$BUILD/zoo" --only mlp >"$TMP/out" 2>&1 || { cat "$TMP/out"; }
fi

# --- onnx_tools.py ----------------------------------------------------------
expect_rc "check tiny_cnn" 0 "$PY" "$ROOT/tools/onnx_tools.py" check "$TINY"
expect_grep "check tiny_cnn prints ok" '^ok$' "$TMP/out"
expect_rc "check mlp" 0 "$PY" "$ROOT/tools/onnx_tools.py" check "$MLP"
head -c 1000 "$TINY" >"$TMP/broken.onnx"
expect_rc "check rejects a truncated model" 1 "$PY" "$ROOT/tools/onnx_tools.py" check "$TMP/broken.onnx"

expect_rc "infer-shapes tiny_cnn" 0 "$PY" "$ROOT/tools/onnx_tools.py" infer-shapes "$TINY" "$TMP/tiny_shapes.json"
expect_rc "infer-shapes tiny_cnn values" 0 "$PY" - "$TMP/tiny_shapes.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["input"] == {"dtype": "f32", "dims": [1, 3, 16, 16]}, d["input"]
assert d["relu2"] == {"dtype": "f32", "dims": [1, 16, 16, 16]}, d["relu2"]
assert d["reshape1"]["dims"] == [1, 16, 64], d["reshape1"]
assert d["logits"] == {"dtype": "f32", "dims": [1, 10]}, d["logits"]
assert d["one"] == {"dtype": "f32", "dims": []}, d["one"]
assert d["shape_1_1024"] == {"dtype": "i64", "dims": [2]}, d["shape_1_1024"]
EOF
expect_rc "infer-shapes mlp" 0 "$PY" "$ROOT/tools/onnx_tools.py" infer-shapes "$MLP" "$TMP/mlp_shapes.json"
expect_rc "infer-shapes mlp symbolic batch" 0 "$PY" - "$TMP/mlp_shapes.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["input"] == {"dtype": "f32", "dims": ["batch", 784]}, d["input"]
assert d["output"] == {"dtype": "f32", "dims": ["batch", 10]}, d["output"]
EOF

expect_rc "summary tiny_cnn" 0 "$PY" "$ROOT/tools/onnx_tools.py" summary "$TINY"
cp "$TMP/out" "$TMP/summary.json"
expect_rc "summary tiny_cnn content" 0 "$PY" - "$TMP/summary.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["ops"]["BatchNormalization"] == 1 and s["ops"]["Transpose"] == 2 and s["ops"]["MatMul"] == 2, s["ops"]
assert s["parameters"] == 33552, s["parameters"]
assert s["opsets"] == {"ai.onnx": 17}, s["opsets"]
assert s["inputs"] == [{"name": "input", "dtype": "f32", "dims": [1, 3, 16, 16]}], s["inputs"]
EOF

# --- examples -----------------------------------------------------------------
expect_rc "make_examples.py runs" 0 "$PY" "$ROOT/examples/make_examples.py" "$TMP/examples"
expect_rc "make_examples.py reproduces the committed tiny_cnn.onnx" 0 cmp "$TINY" "$TMP/examples/tiny_cnn.onnx"
expect_rc "export_zoo.py --list" 0 "$PY" "$ROOT/bench/zoo/export_zoo.py" --list
expect_grep "export_zoo.py lists bert_encoder" '^bert_encoder +small' "$TMP/out"

# --- run.mjs -----------------------------------------------------------------------
RUN="$ROOT/tools/ort/run.mjs"
expect_rc "run tiny_cnn" 0 node "$RUN" "$TINY" --seed 3
cp "$TMP/out" "$TMP/run1"
expect_grep "run tiny_cnn summary" '^\{"name":"logits","dtype":"float32","dims":\[1,10\],"sha256":"[0-9a-f]{64}","min":' "$TMP/run1"
expect_rc "run tiny_cnn again" 0 node "$RUN" "$TINY" --seed 3
cp "$TMP/out" "$TMP/run2"
expect_rc "run is deterministic" 0 cmp "$TMP/run1" "$TMP/run2"
expect_rc "run tiny_cnn other seed" 0 node "$RUN" "$TINY" --seed 4
if cmp -s "$TMP/run1" "$TMP/out"; then ko "another seed gives other outputs"; else ok "another seed gives other outputs"; fi
expect_rc "run tiny_cnn --opt disable" 0 node "$RUN" "$TINY" --seed 3 --opt disable --save-inputs "$TMP/in" --out "$TMP/o1"
expect_rc "run tiny_cnn from --inputs" 0 node "$RUN" "$TINY" --inputs "$TMP/in" --opt disable --out "$TMP/o2"
expect_rc "inputs round trip" 0 cmp "$TMP/o1/0.bin" "$TMP/o2/0.bin"
expect_grep "output meta" '"name":"logits","dtype":"float32","dims":\[1,10\]' "$TMP/o1/0.json"

expect_rc "run mlp --dim batch=4" 0 node "$RUN" "$MLP" --dim batch=4 --save-inputs "$TMP/min" --out "$TMP/mout"
expect_grep "mlp batch 4 output dims" '"dims":\[4,10\]' "$TMP/out"
expect_rc "mlp matches a numpy reference" 0 "$PY" - "$MLP" "$TMP/min" "$TMP/mout" <<'EOF'
import json, sys
import numpy as np, onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
w = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
meta = json.load(open(sys.argv[2] + "/0.json"))
assert meta["dtype"] == "float32" and meta["dims"] == [4, 784], meta
x = np.fromfile(sys.argv[2] + "/0.bin", dtype="<f4").reshape(meta["dims"]).astype(np.float64)
assert -1 <= x.min() and x.max() < 1
for n in m.graph.node:  # Gemm(transB=1) / Relu chain
    if n.op_type == "Gemm":
        x = x @ w[n.input[1]].astype(np.float64).T + w[n.input[2]]
    elif n.op_type == "Relu":
        x = np.maximum(x, 0)
y = np.fromfile(sys.argv[3] + "/0.bin", dtype="<f4").reshape(4, 10)
err = np.abs(y - x).max()
assert err < 1e-4, err
EOF
expect_rc "run missing model exits 2" 2 node "$RUN" "$TMP/missing.onnx"
expect_grep "run error names the file" 'missing\.onnx' "$TMP/out"

# --- profile.mjs -------------------------------------------------------------------------
PROF="$ROOT/tools/ort/profile.mjs"
expect_rc "profile tiny_cnn --json" 0 node "$PROF" "$TINY" --runs 3 --warmup 1 --json --optimized "$TMP/tiny_ort.onnx"
cp "$TMP/out" "$TMP/profile.jsonl"
# Every kernel ORT ran in the timed runs, once each, with its shapes; the total
# counts them and the optimized graph ORT wrote has at least as many nodes.
expect_rc "profile tiny_cnn kernels" 0 "$PY" - "$TMP/profile.jsonl" "$TMP/tiny_ort.onnx" <<'EOF'
import json, sys, onnx
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
rows, total = lines[:-1], lines[-1]["total"]
assert total["kernels"] == len(rows) > 0 and total["runs"] == 3, total
assert all(r["runs"] == 3 and r["us"] >= 0 for r in rows), rows
convs = [r for r in rows if r["op"] in ("Conv", "FusedConv")]
assert convs and all(r["inputs"].startswith("float[1,") for r in convs), rows
assert abs(sum(r["us"] for r in rows) - total["kernel_us"]) < 1e-6, total
assert sum(v["count"] for v in total["by_op"].values()) == len(rows), total
assert len(onnx.load(sys.argv[2]).graph.node) >= len(rows) - 1, len(rows)
EOF
# Through a pipe that holds one page, read slowly: every line, the total last
# (process.exit() dropped what the pipe had not taken: measure.mjs got
# densenet121's profile cut short under load and left the model out).
DENSE="$BUILD/zoo/densenet121.onnx"
if [ -f "$DENSE" ]; then
  expect_rc "profile --json through a full pipe ends with its total" 0 "$PY" - "$PROF" "$DENSE" <<'EOF'
import fcntl, json, os, subprocess, sys, time
r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ
p = subprocess.Popen(["node", sys.argv[1], sys.argv[2], "--json", "--runs", "1", "--warmup", "0"], stdout=w)
os.close(w)
out = b""
while True:
    time.sleep(0.02)
    chunk = os.read(r, 4096)
    if not chunk:
        break
    out += chunk
rows = [l for l in out.decode().split("\n") if l.strip()]
assert p.wait() == 0 and len(out) > 4096, len(out)
assert json.loads(rows[-1])["total"]["kernels"] == len(rows) - 1, (len(out), rows[-1][:80])
EOF
fi
expect_rc "profile with a missing model exits 2" 2 node "$PROF" "$TMP/missing.onnx"
expect_grep "profile error names the file" 'missing\.onnx' "$TMP/out"

# --- compare.mjs -------------------------------------------------------------------------
CMP="$ROOT/tools/ort/compare.mjs"
expect_rc "compare tiny_cnn with itself --exact" 0 node "$CMP" "$TINY" "$TINY" --exact --samples 3
expect_grep "compare reports identical" 'logits: max_abs 0\.000e\+0 .*identical OK' "$TMP/out"
expect_rc "compare mlp with itself --exact" 0 node "$CMP" "$MLP" "$MLP" --exact --dim batch=2 --samples 2
"$PY" - "$TINY" "$TMP/perturbed.onnx" <<'EOF'
import sys, onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
for t in m.graph.initializer:
    if t.name == "head.bias":
        a = numpy_helper.to_array(t).copy()
        a[3] += 1e-3
        t.CopyFrom(numpy_helper.from_array(a, t.name))
onnx.save(m, sys.argv[2])
EOF
expect_rc "compare perturbed copy fails (default tolerance)" 1 node "$CMP" "$TINY" "$TMP/perturbed.onnx"
expect_grep "compare reports FAIL" 'compare: FAIL' "$TMP/out"
expect_rc "compare perturbed copy fails --exact" 1 node "$CMP" "$TINY" "$TMP/perturbed.onnx" --exact
expect_rc "compare perturbed copy passes --atol 2e-3" 0 node "$CMP" "$TINY" "$TMP/perturbed.onnx" --atol 2e-3 --rtol 0
expect_rc "compare --json" 0 node "$CMP" "$TINY" "$TMP/perturbed.onnx" --atol 2e-3 --json
expect_grep "compare --json line" '^\{"output":"logits","output_b":"logits","max_abs":0\.00[01]' "$TMP/out"
expect_rc "compare with a missing model exits 2" 2 node "$CMP" "$TINY" "$TMP/missing.onnx"
expect_grep "compare error names the file" 'missing\.onnx' "$TMP/out"
expect_rc "compare mismatched models exits 2" 2 node "$CMP" "$TINY" "$MLP"

# --- bench.mjs ---------------------------------------------------------------------------
mkdir -p "$TMP/pairs"
cp "$TINY" "$TMP/pairs/tiny_cnn.onnx"
cp "$TMP/perturbed.onnx" "$TMP/pairs/tiny_cnn.opt.onnx"
cp "$MLP" "$TMP/pairs/mlp.onnx"
expect_rc "bench --pairs" 0 node "$ROOT/bench/ort/bench.mjs" --pairs "$MLP:$MLP" --runs 3 --warmup 1
expect_grep "bench table (speedup and control)" '^geomean +[0-9.]+x +[0-9.]+x$' "$TMP/out"
expect_grep "bench says which symbols it bound to 1" 'mlp\.onnx: batch bound to 1 \(give --dim batch=N' "$TMP/out"
expect_rc "bench --no-control" 0 node "$ROOT/bench/ort/bench.mjs" --pairs "$MLP:$MLP" --runs 3 --warmup 1 --no-control
expect_grep "bench --no-control leaves the control out" '^mlp .*x +-$' "$TMP/out"
expect_rc "bench --models" 0 node "$ROOT/bench/ort/bench.mjs" --models "$TMP/pairs" --runs 3 --warmup 1 --json "$TMP/bench.json"
expect_grep "bench --models runs the pair only" '^tiny_cnn +1\.00e-3' "$TMP/out"
expect_grep "bench --json" '"geomean_speedup"' "$TMP/bench.json"
expect_grep "bench --json has the control" '"control": [0-9.]+' "$TMP/bench.json"
expect_rc "bench --clock cpu" 0 node "$ROOT/bench/ort/bench.mjs" --pairs "$MLP:$MLP" --runs 6 --warmup 1 --no-control \
  --clock cpu --json "$TMP/cpu.json" --dim batch=2
expect_nogrep "bench with every symbol named says nothing of it" 'bound to 1' "$TMP/out"
expect_grep "bench --clock cpu is recorded" '"clock": "cpu"' "$TMP/cpu.json"
expect_grep "bench rows have the sign test over the rounds" '"rounds": [0-6],' "$TMP/cpu.json"
expect_grep "bench rows have the sign test's p" '"p_value": (1|0\.[0-9]+|[0-9.]+e-[0-9]+)' "$TMP/cpu.json"
expect_rc "bench --clock other exits 2" 2 node "$ROOT/bench/ort/bench.mjs" --pairs "$MLP:$MLP" --runs 1 --clock gpu
expect_grep "bench --clock other says what it takes" 'expected wall or cpu' "$TMP/out"

# --- the zoo scripts: one refinery batch each ---------------------------------------------
# A zoo of mlp and a file that is no model: the bad one is a row of its own,
# the other is optimized and timed.
mkdir -p "$TMP/zoo"
cp "$MLP" "$TMP/zoo/mlp.onnx"
echo "not a model" > "$TMP/zoo/bad.onnx"
expect_rc "run_zoo.sh" 0 env ZOO="$TMP/zoo" RUNS=3 "$ROOT/bench/ort/run_zoo.sh" "$BUILD" "$TMP/zoo_opt"
expect_grep "run_zoo.sh runs one batch" '^refinery batch: 2 jobs: 1 bad input, 1 written' "$TMP/out"
expect_grep "run_zoo.sh row per model" '^mlp +[0-9]+ +[0-9]+ +[A-Za-z]+.* +[0-9.]+ +[0-9.]+  (optimized|kept original): ' "$TMP/out"
expect_grep "run_zoo.sh names the failed model" '^optimize bad failed: bad input: .*bad\.onnx' "$TMP/out"
expect_grep "run_zoo.sh times the written model" '^mlp +[0-9.]+e[-+][0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x' "$TMP/out"
expect_grep "run_zoo.sh leaves the batch summary" '"key": "cpu/mlp.onnx"' "$TMP/zoo_opt/summary.json"
mkdir -p "$TMP/limits"
cp "$MLP" "$TMP/limits/mlp.onnx"
expect_rc "check_limits.py" 0 "$PY" "$ROOT/bench/zoo/check_limits.py" "$BUILD" --zoo "$TMP/limits" --targets cpu,gpu \
  --out "$TMP/limits_out"
expect_grep "check_limits.py row per model and target" '^mlp +gpu +0 +[A-Za-z]+.* +ok$' "$TMP/out"
expect_grep "check_limits.py verdict" '^0 failing run\(s\)$' "$TMP/out"
expect_rc "extract run_zoo.sh" 0 env ZOO="$TMP/limits" "$ROOT/bench/extract/run_zoo.sh" "$BUILD" "$TMP/extract" \
  -- --time-limit 1
expect_grep "extract run_zoo.sh runs one batch with --egraphs" '^refinery batch: 6 jobs: 6 written' "$TMP/out"
expect_grep "extract run_zoo.sh: an e-graph per model and target" '"eclass"' "$TMP/extract/tpu/mlp.onnx.egraph.json"
expect_grep "extract run_zoo.sh: a row per e-graph" 'tiny_cnn\.onnx\.egraph.*' "$TMP/out"
expect_rc "extract run_zoo.sh again reuses the e-graphs" 0 env ZOO="$TMP/limits" \
  "$ROOT/bench/extract/run_zoo.sh" "$BUILD" "$TMP/extract" -- --time-limit 1
expect_grep "extract run_zoo.sh resumes" '6 jobs, 6 resumed from the journal' "$TMP/out"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

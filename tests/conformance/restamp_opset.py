#!/usr/bin/python3
"""Copies ONNX node tests stamped with opset 9-12 whose ops have the same
semantics at opset 13 (conv, pooling, round, ...) and re-stamps them as
opset 13, so the conformance runner can check those kernels too:

    /usr/bin/python3 tests/conformance/restamp_opset.py /tmp/restamped
    build/tests/conformance/conformance --data /tmp/restamped --suite node

Not part of ctest: it needs python3-onnx, and the re-stamped models are a
check of the kernels, not of ONNX conformance."""
import os
import re
import shutil
import sys

import onnx

SRC = "/usr/share/libonnx-testdata/data/node"
# Ops whose opset 9-12 form is the same as their opset 13 form (no attribute
# turned into an input, no new semantics).
SAME = re.compile(r"(pool|conv|round|depthtospace|spacetodepth|lrn|instancenorm|topk|argm|celu|thresholded|"
                  r"isinf|isnan|constantofshape|range|pow_types)")

out = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "/tmp/restamped", "node")
os.makedirs(out, exist_ok=True)
count = 0
for test in sorted(os.listdir(SRC)):
    if not SAME.search(test):
        continue
    model = onnx.load(os.path.join(SRC, test, "model.onnx"))
    default = [o for o in model.opset_import if o.domain in ("", "ai.onnx")]
    if not default or not 9 <= default[0].version <= 12:
        continue
    default[0].version = 13
    dst = os.path.join(out, test)
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(os.path.join(SRC, test), dst)
    onnx.save(model, os.path.join(dst, "model.onnx"))
    count += 1
print(f"{count} tests re-stamped to opset 13 under {out}")

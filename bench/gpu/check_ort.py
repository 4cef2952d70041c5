#!/usr/bin/env python3
"""Checks bench/gpu/onnx_torch.py's results against ONNX Runtime (CPU) on a
sample of packed micro-models: that what time_kernels.py times computes what
the micro-model says.

    python3 bench/gpu/check_ort.py PACKED.jsonl OUT.jsonl [--device cuda] [--every 5] [--budget-s 60]

Every --every-th micro-model is rebuilt as an ONNX model with the values the
interpreter drew (same seed) as its initializers and inputs, run in
onnxruntime's CPU provider and in the interpreter on --device; a line per
micro-model: {id, ops, rel_err} (the largest |difference| over the largest
|ORT result|, over the outputs) or {error}. Floats on the device may use tf32
(about 1e-3 relative per product), so a rel_err under 1e-2 is a pass; the
summary line counts passes. Needs onnx and onnxruntime.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import onnxruntime as ort
import torch
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_torch  # noqa: E402

ONNX_TYPE = {v: k for k, v in onnx_torch.ONNX_ENUM.items()}


def attr(name, v):
    if isinstance(v, dict) and "tensor" in v:
        t = onnx_torch.make_tensor(v["tensor"], torch.Generator().manual_seed(0), "cpu").cpu()
        return helper.make_attribute(name, numpy_helper.from_array(t.numpy(), v["tensor"].get("name", "")))
    return helper.make_attribute(name, v)


def to_model(graph, tensors, results):
    nodes = []
    for n in graph["nodes"]:
        node = helper.make_node(n["op"], n["inputs"], n["outputs"], domain=n.get("domain", ""))
        node.attribute.extend(attr(k, v) for k, v in n["attrs"].items())
        nodes.append(node)
    inits = [numpy_helper.from_array(tensors[e["name"]].cpu().numpy(), e["name"]) for e in graph["initializers"]]
    inputs = [helper.make_tensor_value_info(e["name"], ONNX_TYPE[onnx_torch.DTYPES[e["dtype"]]], e["shape"])
              for e in graph["inputs"]]
    outputs = [helper.make_tensor_value_info(name, ONNX_TYPE[y.dtype], list(y.shape))
               for name, y in zip(graph["outputs"], results)]
    g = helper.make_graph(nodes, "micro", inputs, outputs, inits)
    opsets = [helper.make_opsetid(d, v) for d, v in graph.get("opset", {"": 17}).items()]
    model = helper.make_model(g, opset_imports=opsets)
    model.ir_version = 8  # the oldest that opset 17 takes: any onnxruntime since 1.13 loads it
    return model


def check(entry, device):
    tensors = {}
    feeds, steps, outputs = onnx_torch.prepare(entry["graph"], device, tensors=tensors)
    results = onnx_torch.run(feeds, steps, outputs)
    ours = [y.double().cpu().numpy() for y in results]
    model = to_model(entry["graph"], tensors, results)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    theirs = sess.run(outputs, {n: t.cpu().numpy() for n, t in feeds.items()})
    err = 0.0
    for a, b in zip(ours, theirs):
        b = np.asarray(b, dtype=np.float64)
        if a.shape != b.shape:
            raise ValueError(f"shape {list(a.shape)} against ORT's {list(b.shape)}")
        scale = max(float(np.max(np.abs(b))) if b.size else 0.0, 1e-6)
        err = max(err, float(np.max(np.abs(a - b))) / scale if b.size else 0.0)
    return err


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("packed")
    p.add_argument("out")
    p.add_argument("--device", default="cuda")
    p.add_argument("--every", type=int, default=5)
    p.add_argument("--budget-s", type=float, default=60)
    a = p.parse_args()
    torch.set_float32_matmul_precision("high")
    torch.set_grad_enabled(False)
    began = time.monotonic()
    counts = {"pass": 0, "fail": 0, "error": 0, "skipped": 0}
    with open(a.packed) as f, open(a.out, "w") as out:
        for i, line in enumerate(f):
            if i % a.every or time.monotonic() - began > a.budget_s:
                continue
            entry = json.loads(line)
            row = {"id": entry["id"], "ops": entry.get("ops", [])}
            try:
                row["rel_err"] = check(entry, a.device)
                counts["pass" if row["rel_err"] < 1e-2 else "fail"] += 1
            except onnx_torch.Unsupported as e:
                row["skipped"] = str(e)
                counts["skipped"] += 1
            except Exception as e:  # noqa: BLE001 - recorded, the check goes on
                row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
                counts["error"] += 1
            out.write(json.dumps(row) + "\n")
    print(f"check_ort: {counts} (rel_err < 1e-2 passes) in {time.monotonic() - began:.0f} s; wrote {a.out}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

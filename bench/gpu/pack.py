#!/usr/bin/env python3
"""Packs the micro-models that `refinery measure` wrote into one JSON-lines
file without their weights, for the GPU timing script (bench/gpu/time_kernels.py)
on a machine that cannot take the weights along (docs/targets.md, "Measured on
a GPU").

    python3 bench/gpu/pack.py DIR/manifest.jsonl OUT.jsonl [--keep-elems 64] [--kind kernel|model]

One line per micro-model of the manifest (kind "kernel"; --kind model: the
whole models it lists), in the order of
their ids (hashes: a timing run cut short has timed a sample of every
model's kernels): {id, ops, models,
head, graph: {opset: {domain: version}, inputs: [{name, dtype, shape}],
outputs: [name], output_shapes (null where not static), initializers: [{name,
dtype, shape, data?}], nodes: [{op, domain, inputs, outputs, attrs}]}}. An
initializer keeps its data when it is an integer tensor (shapes, axes,
indices: they decide what runs) or has at most --keep-elems elements (an eps,
a Pow's exponent); a larger float tensor keeps its shape and dtype alone and
the timing script fills it with seeded random values. Needs the onnx package.
"""
import argparse
import json
import sys

import numpy as np
import onnx
from onnx import numpy_helper

INT_TYPES = (np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_)


def dtype_name(elem_type):
    return onnx.TensorProto.DataType.Name(elem_type).lower()


def tensor_entry(t, keep_elems):
    a = numpy_helper.to_array(t)
    e = {"name": t.name, "dtype": dtype_name(t.data_type), "shape": list(a.shape)}
    if a.dtype.type in INT_TYPES or a.size <= keep_elems:
        e["data"] = a.reshape(-1).tolist()
    return e


def attr_value(a, keep_elems):
    kind = onnx.AttributeProto.AttributeType.Name(a.type)
    if kind == "TENSOR":
        return {"tensor": tensor_entry(a.t, keep_elems)}
    v = onnx.helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, list):
        return [x.decode() if isinstance(x, bytes) else x for x in v]
    if kind in ("GRAPH", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"):
        raise ValueError(f"attribute {a.name} of kind {kind}")
    return v


def value_entry(v):
    tt = v.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else 1 for d in tt.shape.dim]
    return {"name": v.name, "dtype": dtype_name(tt.elem_type), "shape": dims}


def static_shape(v):
    """A value's dims where the model gives them all, else None."""
    tt = v.type.tensor_type
    if not tt.HasField("shape") or not all(d.HasField("dim_value") for d in tt.shape.dim):
        return None
    return [d.dim_value for d in tt.shape.dim]


def pack(model, keep_elems):
    g = model.graph
    inits = {t.name for t in g.initializer}
    return {
        "opset": {imp.domain: imp.version for imp in model.opset_import},
        "inputs": [value_entry(v) for v in g.input if v.name not in inits],
        "outputs": [v.name for v in g.output],
        "output_shapes": [static_shape(v) for v in g.output],
        "initializers": [tensor_entry(t, keep_elems) for t in g.initializer],
        "nodes": [{"op": n.op_type, "domain": n.domain, "inputs": list(n.input), "outputs": list(n.output),
                   "attrs": {a.name: attr_value(a, keep_elems) for a in n.attribute}} for n in g.node],
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("manifest")
    p.add_argument("out")
    p.add_argument("--keep-elems", type=int, default=64)
    p.add_argument("--kind", default="kernel", help="the manifest entries taken: kernel (micro-models) or model")
    a = p.parse_args()
    bad = 0
    rows = []
    with open(a.manifest) as f:
        for line in f:
            e = json.loads(line)
            if e.get("kind") != a.kind:
                continue
            try:
                graph = pack(onnx.load(e["file"]), a.keep_elems)
            except (ValueError, OSError) as err:
                print(f"pack: {e['id']}: {err}", file=sys.stderr)
                bad += 1
                continue
            row = {k: e[k] for k in ("id", "ops", "models", "head") if k in e}
            row["graph"] = graph
            rows.append(row)
    # By id (a hash): a timing run cut short by its budget has timed a sample of every model's kernels.
    rows.sort(key=lambda r: r["id"])
    with open(a.out, "w") as out:
        for row in rows:
            out.write(json.dumps(row, separators=(",", ":")) + "\n")
    n = len(rows)
    print(f"pack: {n} micro-models written to {a.out} ({bad} left out)", file=sys.stderr)
    return 0 if n else 2


if __name__ == "__main__":
    sys.exit(main())

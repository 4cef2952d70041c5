#!/usr/bin/python3
"""Small ONNX helpers used by tests to cross-check Refinery (run with /usr/bin/python3).

    onnx_tools.py check MODEL               onnx.checker full_check; prints "ok" or the error; exit 0/1
    onnx_tools.py infer-shapes MODEL OUT.json
                                            onnx shape inference (data_prop=True, strict_mode=False);
                                            OUT.json maps every graph input, output, value_info and
                                            initializer name to {"dtype": "f32", "dims": [...]}:
                                            a dim is an int, a string (its symbol) or null (unknown);
                                            "dims" is null when the rank is unknown
    onnx_tools.py summary MODEL             JSON on stdout: op histogram, parameter count,
                                            inputs/outputs with types, opsets, node count

Exit status: 0 ok, 1 check failed or error.
"""

import json
import sys

import onnx

# ONNX TensorProto.DataType -> short name (the same spelling as ir::DType in C++).
DTYPES = {
    0: "undefined", 1: "f32", 2: "u8", 3: "i8", 4: "u16", 5: "i16", 6: "i32", 7: "i64", 8: "string",
    9: "bool", 10: "f16", 11: "f64", 12: "u32", 13: "u64", 14: "c64", 15: "c128", 16: "bf16",
    17: "f8e4m3fn", 18: "f8e4m3fnuz", 19: "f8e5m2", 20: "f8e5m2fnuz", 21: "u4", 22: "i4",
}


def dtype_name(elem_type):
    return DTYPES.get(elem_type, f"onnx_type_{elem_type}")


def value_type(vi):
    """{"dtype", "dims"} of a ValueInfoProto."""
    t = vi.type
    if not t.HasField("tensor_type"):
        kind = t.WhichOneof("value") or "unknown"
        return {"dtype": f"non_tensor:{kind}", "dims": None}
    tt = t.tensor_type
    if not tt.HasField("shape"):
        return {"dtype": dtype_name(tt.elem_type), "dims": None}
    dims = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        elif d.HasField("dim_param") and d.dim_param:
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return {"dtype": dtype_name(tt.elem_type), "dims": dims}


def io_list(values, exclude=()):
    out = []
    for vi in values:
        if vi.name in exclude:
            continue
        out.append(dict(name=vi.name, **value_type(vi)))
    return out


def load(path):
    return onnx.load(path)


def cmd_check(args):
    if len(args) != 1:
        raise SystemExit("usage: onnx_tools.py check MODEL")
    try:
        onnx.checker.check_model(load(args[0]), full_check=True)
    except Exception as e:  # checker, shape inference and protobuf errors alike
        print(f"{args[0]}: {type(e).__name__}: {e}")
        return 1
    print("ok")
    return 0


def cmd_infer_shapes(args):
    if len(args) != 2:
        raise SystemExit("usage: onnx_tools.py infer-shapes MODEL OUT.json")
    model = onnx.shape_inference.infer_shapes(load(args[0]), check_type=False, strict_mode=False,
                                              data_prop=True)
    g = model.graph
    out = {}
    for vi in g.input:
        out[vi.name] = value_type(vi)
    for init in g.initializer:
        out.setdefault(init.name, {"dtype": dtype_name(init.data_type), "dims": list(init.dims)})
    for vi in g.value_info:
        out[vi.name] = value_type(vi)
    for vi in g.output:
        out[vi.name] = value_type(vi)
    with open(args[1], "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    return 0


def cmd_summary(args):
    if len(args) != 1:
        raise SystemExit("usage: onnx_tools.py summary MODEL")
    model = load(args[0])
    g = model.graph
    inits = {i.name for i in g.initializer}
    ops = {}
    for n in g.node:
        key = n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}::{n.op_type}"
        ops[key] = ops.get(key, 0) + 1
    params = 0
    for i in g.initializer:
        p = 1
        for d in i.dims:
            p *= d
        params += p
    summary = {
        "file": args[0],
        "ir_version": model.ir_version,
        "opsets": {(o.domain or "ai.onnx"): o.version for o in model.opset_import},
        "producer": f"{model.producer_name} {model.producer_version}".strip(),
        "graph": g.name,
        "nodes": len(g.node),
        "ops": dict(sorted(ops.items())),
        "initializers": len(g.initializer),
        "parameters": params,
        "inputs": io_list(g.input, exclude=inits),
        "outputs": io_list(g.output),
    }
    print(json.dumps(summary, indent=1))
    return 0


COMMANDS = {"check": cmd_check, "infer-shapes": cmd_infer_shapes, "summary": cmd_summary}


def main(argv):
    if len(argv) < 2 or argv[1] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 1
    try:
        return COMMANDS[argv[1]](argv[2:])
    except SystemExit:
        raise
    except Exception as e:
        print(f"onnx_tools: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

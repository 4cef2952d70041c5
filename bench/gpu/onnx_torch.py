"""A small interpreter of the ONNX ops that `refinery measure`'s micro-models
hold, on PyTorch tensors (bench/gpu/time_kernels.py times it on a GPU).

A graph comes as bench/gpu/pack.py writes it (no weights: initializers
without data are filled with seeded random values). `prepare` folds what
ONNX Runtime would fold when it loads the model (nodes whose inputs are all
constants, Shape of a static shape) and returns the nodes that run, each a
closure over its op; an op it does not know raises Unsupported, so that the
caller counts the micro-model as skipped rather than timing something else.
Only torch is needed (no onnx, no numpy): it runs on the device's image.
"""
import math

import torch
import torch.nn.functional as F

DTYPES = {
    "float": torch.float32, "double": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16,
    "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8,
    "bool": torch.bool,
}
# TensorProto.DataType numbers, for Cast's `to` and ConstantOfShape's value.
ONNX_ENUM = {1: torch.float32, 2: torch.uint8, 3: torch.int8, 5: torch.int16, 6: torch.int32, 7: torch.int64,
             9: torch.bool, 10: torch.float16, 11: torch.float64, 16: torch.bfloat16}


class Unsupported(Exception):
    pass


def make_tensor(entry, gen, device):
    """An initializer or graph input: its data where pack.py kept it, else
    seeded values (floats uniform in [-1, 1), integers 0, as measure.mjs).
    Integer data stays on the host (shapes, axes, indices are read there);
    floats go to `device`, drawn there from `gen` (a generator of it)."""
    dtype = DTYPES.get(entry["dtype"])
    if dtype is None:
        raise Unsupported(f"dtype {entry['dtype']}")
    shape = [int(d) for d in entry["shape"]]
    if "data" in entry:
        t = torch.tensor(entry["data"], dtype=dtype).reshape(shape)
        return t.to(device) if dtype.is_floating_point else t
    if dtype.is_floating_point:
        return (torch.rand(shape, generator=gen, device=device) * 2 - 1).to(dtype)
    return torch.zeros(shape, dtype=dtype)


class Node:
    """One node that runs: its inputs' values (constants known ahead),
    attributes, and `ints(i)` for inputs read as integers on the host."""

    def __init__(self, spec, consts):
        self.op, self.attrs = spec["op"], spec["attrs"]
        self.inputs, self.outputs = spec["inputs"], spec["outputs"]
        self.consts = [consts.get(n) if n else None for n in self.inputs]
        self.host_sync = False  # set when an integer input had to be read back from the device

    def a(self, name, default=None):
        return self.attrs.get(name, default)

    def scalar(self, x, i, default):
        """Input i as a float on the host (a constant's read once, before any capture)."""
        if i >= len(self.inputs) or not self.inputs[i]:
            return default
        if self.consts[i] is not None:
            if not hasattr(self, "_scalars"):
                self._scalars = {}
            if i not in self._scalars:
                self._scalars[i] = float(self.consts[i].reshape(-1)[0])
            return self._scalars[i]
        if x[i].is_cuda:
            self.host_sync = True
        return float(x[i].reshape(-1)[0])

    def ints(self, x, i):
        if i >= len(self.inputs) or not self.inputs[i]:
            return None
        if self.consts[i] is not None:
            return [int(v) for v in self.consts[i].reshape(-1).tolist()]
        if x[i].is_cuda:
            self.host_sync = True
        return [int(v) for v in x[i].reshape(-1).tolist()]


def _axes(node, x, i, attr="axes"):
    got = node.ints(x, i) if len(node.inputs) > i and node.inputs[i] else None
    return got if got is not None else node.a(attr)


def _pads(pads, rank):
    """ONNX pads (begins then ends per spatial dim) as F.pad's list (last dim first)."""
    out = []
    for d in reversed(range(rank)):
        out += [pads[d], pads[d + rank]]
    return out


def _spatial_pad(node, x, kernel, strides, dilations):
    rank = x.dim() - 2
    pads = node.a("pads", [0] * (2 * rank))
    auto = node.a("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        pads = [0] * (2 * rank)
        for d in range(rank):
            size = x.shape[2 + d]
            out = -(-size // strides[d])
            total = max(0, (out - 1) * strides[d] + (kernel[d] - 1) * dilations[d] + 1 - size)
            lo = total // 2 if auto == "SAME_UPPER" else total - total // 2
            pads[d], pads[d + rank] = lo, total - lo
    elif auto == "VALID":
        pads = [0] * (2 * rank)
    return pads


def conv(node, x):
    w = x[1]
    rank = w.dim() - 2
    kernel = node.a("kernel_shape", list(w.shape[2:]))
    strides, dil = node.a("strides", [1] * rank), node.a("dilations", [1] * rank)
    pads = _spatial_pad(node, x[0], kernel, strides, dil)
    inp, padding = x[0], pads[:rank]
    if pads[:rank] != pads[rank:]:
        inp, padding = F.pad(inp, _pads(pads, rank)), [0] * rank
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[rank]
    bias = x[2] if len(x) > 2 else None
    return fn(inp, w, bias, strides, padding, dil, node.a("group", 1))


def conv_transpose(node, x):
    w = x[1]
    rank = w.dim() - 2
    strides, dil = node.a("strides", [1] * rank), node.a("dilations", [1] * rank)
    pads = node.a("pads", [0] * (2 * rank))
    if pads[:rank] != pads[rank:] or node.a("output_shape") is not None:
        raise Unsupported("ConvTranspose with uneven pads or output_shape")
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[rank]
    bias = x[2] if len(x) > 2 else None
    return fn(x[0], w, bias, strides, pads[:rank], node.a("output_padding", [0] * rank), node.a("group", 1), dil)


def pool(node, x, kind):
    rank = x[0].dim() - 2
    kernel = node.a("kernel_shape")
    strides, dil = node.a("strides", [1] * rank), node.a("dilations", [1] * rank)
    pads = _spatial_pad(node, x[0], kernel, strides, dil)
    inp, padding = x[0], pads[:rank]
    ceil = bool(node.a("ceil_mode", 0))
    if pads[:rank] != pads[rank:] or any(2 * p > k for p, k in zip(padding, kernel)):
        value = -math.inf if kind == "max" else 0.0
        inp, padding = F.pad(inp, _pads(pads, rank), value=value), [0] * rank
    if kind == "max":
        fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[rank]
        return fn(inp, kernel, strides, padding, dil, ceil_mode=ceil)
    fn = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[rank]
    return fn(inp, kernel, strides, padding, ceil_mode=ceil, count_include_pad=bool(node.a("count_include_pad", 0)))


def gemm(node, x):
    a = x[0].t() if node.a("transA", 0) else x[0]
    b = x[1].t() if node.a("transB", 0) else x[1]
    y = node.a("alpha", 1.0) * (a @ b) if node.a("alpha", 1.0) != 1.0 else a @ b
    if len(x) > 2 and x[2] is not None:
        beta = node.a("beta", 1.0)
        y = y + (beta * x[2] if beta != 1.0 else x[2])
    return y


def reshape(node, x):
    shape = node.ints(x, 1)
    if not node.a("allowzero", 0):
        shape = [x[0].shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return x[0].reshape(shape)


def slice_(node, x):
    starts, ends = node.ints(x, 1), node.ints(x, 2)
    axes = node.ints(x, 3) if len(x) > 3 and x[3] is not None else list(range(len(starts)))
    steps = node.ints(x, 4) if len(x) > 4 and x[4] is not None else [1] * len(starts)
    index = [slice(None)] * x[0].dim()
    for s, e, a, st in zip(starts, ends, axes, steps):
        if st < 0:
            raise Unsupported("Slice with a negative step")
        size = x[0].shape[a]
        s = max(0, min(size, s + size if s < 0 else s))
        e = max(0, min(size, e + size if e < 0 else e))
        index[a] = slice(s, e, st)
    return x[0][tuple(index)]


def split(node, x):
    axis = node.a("axis", 0)
    sizes = node.ints(x, 1) if len(x) > 1 and x[1] is not None else node.a("split")
    if sizes is None:
        n = node.a("num_outputs", len(node.outputs))
        size = x[0].shape[axis]
        sizes = [-(-size // n)] * (n - 1)
        sizes.append(size - sum(sizes))
    return list(torch.split(x[0], sizes, dim=axis))


def squeeze(node, x):
    axes = _axes(node, x, 1)
    if axes is None:
        return x[0].squeeze()
    rank = x[0].dim()
    return x[0].squeeze(tuple(a % rank for a in axes))


def unsqueeze(node, x):
    axes = sorted(a % (x[0].dim() + len(_axes(node, x, 1))) for a in _axes(node, x, 1))
    y = x[0]
    for a in axes:
        y = y.unsqueeze(a)
    return y


def gather(node, x):
    axis = node.a("axis", 0) % x[0].dim()
    idx = x[1]
    if node.consts[1] is not None:  # negative indices count from the end: made positive once
        if not hasattr(node, "_index"):
            c = node.consts[1]
            node._index = torch.where(c < 0, c + x[0].shape[axis], c).to(x[0].device)
        idx = node._index
    out = torch.index_select(x[0], axis, idx.reshape(-1))
    return out.reshape(x[0].shape[:axis] + idx.shape + x[0].shape[axis + 1:])


def reduce(fn):
    def run(node, x):
        axes = _axes(node, x, 1)
        keep = bool(node.a("keepdims", 1))
        if not axes:
            if node.a("noop_with_empty_axes", 0):
                return x[0]
            axes = list(range(x[0].dim()))
        return fn(x[0], axes, keep)
    return run


def pad(node, x):
    pads = node.ints(x, 1)
    mode = node.a("mode", "constant")
    value = node.scalar(x, 2, 0.0)
    rank = x[0].dim()
    return F.pad(x[0], _pads(pads, rank), mode=mode, value=value if mode == "constant" else None)


def expand(node, x):
    shape = node.ints(x, 1)
    out = torch.broadcast_shapes(tuple(x[0].shape), tuple(shape))
    return x[0].expand(out)


def clip(node, x):
    lo = x[1] if len(x) > 1 and x[1] is not None else node.a("min")
    hi = x[2] if len(x) > 2 and x[2] is not None else node.a("max")
    return torch.clamp(x[0], lo, hi)


def layer_norm(node, x):
    axis = node.a("axis", -1) % x[0].dim()
    shape = x[0].shape[axis:]
    bias = x[2] if len(x) > 2 else None
    return F.layer_norm(x[0], shape, x[1].expand(shape), None if bias is None else bias.expand(shape),
                        node.a("epsilon", 1e-5))


def gelu(node, x):
    return F.gelu(x[0], approximate="tanh" if node.a("approximate", "none") == "tanh" else "none")


def softmax(fn):
    return lambda node, x: fn(x[0], dim=node.a("axis", -1))


def divide(a, b):
    """ONNX Div: integers truncate (a shape's third, in torch's MultiheadAttention export)."""
    return a / b if a.is_floating_point() else torch.div(a, b, rounding_mode="trunc")


def binary(fn):
    return lambda node, x: fn(x[0], x[1])


def unary(fn):
    return lambda node, x: fn(x[0])


OPS = {
    "Conv": conv, "ConvTranspose": conv_transpose, "MatMul": binary(torch.matmul), "Gemm": gemm,
    "MaxPool": lambda n, x: pool(n, x, "max"), "AveragePool": lambda n, x: pool(n, x, "avg"),
    "GlobalAveragePool": lambda n, x: x[0].mean(dim=tuple(range(2, x[0].dim())), keepdim=True),
    "GlobalMaxPool": lambda n, x: x[0].amax(dim=tuple(range(2, x[0].dim())), keepdim=True),
    "BatchNormalization": lambda n, x: F.batch_norm(x[0], x[3], x[4], x[1], x[2], False, 0.0, n.a("epsilon", 1e-5)),
    "LayerNormalization": layer_norm,
    "InstanceNormalization": lambda n, x: F.instance_norm(x[0], weight=x[1], bias=x[2], eps=n.a("epsilon", 1e-5)),
    "Add": binary(torch.add), "Sub": binary(torch.sub), "Mul": binary(torch.mul), "Div": binary(divide),
    "Pow": binary(torch.pow), "Max": lambda n, x: torch.stack(torch.broadcast_tensors(*x)).amax(0),
    "Min": lambda n, x: torch.stack(torch.broadcast_tensors(*x)).amin(0),
    "Equal": binary(torch.eq), "Less": binary(torch.lt), "Greater": binary(torch.gt),
    "LessOrEqual": binary(torch.le), "GreaterOrEqual": binary(torch.ge),
    "And": binary(torch.logical_and), "Or": binary(torch.logical_or), "Not": unary(torch.logical_not),
    "Where": lambda n, x: torch.where(x[0], x[1], x[2]),
    "Relu": unary(torch.relu), "Sigmoid": unary(torch.sigmoid), "Tanh": unary(torch.tanh), "Erf": unary(torch.erf),
    "Exp": unary(torch.exp), "Log": unary(torch.log), "Sqrt": unary(torch.sqrt), "Reciprocal": unary(torch.reciprocal),
    "Neg": unary(torch.neg), "Abs": unary(torch.abs), "Floor": unary(torch.floor), "Ceil": unary(torch.ceil),
    "Sin": unary(torch.sin), "Cos": unary(torch.cos), "Softplus": unary(F.softplus),
    "LeakyRelu": lambda n, x: F.leaky_relu(x[0], n.a("alpha", 0.01)),
    "Elu": lambda n, x: F.elu(x[0], n.a("alpha", 1.0)),
    "HardSigmoid": lambda n, x: torch.clamp(x[0] * n.a("alpha", 0.2) + n.a("beta", 0.5), 0, 1),
    "HardSwish": unary(F.hardswish), "Gelu": gelu, "Clip": clip,
    "Softmax": softmax(torch.softmax), "LogSoftmax": softmax(torch.log_softmax),
    "Transpose": lambda n, x: x[0].permute(n.a("perm", list(reversed(range(x[0].dim()))))).contiguous(),
    "Reshape": reshape, "Flatten": lambda n, x: x[0].reshape(
        (math.prod(x[0].shape[:n.a("axis", 1) % max(1, x[0].dim())]), -1)) if n.a("axis", 1) else x[0].reshape(1, -1),
    "Squeeze": squeeze, "Unsqueeze": unsqueeze,
    "Concat": lambda n, x: torch.cat([t for t in x if t is not None], dim=n.a("axis")),
    "Split": split, "Slice": slice_,
    "Gather": gather,
    "GatherElements": lambda n, x: torch.gather(x[0], n.a("axis", 0), x[1]),
    "Expand": expand, "Tile": lambda n, x: x[0].repeat(n.ints(x, 1)), "Pad": pad,
    "Cast": lambda n, x: x[0].to(ONNX_ENUM[n.a("to")]),
    "Identity": unary(lambda t: t), "Dropout": unary(lambda t: t),
    "ReduceMean": reduce(lambda t, a, k: t.mean(dim=tuple(a), keepdim=k)),
    "ReduceSum": reduce(lambda t, a, k: t.sum(dim=tuple(a), keepdim=k)),
    "ReduceMax": reduce(lambda t, a, k: t.amax(dim=tuple(a), keepdim=k)),
    "ReduceMin": reduce(lambda t, a, k: t.amin(dim=tuple(a), keepdim=k)),
    "ReduceL2": reduce(lambda t, a, k: t.square().sum(dim=tuple(a), keepdim=k).sqrt()),
    "Einsum": lambda n, x: torch.einsum(n.a("equation"), *x),
    "Trilu": lambda n, x: (torch.triu if n.a("upper", 1) else torch.tril)(x[0], (n.ints(x, 1) or [0])[0]),
    "CumSum": lambda n, x: torch.cumsum(x[0], dim=n.ints(x, 1)[0]),
}


def fold_only(spec, x, node):
    """Ops that make constants (ONNX Runtime folds them when it loads the model)."""
    op = spec["op"]
    if op == "Shape":
        s = list(x[0].shape)
        start, end = spec["attrs"].get("start", 0), spec["attrs"].get("end", len(s))
        return torch.tensor(s[start:end], dtype=torch.int64)
    if op == "Size":
        return torch.tensor(x[0].numel(), dtype=torch.int64)
    if op == "Constant":
        attrs = spec["attrs"]
        if "value" in attrs:
            return make_tensor(attrs["value"]["tensor"], torch.Generator().manual_seed(0), "cpu").cpu()
        for k, dt in (("value_float", torch.float32), ("value_int", torch.int64), ("value_floats", torch.float32),
                      ("value_ints", torch.int64)):
            if k in attrs:
                return torch.tensor(attrs[k], dtype=dt)
        raise Unsupported("Constant without a tensor value")
    if op == "ConstantOfShape":
        value = spec["attrs"].get("value")
        fill = make_tensor(value["tensor"], torch.Generator(), "cpu").cpu() if value else torch.zeros(1)
        return fill.reshape(-1)[0].expand(node.ints(x, 0)).contiguous()
    if op == "Range":
        return torch.arange(x[0].item(), x[1].item(), x[2].item())
    return None


def prepare(graph, device, seed=0, tensors=None):
    """(feeds, steps, outputs): the graph inputs on `device`, the nodes that
    run as a list of (Node, fn), and the output names. Constant expressions
    and static shapes are folded on the host first; the nodes that run are
    run once here (their results' shapes fold a Shape downstream).
    `tensors`, when given, receives the initializers and inputs drawn."""
    gen = torch.Generator(device=device).manual_seed(seed)
    consts = {e["name"]: make_tensor(e, gen, device) for e in graph["initializers"]}
    feeds = {e["name"]: make_tensor(e, gen, device).to(device) for e in graph["inputs"]}
    if tensors is not None:  # the values drawn, for a check against another runtime
        tensors.update(consts)
        tensors.update(feeds)
    env = dict(feeds)
    steps = []
    for spec in graph["nodes"]:
        if spec.get("domain") not in ("", "ai.onnx", None):
            raise Unsupported(f"{spec['domain']}.{spec['op']}")
        node = Node(spec, consts)
        present = [n for n in spec["inputs"] if n]
        if spec["op"] in ("Shape", "Size") or all(n in consts for n in present):
            x = [(consts[n] if n in consts else env[n]) if n else None for n in spec["inputs"]]
            if any(t is not None and t.device.type != "cpu" for t in x):  # integers read as such come from consts
                x = [t.to(device) if t is not None else None for t in x]
            out = fold_only(spec, x, node)
            if out is None:
                fn = OPS.get(spec["op"])
                if fn is None:
                    raise Unsupported(spec["op"])
                out = fn(node, x)
            outs = out if isinstance(out, list) else [out]
            for name, t in zip(spec["outputs"], outs):
                consts[name] = t if t.is_floating_point() else t.cpu()
            continue
        fn = OPS.get(spec["op"])
        if fn is None:
            raise Unsupported(spec["op"])
        node.dev_inputs = [consts[n].to(device) if n in consts else None for n in node.inputs]
        x = [c if c is not None else (env[n] if n else None) for n, c in zip(node.inputs, node.dev_inputs)]
        out = fn(node, x)
        env.update(zip(node.outputs, out if isinstance(out, list) else [out]))
        steps.append((node, fn))
    for name in graph["outputs"]:
        if name not in env:
            raise Unsupported(f"output {name} is a constant")
    return feeds, steps, graph["outputs"]


def run(feeds, steps, outputs):
    """One forward pass: the graph's outputs."""
    env = dict(feeds)
    for node, fn in steps:
        x = [c if c is not None else (env[n] if n else None) for n, c in zip(node.inputs, node.dev_inputs)]
        out = fn(node, x)
        if isinstance(out, list):
            env.update(zip(node.outputs, out))
        else:
            env[node.outputs[0]] = out
    return [env[n] for n in outputs if n in env]

#!/usr/bin/python3
"""Export the Refinery model zoo to ONNX.

    /usr/bin/python3 bench/zoo/export_zoo.py OUTDIR [--only NAME ...] [--small] [--list] [--force]

Every model is built with random weights from torch.manual_seed(0) (nothing is
downloaded: weights=None), put in eval mode and exported with
torch.onnx.export(opset 17, do_constant_folding=True) to OUTDIR/<name>.onnx.
Each file is checked with onnx.checker.check_model(full_check=True).

OUTDIR/zoo.json lists every model present in OUTDIR (name, file, bytes, sha256,
opset, inputs/outputs, params, gflops at batch 1, size class, op histogram).

Reruns are cheap: a model is skipped when its file exists and its stamp
(OUTDIR/.stamps/<name>.json) records the same script hash, torch version and
file hash. Output is deterministic: two runs give byte-identical files.
"""

import argparse
import contextlib
import hashlib
import io
import json
import os
import sys
import time

SCRIPT = os.path.abspath(__file__)
OPSET = 17

# Size class "small": cheap enough for unit tests on 2 cores.
SMALL_MAX_BYTES = 15 * 1024 * 1024
SMALL_MAX_GFLOPS = 1.0
CALIBRATION_BATCH = 2  # random images used to set BatchNorm running statistics


# --------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------

def _tv(name, **kw):
    def build():
        import torchvision.models as tvm
        return getattr(tvm, name)(weights=None, **kw)
    return build


def _mlp():
    import torch.nn as nn
    return nn.Sequential(
        nn.Linear(784, 256), nn.ReLU(),
        nn.Linear(256, 128), nn.ReLU(),
        nn.Linear(128, 10))


def _bert_encoder():
    import torch
    import torch.nn as nn

    VOCAB, SEQ, HIDDEN, HEADS, FFN, LAYERS = 1000, 64, 256, 4, 1024, 4
    HEAD_DIM = HIDDEN // HEADS

    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.query = nn.Linear(HIDDEN, HIDDEN)
            self.key = nn.Linear(HIDDEN, HIDDEN)
            self.value = nn.Linear(HIDDEN, HIDDEN)
            self.out = nn.Linear(HIDDEN, HIDDEN)
            self.scale = 1.0 / (HEAD_DIM ** 0.5)

        def heads(self, x):  # [B, S, H] -> [B, heads, S, d]
            return x.reshape(-1, SEQ, HEADS, HEAD_DIM).transpose(1, 2)

        def forward(self, x):
            q = self.heads(self.query(x))
            k = self.heads(self.key(x))
            v = self.heads(self.value(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale
            probs = torch.softmax(scores, dim=-1)
            ctx = torch.matmul(probs, v).transpose(1, 2).reshape(-1, SEQ, HIDDEN)
            return self.out(ctx)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = SelfAttention()
            self.ln1 = nn.LayerNorm(HIDDEN, eps=1e-12)
            self.ffn_in = nn.Linear(HIDDEN, FFN)
            self.act = nn.GELU()
            self.ffn_out = nn.Linear(FFN, HIDDEN)
            self.ln2 = nn.LayerNorm(HIDDEN, eps=1e-12)

        def forward(self, x):
            x = self.ln1(x + self.attention(x))
            return self.ln2(x + self.ffn_out(self.act(self.ffn_in(x))))

    class BertEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.word_embeddings = nn.Embedding(VOCAB, HIDDEN)
            self.position_embeddings = nn.Embedding(SEQ, HIDDEN)
            self.embed_ln = nn.LayerNorm(HIDDEN, eps=1e-12)
            self.layers = nn.ModuleList([Layer() for _ in range(LAYERS)])
            self.register_buffer("position_ids", torch.arange(SEQ).unsqueeze(0), persistent=False)

        def forward(self, input_ids):
            x = self.word_embeddings(input_ids) + self.position_embeddings(self.position_ids)
            x = self.embed_ln(x)
            for layer in self.layers:
                x = layer(x)
            return x

    return BertEncoder()


# --------------------------------------------------------------------------
# Transformers, exported the way people export them (docs/zoo.md): dynamic
# batch/seq axes, the exporter's own output types (nothing pinned), with and
# without torch.no_grad(), opsets 13 and 17. Small: hidden 64, 2 layers, seq 16.
# --------------------------------------------------------------------------

T_HIDDEN, T_HEADS, T_FFN, T_LAYERS, T_SEQ, T_VOCAB = 64, 4, 128, 2, 16, 256
T_HEAD_DIM = T_HIDDEN // T_HEADS


def _vit():
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=32, patch_size=8, num_layers=T_LAYERS, num_heads=T_HEADS,
                             hidden_dim=T_HIDDEN, mlp_dim=T_FFN, num_classes=1000)


def _attention(form):
    """Multi-head self-attention over [B, S, H], scores computed as `form` says:
    "matmul" torch.matmul(q, k.transpose(-1, -2)), "at" q @ k.transpose(-2, -1),
    "baddbmm" torch.baddbmm over [B*heads, S, d] (GPT-2/BLOOM style), "einsum"
    torch.einsum("bhqd,bhkd->bhqk")."""
    import torch
    import torch.nn as nn

    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(T_HIDDEN, 3 * T_HIDDEN)
            self.out = nn.Linear(T_HIDDEN, T_HIDDEN)
            self.scale = 1.0 / (T_HEAD_DIM ** 0.5)

        def forward(self, x, bias=None):  # bias broadcasts to [B, heads, S, S]
            b, s, _ = x.shape
            q, k, v = self.qkv(x).split(T_HIDDEN, dim=-1)
            q, k, v = (t.view(b, s, T_HEADS, T_HEAD_DIM).transpose(1, 2) for t in (q, k, v))
            if form == "matmul":
                scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale
            elif form == "at":
                scores = (q @ k.transpose(-2, -1)) * self.scale
            elif form == "einsum":
                scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * self.scale
            elif form == "baddbmm":
                q3 = q.reshape(b * T_HEADS, s, T_HEAD_DIM)
                k3 = k.reshape(b * T_HEADS, s, T_HEAD_DIM)
                zero = torch.zeros(b * T_HEADS, s, s, dtype=q.dtype)
                scores = torch.baddbmm(zero, q3, k3.transpose(1, 2), beta=1.0, alpha=self.scale)
                scores = scores.view(b, T_HEADS, s, s)
            else:
                raise ValueError(form)
            if bias is not None:
                scores = scores + bias
            probs = torch.softmax(scores, dim=-1)
            if form == "einsum":
                ctx = torch.einsum("bhqk,bhkd->bhqd", probs, v)
            else:
                ctx = torch.matmul(probs, v)
            return self.out(ctx.transpose(1, 2).reshape(b, s, T_HIDDEN))

    return SelfAttention()


def _gpt_decoder(form="at"):
    """GPT-style pre-norm decoder: token + learned position embeddings, causal
    mask from a buffer sliced to the sequence, GELU MLP, final LayerNorm, LM head."""
    def build():
        import torch
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln1 = nn.LayerNorm(T_HIDDEN)
                self.attn = _attention(form)
                self.ln2 = nn.LayerNorm(T_HIDDEN)
                self.mlp = nn.Sequential(nn.Linear(T_HIDDEN, T_FFN), nn.GELU(), nn.Linear(T_FFN, T_HIDDEN))

            def forward(self, x, bias):
                x = x + self.attn(self.ln1(x), bias)
                return x + self.mlp(self.ln2(x))

        class Gpt(nn.Module):
            def __init__(self):
                super().__init__()
                self.wte = nn.Embedding(T_VOCAB, T_HIDDEN)
                self.wpe = nn.Embedding(T_SEQ * 4, T_HIDDEN)
                self.blocks = nn.ModuleList([Block() for _ in range(T_LAYERS)])
                self.ln_f = nn.LayerNorm(T_HIDDEN)
                self.lm_head = nn.Linear(T_HIDDEN, T_VOCAB, bias=False)
                causal = torch.tril(torch.ones(T_SEQ * 4, T_SEQ * 4, dtype=torch.bool))
                self.register_buffer("causal", causal, persistent=False)

            def forward(self, input_ids):
                s = input_ids.shape[1]
                pos = torch.arange(s, dtype=torch.int64).unsqueeze(0)
                x = self.wte(input_ids) + self.wpe(pos)
                bias = torch.zeros(s, s).masked_fill(~self.causal[:s, :s], float("-inf"))
                for blk in self.blocks:
                    x = blk(x, bias)
                return self.lm_head(self.ln_f(x))

        return Gpt()
    return build


def _bert_masked():
    """BERT-style post-norm encoder with an attention_mask input (1 keeps a
    token, 0 masks it), as Hugging Face models take it; a pooler on [CLS]."""
    import torch
    import torch.nn as nn

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = _attention("matmul")
            self.ln1 = nn.LayerNorm(T_HIDDEN, eps=1e-12)
            self.ffn = nn.Sequential(nn.Linear(T_HIDDEN, T_FFN), nn.GELU(), nn.Linear(T_FFN, T_HIDDEN))
            self.ln2 = nn.LayerNorm(T_HIDDEN, eps=1e-12)

        def forward(self, x, bias):
            x = self.ln1(x + self.attn(x, bias))
            return self.ln2(x + self.ffn(x))

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.word = nn.Embedding(T_VOCAB, T_HIDDEN)
            self.position = nn.Embedding(T_SEQ * 4, T_HIDDEN)
            self.ln = nn.LayerNorm(T_HIDDEN, eps=1e-12)
            self.layers = nn.ModuleList([Layer() for _ in range(T_LAYERS)])
            self.pooler = nn.Linear(T_HIDDEN, T_HIDDEN)
            self.register_buffer("position_ids", torch.arange(T_SEQ * 4).unsqueeze(0), persistent=False)

        def forward(self, input_ids, attention_mask):
            s = input_ids.size(1)
            x = self.ln(self.word(input_ids) + self.position(self.position_ids[:, :s]))
            bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
            for layer in self.layers:
                x = layer(x, bias)
            return x, torch.tanh(self.pooler(x[:, 0]))

    return Bert()


def _attention_block(form):
    """One pre-norm self-attention block over f32 [batch, seq, 64]."""
    def build():
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln = nn.LayerNorm(T_HIDDEN)
                self.attn = _attention(form)

            def forward(self, x):
                return x + self.attn(self.ln(x))

        return Block()
    return build


def _attention_2d():
    """Single-head attention over one unbatched sequence f32 [seq, 64], scores
    written as q @ k.T."""
    import torch
    import torch.nn as nn

    class Attention2d(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Linear(T_HIDDEN, T_HIDDEN)
            self.k = nn.Linear(T_HIDDEN, T_HIDDEN)
            self.v = nn.Linear(T_HIDDEN, T_HIDDEN)

        def forward(self, x):
            q, k, v = self.q(x), self.k(x), self.v(x)
            return torch.softmax(q @ k.T / T_HIDDEN ** 0.5, dim=-1) @ v

    return Attention2d()


def _torch_encoder(batch_first):
    def build():
        import torch.nn as nn
        layer = nn.TransformerEncoderLayer(d_model=T_HIDDEN, nhead=T_HEADS, dim_feedforward=T_FFN, dropout=0.0,
                                           batch_first=batch_first)
        return nn.TransformerEncoder(layer, num_layers=T_LAYERS, enable_nested_tensor=False)
    return build


# name -> (builder, [(input name, shape, dtype)], output names, dynamic batch, expected small, note)
MODELS = {
    "mlp": (_mlp, [("input", [1, 784], "float32")], ["output"], True, True, "784-256-128-10 ReLU MLP"),
    "bert_encoder": (_bert_encoder, [("input_ids", [1, 64], "int64")], ["last_hidden_state"], True, True,
                     "4-layer BERT-style encoder, hidden 256, 4 heads, seq 64, vocab 1000, GELU FFN 1024"),
    "squeezenet1_1": (_tv("squeezenet1_1"), [("input", [1, 3, 224, 224], "float32")], ["output"], False, True,
                      "torchvision squeezenet1_1"),
    "mobilenet_v2": (_tv("mobilenet_v2"), [("input", [1, 3, 224, 224], "float32")], ["output"], False, True,
                     "torchvision mobilenet_v2"),
    "shufflenet_v2_x1_0": (_tv("shufflenet_v2_x1_0"), [("input", [1, 3, 224, 224], "float32")], ["output"],
                           False, True, "torchvision shufflenet_v2_x1_0"),
    "resnet18": (_tv("resnet18"), [("input", [1, 3, 224, 224], "float32")], ["output"], False, False,
                 "torchvision resnet18"),
    "resnext50_32x4d": (_tv("resnext50_32x4d"), [("input", [1, 3, 224, 224], "float32")], ["output"], False,
                        False, "torchvision resnext50_32x4d"),
    "inception_v3": (_tv("inception_v3", init_weights=True, aux_logits=False),
                     [("input", [1, 3, 299, 299], "float32")], ["output"], False, False,
                     "torchvision inception_v3 (init_weights=True, aux_logits=False, 299x299)"),
    "densenet121": (_tv("densenet121"), [("input", [1, 3, 224, 224], "float32")], ["output"], True, False,
                    "torchvision densenet121, dynamic batch (BatchNorms after Concats, which no Conv folds)"),
    # Transformers (export options in EXPORT_OPTIONS below).
    "vit_tiny": (_vit, [("input", [1, 3, 32, 32], "float32")], ["output"], True, True,
                 "torchvision VisionTransformer: 32x32, patch 8, hidden 64, 2 layers, 4 heads, MLP 128, 1000 classes"),
    "vit_tiny_op13": (_vit, [("input", [1, 3, 32, 32], "float32")], ["output"], True, True,
                      "vit_tiny at opset 13 (LayerNorm as ReduceMean/Sub/Pow/Sqrt/Div)"),
    "gpt_decoder": (_gpt_decoder(), [("input_ids", [1, T_SEQ], "int64")], ["logits"], True, True,
                    "GPT-style pre-norm decoder: hidden 64, 2 layers, 4 heads, vocab 256, causal mask, q @ k^T"),
    "gpt_decoder_op13": (_gpt_decoder(), [("input_ids", [1, T_SEQ], "int64")], ["logits"], True, True,
                         "gpt_decoder at opset 13"),
    "bert_masked": (_bert_masked, [("input_ids", [1, T_SEQ], "int64"), ("attention_mask", [1, T_SEQ], "int64")],
                    ["last_hidden_state", "pooler_output"], True, True,
                    "BERT-style post-norm encoder with attention_mask: hidden 64, 2 layers, 4 heads, torch.matmul"),
    "bert_masked_op13": (_bert_masked, [("input_ids", [1, T_SEQ], "int64"),
                                        ("attention_mask", [1, T_SEQ], "int64")],
                         ["last_hidden_state", "pooler_output"], True, True, "bert_masked at opset 13"),
    "torch_encoder": (_torch_encoder(False), [("src", [T_SEQ, 2, T_HIDDEN], "float32")], ["output"], False, True,
                      "nn.TransformerEncoder (seq-first, 2 layers, d_model 64), static, exported under no_grad"),
    "torch_encoder_grad": (_torch_encoder(True), [("src", [2, T_SEQ, T_HIDDEN], "float32")], ["output"], True,
                           True, "nn.TransformerEncoder (batch_first), exported without no_grad"),
    "torch_encoder_op13": (_torch_encoder(False), [("src", [T_SEQ, 2, T_HIDDEN], "float32")], ["output"], True,
                           True, "nn.TransformerEncoder (seq-first) at opset 13, dynamic seq and batch"),
    "attn_matmul": (_attention_block("matmul"), [("x", [2, T_SEQ, T_HIDDEN], "float32")], ["y"], True, True,
                    "pre-norm attention block, scores by torch.matmul(q, k.transpose(-1, -2))"),
    "attn_baddbmm": (_attention_block("baddbmm"), [("x", [2, T_SEQ, T_HIDDEN], "float32")], ["y"], True, True,
                     "pre-norm attention block, scores by torch.baddbmm over [batch*heads, seq, d]"),
    "attn_einsum": (_attention_block("einsum"), [("x", [2, T_SEQ, T_HIDDEN], "float32")], ["y"], True, True,
                    "pre-norm attention block, scores and context by torch.einsum"),
    "attn_2d": (_attention_2d, [("x", [T_SEQ, T_HIDDEN], "float32")], ["y"], True, True,
                "single-head attention over an unbatched [seq, 64] sequence, softmax(q @ k.T / 8) @ v"),
}

# How the transformers are exported, as people export them: opset, dynamic
# axes (input and output name -> {axis: name}), whether under torch.no_grad()
# (the default for every model), and no pinning of the output dims the
# exporter left symbolic or unknown.
_BS = {0: "batch", 1: "seq"}
EXPORT_OPTIONS = {
    # Under torch.no_grad() torch 1.13 takes nn.MultiheadAttention's fast path, which it cannot
    # export (aten::_native_multi_head_attention): ViT is exported without it.
    "vit_tiny": dict(no_grad=False, dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}),
    "vit_tiny_op13": dict(opset=13, no_grad=False, dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}),
    "gpt_decoder": dict(dynamic_axes={"input_ids": _BS, "logits": _BS}),
    "gpt_decoder_op13": dict(opset=13, dynamic_axes={"input_ids": _BS, "logits": _BS}),
    "bert_masked": dict(dynamic_axes={"input_ids": _BS, "attention_mask": _BS, "last_hidden_state": _BS,
                                      "pooler_output": {0: "batch"}}),
    "bert_masked_op13": dict(opset=13, dynamic_axes={"input_ids": _BS, "attention_mask": _BS,
                                                     "last_hidden_state": _BS, "pooler_output": {0: "batch"}}),
    "torch_encoder": dict(dynamic_axes={}),
    "torch_encoder_grad": dict(no_grad=False, dynamic_axes={"src": _BS, "output": _BS}),
    "torch_encoder_op13": dict(opset=13, dynamic_axes={"src": {0: "seq", 1: "batch"},
                                                       "output": {0: "seq", 1: "batch"}}),
    "attn_matmul": dict(opset=13, dynamic_axes={"x": _BS, "y": _BS}),
    "attn_baddbmm": dict(dynamic_axes={"x": _BS, "y": _BS}),
    "attn_einsum": dict(opset=13, dynamic_axes={"x": _BS, "y": _BS}),
    "attn_2d": dict(dynamic_axes={"x": {0: "seq"}, "y": {0: "seq"}}),
}

# Opset overrides for models whose export fails at 17 (none so far).
OPSET_OVERRIDE = {}


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------

def sha256_bytes(b):
    return hashlib.sha256(b).hexdigest()


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


DTYPE_NAMES = {1: "float32", 2: "uint8", 3: "int8", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
               10: "float16", 11: "float64", 16: "bfloat16"}


def value_desc(vi):
    t = vi.type.tensor_type
    dims = []
    for d in t.shape.dim:
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return {"name": vi.name, "shape": dims, "dtype": DTYPE_NAMES.get(t.elem_type, str(t.elem_type))}


def estimate_gflops(model):
    """Multiply-adds x2 of Conv, ConvTranspose, MatMul and Gemm at batch 1 (symbolic dims = 1)."""
    import onnx
    from onnx import numpy_helper
    inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    g = inferred.graph
    shapes = {}
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        dims = []
        for d in vi.type.tensor_type.shape.dim:
            dims.append(d.dim_value if d.HasField("dim_value") else 1)
        shapes[vi.name] = dims
    for init in g.initializer:
        shapes[init.name] = list(init.dims)

    def prod(xs):
        p = 1
        for x in xs:
            p *= x
        return p

    flops = 0
    for n in g.node:
        try:
            if n.op_type in ("Conv", "ConvTranspose"):
                w = shapes[n.input[1]]
                out = shapes[n.output[0]] if n.op_type == "Conv" else shapes[n.input[0]]
                flops += 2 * prod(out) * prod(w[1:])
            elif n.op_type == "MatMul":
                a = shapes[n.input[0]]
                flops += 2 * prod(shapes[n.output[0]]) * a[-1]
            elif n.op_type == "Gemm":
                a = shapes[n.input[0]]
                trans_a = any(at.name == "transA" and at.i for at in n.attribute)
                k = a[0] if trans_a else a[1]
                flops += 2 * prod(shapes[n.output[0]]) * k
        except (KeyError, IndexError):
            pass
    return flops / 1e9


def describe(path, name, opset, note):
    import onnx
    model = onnx.load(path)
    g = model.graph
    inits = {i.name for i in g.initializer}
    params = 0
    for i in g.initializer:
        p = 1
        for d in i.dims:
            p *= d
        params += p
    ops = {}
    for n in g.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    size = os.path.getsize(path)
    gflops = estimate_gflops(model)
    small = size < SMALL_MAX_BYTES and gflops < SMALL_MAX_GFLOPS
    return {
        "name": name,
        "file": os.path.basename(path),
        "bytes": size,
        "sha256": sha256_file(path),
        "opset": opset,
        "ir_version": model.ir_version,
        "inputs": [value_desc(v) for v in g.input if v.name not in inits],
        "outputs": [value_desc(v) for v in g.output],
        "params": params,
        "gflops": round(gflops, 4),
        "size_class": "small" if small else "large",
        "nodes": len(g.node),
        "ops": dict(sorted(ops.items())),
        "note": note,
    }


def calibrate_batchnorm(model, inputs):
    """Sets BatchNorm running statistics from one batch of random inputs.

    With random weights and the default running stats (mean 0, var 1) deep CNNs
    blow up or vanish (inception_v3's logits reach 1e12, mobilenet_v2's 1e-9), which
    makes numeric comparisons meaningless. One forward pass in train mode with
    momentum=None stores the batch statistics, so eval-mode activations are O(1).
    """
    import torch
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative average: after one batch, the batch statistics
    batch = []
    for _, shape, dtype in inputs:
        shape = [CALIBRATION_BATCH] + list(shape[1:])
        batch.append(torch.rand(shape, dtype=getattr(torch, dtype)) * 2 - 1)
    model.train()
    with torch.no_grad():
        model(*batch)
    model.eval()


def export_one(name, path):
    import torch
    import onnx

    builder, inputs, outputs, dynamic_batch, _, _ = MODELS[name]
    options = EXPORT_OPTIONS.get(name)
    opset = (options or {}).get("opset", OPSET_OVERRIDE.get(name, OPSET))
    torch.manual_seed(0)
    model = builder()
    calibrate_batchnorm(model, inputs)
    model.eval()
    args = []
    for _, shape, dtype in inputs:
        if dtype == "int64":
            args.append(torch.randint(0, 100, shape, dtype=torch.int64))
        else:
            args.append(torch.rand(shape, dtype=getattr(torch, dtype)))
    dynamic_axes = None
    if options is not None:
        dynamic_axes = options["dynamic_axes"] or None
    elif dynamic_batch:
        dynamic_axes = {n: {0: "batch"} for n, _, _ in inputs}
        dynamic_axes.update({n: {0: "batch"} for n in outputs})
    buf = io.BytesIO()
    with torch.no_grad():
        ref = model(*args)
        ref = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    with torch.no_grad() if (options or {}).get("no_grad", True) else contextlib.nullcontext():
        torch.onnx.export(model, tuple(args), buf, export_params=True, opset_version=opset,
                          do_constant_folding=True, input_names=[n for n, _, _ in inputs],
                          output_names=outputs, dynamic_axes=dynamic_axes,
                          training=torch.onnx.TrainingMode.EVAL)
    data = buf.getvalue()
    m = onnx.load_from_string(data)
    if options is not None:  # as exported: the issue is what Refinery makes of the exporter's own types
        onnx.checker.check_model(m, full_check=True)
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return opset
    # The exporter leaves some output dims symbolic with generated names (e.g. the
    # sequence dim after a Reshape); pin every dim that is not a dynamic axis to
    # the traced value.
    patched = False
    for out, t in zip(m.graph.output, ref):
        for i, d in enumerate(out.type.tensor_type.shape.dim):
            if dynamic_batch and i == 0:
                continue
            if not d.HasField("dim_value") or d.dim_value != t.shape[i]:
                d.dim_value = int(t.shape[i])  # clears dim_param (oneof)
                patched = True
    if patched:
        data = m.SerializeToString()
    onnx.checker.check_model(m, full_check=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return opset


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="export only these models")
    ap.add_argument("--small", action="store_true", help="export only the small models")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    ap.add_argument("--force", action="store_true", help="re-export even when up to date")
    ap.add_argument("--stamp", metavar="FILE", help="touch FILE on success (for build systems)")
    a = ap.parse_args(argv)

    if a.list:
        for name, spec in MODELS.items():
            print(f"{name:20s} {'small' if spec[4] else 'large':6s} {spec[5]}")
        return 0
    if not a.outdir:
        ap.error("OUTDIR is required")

    names = list(MODELS)
    if a.only:
        bad = [n for n in a.only if n not in MODELS]
        if bad:
            ap.error(f"unknown model(s): {', '.join(bad)}; known: {', '.join(MODELS)}")
        names = [n for n in names if n in a.only]
    if a.small:
        names = [n for n in names if MODELS[n][4]]

    os.makedirs(a.outdir, exist_ok=True)
    stamps = os.path.join(a.outdir, ".stamps")
    os.makedirs(stamps, exist_ok=True)
    with open(SCRIPT, "rb") as f:
        script_hash = sha256_bytes(f.read())

    import torch
    torch.set_num_threads(1)
    key = {"script_sha256": script_hash, "torch": torch.__version__}

    failed = []
    for name in names:
        path = os.path.join(a.outdir, name + ".onnx")
        stamp_path = os.path.join(stamps, name + ".json")
        if not a.force and os.path.exists(path) and os.path.exists(stamp_path):
            try:
                with open(stamp_path) as f:
                    st = json.load(f)
                if (all(st.get(k) == v for k, v in key.items())
                        and st["entry"]["bytes"] == os.path.getsize(path)
                        and st["entry"]["sha256"] == sha256_file(path)):
                    print(f"zoo: {name}: up to date")
                    continue
            except (OSError, ValueError, KeyError):
                pass
        t0 = time.time()
        try:
            opset = export_one(name, path)
        except Exception as e:  # report and go on with the others
            print(f"zoo: {name}: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
            failed.append(name)
            continue
        secs = time.time() - t0
        entry = describe(path, name, opset, MODELS[name][5])
        if (entry["size_class"] == "small") != MODELS[name][4]:
            print(f"zoo: {name}: warning: measured size class {entry['size_class']} differs from the "
                  f"table ({entry['bytes']} bytes, {entry['gflops']} GFLOP)", file=sys.stderr)
        with open(stamp_path + ".tmp", "w") as f:
            json.dump(dict(key, entry=entry, export_seconds=round(secs, 2)), f, indent=1, sort_keys=True)
        os.replace(stamp_path + ".tmp", stamp_path)
        print(f"zoo: {name}: exported in {secs:.1f}s, {entry['bytes'] / 1e6:.1f} MB, "
              f"{entry['gflops']:.3f} GFLOP, {entry['size_class']}, opset {opset}")

    # zoo.json: every model whose file and stamp are present in OUTDIR.
    entries = []
    for name in MODELS:
        path = os.path.join(a.outdir, name + ".onnx")
        stamp_path = os.path.join(stamps, name + ".json")
        if os.path.exists(path) and os.path.exists(stamp_path):
            try:
                with open(stamp_path) as f:
                    entries.append(json.load(f)["entry"])
            except (OSError, ValueError, KeyError):
                pass
    zoo = {"generator": "bench/zoo/export_zoo.py", "torch": torch.__version__, "models": entries}
    text = json.dumps(zoo, indent=2, sort_keys=False) + "\n"
    zoo_path = os.path.join(a.outdir, "zoo.json")
    old = None
    if os.path.exists(zoo_path):
        with open(zoo_path) as f:
            old = f.read()
    if old != text:
        with open(zoo_path + ".tmp", "w") as f:
            f.write(text)
        os.replace(zoo_path + ".tmp", zoo_path)
    else:
        os.utime(zoo_path)  # keep build systems happy: the output is newer than its inputs
    if a.stamp and not failed:
        with open(a.stamp, "w") as f:
            f.write(" ".join(names) + "\n")
    if failed:
        print(f"zoo: failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

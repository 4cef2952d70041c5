#!/usr/bin/python3
"""Export the transformers of the "real exports" zoo (issue #13) to ONNX.

    /usr/bin/python3 bench/zoo/export_real_transformers.py OUTDIR [--only NAME ...] [--list] [--stamp FILE]

Transformer encoders and decoders written in the idioms different exporters
and model authors use, so that a rewrite that reaches ONNX Runtime's fused
kernels (com.microsoft Attention) is judged on more than one pattern:
attention with one packed Q/K/V projection or three separate ones, the scale
on the scores or on Q, multiplied or divided; masks computed in the graph
(a causal bias from a buffer, a padding bias from an attention_mask input);
GELU as erf and as tanh; LayerNorm decomposed (opset 13) and whole (opset 17).
Random weights from torch.manual_seed(0), eval mode, dynamic batch (and
sequence where the model allows), torch.onnx.export with
do_constant_folding=True, each file checked with onnx.checker (full_check).
Hidden 128, 4 heads, FFN 512, 2 layers, sequence 64: larger than the clean
zoo's transformers (bench/zoo/export_zoo.py), as models people serve are.

OUTDIR/<name>.onnx, and OUTDIR/zoo_real_transformers.json listing them
(the same entry format as zoo.json). Deterministic: two runs give
byte-identical files.
"""

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_zoo as zoo  # noqa: E402  (describe, sha256 helpers)

HIDDEN, HEADS, FFN, LAYERS, SEQ, VOCAB = 128, 4, 512, 2, 64, 512
HEAD = HIDDEN // HEADS


def _attention(packed, scale_on, mask):
    """Self-attention over [B, S, H]. packed: one Linear(H, 3H) split (GPT-2's
    c_attn, ViT) or three Linears (BERT). scale_on: "scores_mul" (scores * s),
    "scores_div" (scores / sqrt(d), Hugging Face BERT), "q" (q * s before the
    product). mask: None, or an additive bias broadcast to [B, heads, S, S]."""
    import torch
    import torch.nn as nn

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            if packed:
                self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
            else:
                self.q, self.k, self.v = (nn.Linear(HIDDEN, HIDDEN) for _ in range(3))
            self.out = nn.Linear(HIDDEN, HIDDEN)

        def forward(self, x, bias=None):
            b, s, _ = x.shape
            if packed:
                q, k, v = self.qkv(x).split(HIDDEN, dim=-1)
            else:
                q, k, v = self.q(x), self.k(x), self.v(x)
            q, k, v = (t.view(b, s, HEADS, HEAD).transpose(1, 2) for t in (q, k, v))
            if scale_on == "q":
                scores = torch.matmul(q * HEAD ** -0.5, k.transpose(-1, -2))
            elif scale_on == "scores_div":
                scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HEAD)
            else:
                scores = torch.matmul(q, k.transpose(-1, -2)) * HEAD ** -0.5
            if bias is not None:
                scores = scores + bias
            ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
            return self.out(ctx.transpose(1, 2).reshape(b, s, HIDDEN))

    return Attention()


def _encoder(packed, scale_on, gelu, post_norm, padding_mask):
    """An encoder over embeddings of input_ids (BERT/ViT-like), pre- or post-norm,
    with an attention_mask input turned into an additive bias in the graph."""
    import torch
    import torch.nn as nn

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = _attention(packed, scale_on, padding_mask)
            self.ln1, self.ln2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
            self.ffn = nn.Sequential(nn.Linear(HIDDEN, FFN), nn.GELU(approximate=gelu), nn.Linear(FFN, HIDDEN))

        def forward(self, x, bias):
            if post_norm:
                x = self.ln1(x + self.attn(x, bias))
                return self.ln2(x + self.ffn(x))
            x = x + self.attn(self.ln1(x), bias)
            return x + self.ffn(self.ln2(x))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(VOCAB, HIDDEN)
            self.pos = nn.Parameter(torch.randn(1, SEQ, HIDDEN) * 0.02)
            self.layers = nn.ModuleList([Layer() for _ in range(LAYERS)])
            self.ln = nn.LayerNorm(HIDDEN)

        def forward(self, input_ids, attention_mask=None):
            x = self.emb(input_ids) + self.pos[:, : input_ids.shape[1]]
            bias = None
            if attention_mask is not None:  # [B, S] of 1 (keep) / 0 (pad) -> [B, 1, S, S]
                keep = attention_mask[:, None, None, :].to(x.dtype).expand(-1, 1, input_ids.shape[1], -1)
                bias = (1.0 - keep) * -10000.0
            for layer in self.layers:
                x = layer(x, bias)
            return self.ln(x)

    return Encoder()


def _decoder(scale_on, gelu):
    """A GPT-2-like pre-norm decoder: packed c_attn, causal bias sliced from a
    buffer and computed in the graph, LM head."""
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
            self.attn = _attention(True, scale_on, True)
            self.mlp = nn.Sequential(nn.Linear(HIDDEN, FFN), nn.GELU(approximate=gelu), nn.Linear(FFN, HIDDEN))

        def forward(self, x, bias):
            x = x + self.attn(self.ln1(x), bias)
            return x + self.mlp(self.ln2(x))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(VOCAB, HIDDEN)
            self.wpe = nn.Embedding(SEQ, HIDDEN)
            self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.ln_f = nn.LayerNorm(HIDDEN)
            self.head = nn.Linear(HIDDEN, VOCAB, bias=False)
            self.register_buffer("causal", torch.tril(torch.ones(SEQ, SEQ, dtype=torch.bool)), persistent=False)

        def forward(self, input_ids):
            s = input_ids.shape[1]
            x = self.wte(input_ids) + self.wpe(torch.arange(s).unsqueeze(0))
            bias = torch.zeros(s, s).masked_fill(~self.causal[:s, :s], float("-inf"))
            for blk in self.blocks:
                x = blk(x, bias)
            return self.head(self.ln_f(x))

    return Decoder()


_IDS = [("input_ids", [1, SEQ], "int64")]
_IDS_MASK = _IDS + [("attention_mask", [1, SEQ], "int64")]
# Dynamic batch. A dynamic sequence as well leaves the sequence dim unknown
# inside these graphs (the position embedding's arange(s) has no name for
# it), and the attention rules need to see that each head reshape keeps the
# sequence in place (docs/onnx.md, "Contrib ops"): not yet.
_B = {0: "batch"}

# name -> (builder, inputs, outputs, opset, dynamic axes, note)
MODELS = {
    "enc_packed_op17": (lambda: _encoder(True, "scores_mul", "none", False, False), _IDS, ["hidden"], 17,
                        {"input_ids": _B, "hidden": _B},
                        "ViT-like pre-norm encoder: packed QKV, scores * d^-0.5, GELU erf, LayerNorm op (opset 17)"),
    "enc_packed_op13": (lambda: _encoder(True, "scores_mul", "none", False, False), _IDS, ["hidden"], 13,
                        {"input_ids": _B, "hidden": _B},
                        "the same at opset 13: LayerNorm as ReduceMean/Sub/Pow/Sqrt/Div"),
    "enc_mask_op17": (lambda: _encoder(True, "scores_mul", "none", False, True), _IDS_MASK, ["hidden"], 17,
                      {"input_ids": _B, "attention_mask": _B, "hidden": _B},
                      "packed encoder with an attention_mask input turned into a [B, 1, S, S] bias in the graph"),
    "bert_hf_op13": (lambda: _encoder(False, "scores_div", "none", True, True), _IDS_MASK, ["hidden"], 13,
                     {"input_ids": _B, "attention_mask": _B, "hidden": _B},
                     "Hugging Face BERT idiom: separate Q/K/V, scores / sqrt(d), padding mask, post-norm, opset 13"),
    "gpt_causal_op13": (lambda: _decoder("scores_mul", "tanh"), _IDS, ["logits"], 13,
                        {"input_ids": _B, "logits": _B},
                        "GPT-2 idiom: packed c_attn, causal bias from a buffer, GELU tanh, opset 13"),
    "gpt_scaled_q_op17": (lambda: _decoder("q", "tanh"), _IDS, ["logits"], 17, {"input_ids": _B, "logits": _B},
                          "GPT decoder with the scale on q before Q K^T, GELU tanh, opset 17"),
}


def export(name, path):
    import io
    import onnx
    import torch
    builder, inputs, outputs, opset, dynamic_axes, _ = MODELS[name]
    torch.manual_seed(0)
    model = builder().eval()
    # token ids; an attention_mask of ones (tracing does not depend on its values)
    args = tuple(torch.ones(shape, dtype=torch.int64) if n == "attention_mask"
                 else torch.randint(0, VOCAB, shape, dtype=torch.int64) for n, shape, _ in inputs)
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, args, buf, export_params=True, opset_version=opset, do_constant_folding=True,
                          input_names=[n for n, _, _ in inputs], output_names=outputs, dynamic_axes=dynamic_axes,
                          training=torch.onnx.TrainingMode.EVAL)
    m = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(m, full_check=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(buf.getvalue())
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--only", nargs="+", metavar="NAME")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--stamp", metavar="FILE", help="touch FILE on success (for build systems)")
    a = ap.parse_args(argv)
    if a.list:
        for name, spec in MODELS.items():
            print(f"{name:20s} {spec[5]}")
        return 0
    if not a.outdir:
        ap.error("OUTDIR is required")
    names = [n for n in MODELS if not a.only or n in a.only]
    import torch
    torch.set_num_threads(1)
    os.makedirs(a.outdir, exist_ok=True)
    entries = []
    for name in names:
        path = os.path.join(a.outdir, name + ".onnx")
        export(name, path)
        entry = zoo.describe(path, name, MODELS[name][3], MODELS[name][5])
        entries.append(entry)
        print(f"zoo_real: {name}: {entry['bytes'] / 1e6:.1f} MB, {entry['gflops']:.3f} GFLOP, opset {MODELS[name][3]}")
    with open(os.path.join(a.outdir, "zoo_real_transformers.json"), "w") as f:
        json.dump({"models": entries}, f, indent=1)
    if a.stamp:
        with open(a.stamp, "w") as f:
            f.write("ok\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

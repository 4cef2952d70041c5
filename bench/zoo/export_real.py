#!/usr/bin/python3
"""Export the "real exports" zoo: models as users have them (issue #13).

    /usr/bin/python3 bench/zoo/export_real.py OUTDIR [--only NAME ...] [--list] [--force]

The clean zoo (export_zoo.py) holds networks straight from their definitions.
Real exports carry work that is provably useless: CNNs after structured
pruning (whole output channels zeroed, exported dense), transformers with
LoRA adapters left unmerged, tied or duplicated weights, outputs of ops that
nothing reads, shape arithmetic on symbolic dims. Random but realistic
weights (torch.manual_seed(0); BatchNorm statistics calibrated on a random
batch as in export_zoo.py), exported with torch.onnx.export the way people
do (opset 17, eval mode, do_constant_folding=True: the exporter folds each
BatchNorm into its Conv, so a pruned channel becomes a zero filter with a
non-zero bias, a constant channel; the *_bn models keep BatchNorm instead).

Each file is checked with onnx.checker.check_model(full_check=True).
OUTDIR/zoo.json lists the models (the same entries as export_zoo.py's).
Other scripts may add models to OUTDIR (the transformer idioms): zoo.json
lists this script's models only, as zoo_real.json's "models"; every *.onnx in
OUTDIR is benchmarked by bench/ort/run_zoo.sh.
Reruns skip a model whose stamp records the same script hash, torch version
and file hash.
"""

import argparse
import hashlib
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export_zoo as zoo  # noqa: E402  (describe, calibrate_batchnorm, sha256_*)

SCRIPT = os.path.abspath(__file__)
OPSET = 17


# --------------------------------------------------------------------------
# Pruned CNNs
# --------------------------------------------------------------------------

def _vgg():
    import torch.nn as nn
    layers, c = [], 3
    for width, n in ((32, 2), (64, 2), (128, 2), (256, 2)):
        for _ in range(n):
            layers += [nn.Conv2d(c, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(inplace=True)]
            c = width
        layers.append(nn.MaxPool2d(2))
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, 100))


def _resnet18():
    import torchvision.models as tvm
    return tvm.resnet18(weights=None, num_classes=100)


def _mobilenet_v2():
    import torchvision.models as tvm
    return tvm.mobilenet_v2(weights=None, num_classes=100)


def prune_channels(model, amount):
    """Structured L2 pruning of every Conv2d's output channels (dim 0), made
    permanent (prune.remove): the pruned filters are exported as zeros. The
    classifier is left dense, as people do."""
    import torch.nn as nn
    import torch.nn.utils.prune as prune
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            prune.ln_structured(m, name="weight", amount=amount, n=2, dim=0)
            prune.remove(m, "weight")


# --------------------------------------------------------------------------
# LoRA transformers
# --------------------------------------------------------------------------

L_HIDDEN, L_HEADS, L_FFN, L_LAYERS, L_SEQ, L_RANK = 128, 4, 512, 2, 32, 8


def _lora_encoder(targets):
    """A pre-norm encoder whose Linear layers in `targets` carry an unmerged
    LoRA adapter, peft's form: base(x) + lora_B(lora_A(dropout(x))) * scaling."""
    import torch
    import torch.nn as nn

    class LoraLinear(nn.Module):
        def __init__(self, fin, fout, r=L_RANK, alpha=16):
            super().__init__()
            self.base = nn.Linear(fin, fout)
            self.lora_A = nn.Linear(fin, r, bias=False)
            self.lora_B = nn.Linear(r, fout, bias=False)
            self.dropout = nn.Dropout(0.1)
            self.scaling = alpha / r
            nn.init.normal_(self.lora_B.weight, std=0.02)  # trained: no longer the zero init

        def forward(self, x):
            return self.base(x) + self.lora_B(self.lora_A(self.dropout(x))) * self.scaling

    def linear(name, fin, fout):
        return LoraLinear(fin, fout) if name in targets else nn.Linear(fin, fout)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(L_HIDDEN), nn.LayerNorm(L_HIDDEN)
            self.q, self.k = linear("q", L_HIDDEN, L_HIDDEN), linear("k", L_HIDDEN, L_HIDDEN)
            self.v, self.o = linear("v", L_HIDDEN, L_HIDDEN), linear("o", L_HIDDEN, L_HIDDEN)
            self.fc1, self.fc2 = linear("fc1", L_HIDDEN, L_FFN), linear("fc2", L_FFN, L_HIDDEN)

        def forward(self, x):
            b, s, _ = x.shape
            h = self.ln1(x)
            d = L_HIDDEN // L_HEADS
            q = self.q(h).view(b, s, L_HEADS, d).transpose(1, 2)
            k = self.k(h).view(b, s, L_HEADS, d).transpose(1, 2)
            v = self.v(h).view(b, s, L_HEADS, d).transpose(1, 2)
            a = torch.softmax(q @ k.transpose(-2, -1) / d ** 0.5, dim=-1) @ v
            x = x + self.o(a.transpose(1, 2).reshape(b, s, L_HIDDEN))
            return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))

    return nn.Sequential(*[Layer() for _ in range(L_LAYERS)], nn.LayerNorm(L_HIDDEN))


# --------------------------------------------------------------------------
# Tied weights, dead outputs, shape arithmetic
# --------------------------------------------------------------------------

def _tied_lm():
    """A small language model as exported from a user's module: the output
    projection tied to the embedding (one weight read by Gather and by
    MatMul), one projection applied twice (duplicated work), a split whose
    second half nothing reads, and the shapes computed from symbolic dims
    (x.size(0), x.size(1) * 2, view(..., -1))."""
    import torch
    import torch.nn as nn

    class TiedLM(nn.Module):
        def __init__(self, vocab=512, hidden=128):
            super().__init__()
            self.emb = nn.Embedding(vocab, hidden)
            self.proj = nn.Linear(hidden, hidden)
            self.gate = nn.Linear(hidden, 2 * hidden)
            self.ln = nn.LayerNorm(hidden)

        def forward(self, ids):
            x = self.emb(ids)
            b, s = ids.size(0), ids.size(1)
            y = torch.tanh(self.proj(x)) + torch.tanh(self.proj(x))  # the same work twice
            g, _unused = self.gate(y).split(y.size(-1), dim=-1)     # half of it never read
            y = y * torch.sigmoid(g)
            y = y.view(b, s * 2, -1).view(b, s, -1)                  # shape arithmetic on symbolic dims
            return self.ln(y) @ self.emb.weight.t()                    # tied output projection

    return TiedLM()


# name -> (builder, pruning amount or None, [(input, shape, dtype)], outputs, dynamic axes, keep BN, note)
_BS = {0: "batch", 1: "seq"}
MODELS = {
    "vgg_p50": (_vgg, 0.5, [("input", [1, 3, 96, 96], "float32")], ["output"], None, False,
                "VGG-style 8-conv CNN (32..256 wide, BN folded by the exporter), 50% of every conv's output channels "
                "pruned (ln_structured n=2, dim 0)"),
    "vgg_p40": (_vgg, 0.4, [("input", [1, 3, 96, 96], "float32")], ["output"], None, False,
                "vgg_p50 at 40% channel sparsity"),
    "vgg_p50_bn": (_vgg, 0.5, [("input", [1, 3, 96, 96], "float32")], ["output"], None, True,
                   "vgg_p50 exported with its BatchNorms kept (do_constant_folding=False, TrainingMode.PRESERVE)"),
    "resnet18_p50": (_resnet18, 0.5, [("input", [1, 3, 128, 128], "float32")], ["output"], None, False,
                     "torchvision resnet18 (100 classes, 128x128), 50% of every conv's output channels pruned"),
    "resnet18_p40": (_resnet18, 0.4, [("input", [1, 3, 128, 128], "float32")], ["output"], None, False,
                     "resnet18_p50 at 40% channel sparsity"),
    "mobilenet_v2_p50": (_mobilenet_v2, 0.5, [("input", [1, 3, 128, 128], "float32")], ["output"], None, False,
                         "torchvision mobilenet_v2 (100 classes, 128x128), 50% of every conv's output channels "
                         "pruned (depthwise included)"),
    "lora_encoder": (lambda: _lora_encoder({"q", "v"}), None, [("x", [2, L_SEQ, L_HIDDEN], "float32")], ["y"],
                     {"x": _BS, "y": _BS}, False,
                     "2-layer pre-norm encoder (hidden 128, FFN 512), unmerged LoRA (rank 8) on q and v, peft's form"),
    "lora_encoder_mlp": (lambda: _lora_encoder({"q", "k", "v", "o", "fc1", "fc2"}), None,
                         [("x", [2, L_SEQ, L_HIDDEN], "float32")], ["y"], {"x": _BS, "y": _BS}, False,
                         "lora_encoder with LoRA on every attention and MLP projection"),
    "tied_lm": (_tied_lm, None, [("ids", [2, 16], "int64")], ["logits"], {"ids": _BS, "logits": _BS}, False,
                "tied embedding / LM head, a projection computed twice, an unread split half, "
                "reshapes from symbolic dims"),
}


def export_one(name, path):
    import io
    import torch
    import onnx

    builder, amount, inputs, outputs, dynamic_axes, keep_bn, _ = MODELS[name]
    torch.manual_seed(0)
    model = builder()
    zoo.calibrate_batchnorm(model, inputs)
    if amount is not None:
        prune_channels(model, amount)
    model.eval()
    args = []
    for _, shape, dtype in inputs:
        if dtype == "int64":
            args.append(torch.randint(0, 100, shape, dtype=torch.int64))
        else:
            args.append(torch.rand(shape, dtype=getattr(torch, dtype)))
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, tuple(args), buf, export_params=True, opset_version=OPSET,
                          do_constant_folding=not keep_bn, input_names=[n for n, _, _ in inputs],
                          output_names=outputs, dynamic_axes=dynamic_axes,
                          training=torch.onnx.TrainingMode.PRESERVE if keep_bn else torch.onnx.TrainingMode.EVAL)
    data = buf.getvalue()
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)
    return OPSET


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="export only these models")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    ap.add_argument("--force", action="store_true", help="re-export even when up to date")
    ap.add_argument("--stamp", metavar="FILE", help="touch FILE on success (for build systems)")
    a = ap.parse_args(argv)
    if a.list:
        for name, spec in MODELS.items():
            print(f"{name:20s} {spec[6]}")
        return 0
    if not a.outdir:
        ap.error("OUTDIR is required")
    names = list(MODELS)
    if a.only:
        bad = [n for n in a.only if n not in MODELS]
        if bad:
            ap.error(f"unknown model(s): {', '.join(bad)}; known: {', '.join(MODELS)}")
        names = [n for n in names if n in a.only]

    os.makedirs(os.path.join(a.outdir, ".stamps"), exist_ok=True)
    with open(SCRIPT, "rb") as f:
        script_hash = hashlib.sha256(f.read()).hexdigest()
    import torch
    torch.set_num_threads(1)
    key = {"script_sha256": script_hash, "torch": torch.__version__}

    failed = []
    for name in names:
        path = os.path.join(a.outdir, name + ".onnx")
        stamp_path = os.path.join(a.outdir, ".stamps", name + ".json")
        if not a.force and os.path.exists(path) and os.path.exists(stamp_path):
            try:
                with open(stamp_path) as f:
                    st = json.load(f)
                if all(st.get(k) == v for k, v in key.items()) and st["entry"]["sha256"] == zoo.sha256_file(path):
                    print(f"zoo_real: {name}: up to date")
                    continue
            except (OSError, ValueError, KeyError):
                pass
        t0 = time.time()
        try:
            opset = export_one(name, path)
        except Exception as e:  # report and go on with the others
            print(f"zoo_real: {name}: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
            failed.append(name)
            continue
        entry = zoo.describe(path, name, opset, MODELS[name][6])
        with open(stamp_path + ".tmp", "w") as f:
            json.dump(dict(key, entry=entry), f, indent=1, sort_keys=True)
        os.replace(stamp_path + ".tmp", stamp_path)
        print(f"zoo_real: {name}: exported in {time.time() - t0:.1f}s, {entry['bytes'] / 1e6:.1f} MB, "
              f"{entry['gflops']:.3f} GFLOP")

    entries = []
    for name in MODELS:
        stamp_path = os.path.join(a.outdir, ".stamps", name + ".json")
        if os.path.exists(os.path.join(a.outdir, name + ".onnx")) and os.path.exists(stamp_path):
            with open(stamp_path) as f:
                entries.append(json.load(f)["entry"])
    text = json.dumps({"generator": "bench/zoo/export_real.py", "torch": torch.__version__, "models": entries},
                      indent=2) + "\n"
    with open(os.path.join(a.outdir, "zoo_real.json.tmp"), "w") as f:
        f.write(text)
    os.replace(os.path.join(a.outdir, "zoo_real.json.tmp"), os.path.join(a.outdir, "zoo_real.json"))
    if a.stamp and not failed:
        with open(a.stamp, "w") as f:
            f.write(" ".join(names) + "\n")
    if failed:
        print(f"zoo_real: failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

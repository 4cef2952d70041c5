#!/usr/bin/python3
"""Figures of the neuromorphic target (docs/measurements.md, "Neuromorphic
targets"): one `refinery batch --target TARGET --jobs 1` over every NIR
file of ../shared/nir and the networks this script makes, each row the chip
mapping before and after (cores, synapses, synaptic events per step, energy
per inference), the weights that fit the chip's format, and the job's wall
time (process start included). The batch's pages are in OUT_DIR/batch.

The made networks (written to OUT_DIR):
  - mlp_dense.nir / mlp_pruned.nir: a torch nn.Sequential of Linear layers
    (784-256-128-10, LIF after each), and the same after
    torch.nn.utils.prune.l1_unstructured (amount 0.8) with prune.remove, as
    people prune; written in NIR's HDF5 layout (the NIR package is not
    installed here) like tools/make_nir_examples.py.
  - mlp_neurons_pruned.nir: the dense MLP with whole neurons pruned, as
    structured pruning does: prune.ln_structured (L2, dim 0, 50%) on the
    first two layers' weights and prune.custom_from_mask on the same rows
    of their biases, made permanent; 128 of 256 and 64 of 128 neurons get
    no input (the dead-neuron rules' case). The output layer is not pruned.
  - mlp_merge.nir: Linear(64, 256) then Linear(256, 32) with no neuron in
    between (a projection people fold at export), then LIF: the
    affine-affine rule's case.
  - cnn_sumpool.nir: a sinabs-style CNN, torch Conv2d(2, 8, 3, padding 1,
    no bias) -> IF -> SumPool 2x2 -> Conv2d(8, 16, 3, padding 1) -> IF ->
    SumPool 2x2 -> Flatten -> Linear(256, 10) -> IF, on 2 x 16 x 16 inputs
    (sum-pool-as-depthwise-conv's case).
  - scale_delay.nir: per-input gains (a Scale) and a synaptic delay of 2 ms
    on every input, then Linear(256, 16) -> LIF: delay-scale-rev moves the
    delay in front of the Scale and affine-absorb-scale folds the gains
    into the weights.
  - mlp_quant.nir: Linear(128, 32) -> LIF with its weights quantised to
    integers in [-100, 100] times 3/8 (a scale that is not a power of two):
    10 bits with the chip's shared exponent, 8 once optimize moves the 3
    into the LIF's r (exact weight rescaling, docs/spiking.md).

    bench/neuromorphic/measure.py REFINERY_EXE OUT_DIR [TARGET]
"""
import json
import os
import subprocess
import sys
import time

import h5py
import numpy as np
import torch
import torch.nn.utils.prune as prune

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "nir"))
STR = h5py.string_dtype()


def write_nir(path, nodes, edges):
    with h5py.File(path, "w") as f:
        f.create_dataset("version", data="1.0.1", dtype=STR)
        g = f.create_group("node")
        g.create_dataset("type", data="NIRGraph", dtype=STR)
        ng = g.create_group("nodes")
        for name, node in nodes.items():
            n = ng.create_group(name)
            for k, v in node.items():
                if isinstance(v, str):
                    n.create_dataset(k, data=v, dtype=STR)
                else:
                    n.create_dataset(k, data=np.asarray(v))
        g.create_dataset("edges", data=np.array(edges, dtype=object).reshape(-1, 2), dtype=STR)


def lif(n):
    return {"type": "LIF", "tau": np.full(n, 0.005), "r": np.full(n, 5.0), "v_leak": np.zeros(n),
            "v_threshold": np.ones(n), "v_reset": np.zeros(n)}


def mlp_nodes(layers):
    """NIR nodes for torch Linear layers each followed by a LIF."""
    nodes = {"input": {"type": "Input", "shape": np.array([layers[0].in_features])}}
    edges, prev = [], "input"
    for i, lin in enumerate(layers):
        w = lin.weight.detach().numpy().astype(np.float32)
        b = lin.bias.detach().numpy().astype(np.float32)
        nodes[f"fc{i}"] = {"type": "Affine", "weight": w, "bias": b}
        nodes[f"lif{i}"] = lif(w.shape[0])
        edges += [(prev, f"fc{i}"), (f"fc{i}", f"lif{i}")]
        prev = f"lif{i}"
    nodes["output"] = {"type": "Output", "shape": np.array([layers[-1].out_features])}
    edges.append((prev, "output"))
    return nodes, edges


def make(out):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.Linear(256, 128), torch.nn.Linear(128, 10))
    with torch.no_grad():
        for lin in net:
            lin.weight.mul_(4.0)
    write_nir(os.path.join(out, "mlp_dense.nir"), *mlp_nodes(list(net)))
    for lin in net:
        prune.l1_unstructured(lin, name="weight", amount=0.8)
        prune.remove(lin, "weight")
    write_nir(os.path.join(out, "mlp_pruned.nir"), *mlp_nodes(list(net)))
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.Linear(256, 128), torch.nn.Linear(128, 10))
    with torch.no_grad():
        for lin in net:
            lin.weight.mul_(4.0)
    for lin in list(net)[:2]:
        prune.ln_structured(lin, name="weight", amount=0.5, n=2, dim=0)
        prune.custom_from_mask(lin, name="bias", mask=lin.weight_mask.any(dim=1))
        prune.remove(lin, "weight")
        prune.remove(lin, "bias")
    write_nir(os.path.join(out, "mlp_neurons_pruned.nir"), *mlp_nodes(list(net)))
    a, b = torch.nn.Linear(64, 256), torch.nn.Linear(256, 32)
    nodes = {"input": {"type": "Input", "shape": np.array([64])},
             "proj": {"type": "Affine", "weight": a.weight.detach().numpy() * 4, "bias": a.bias.detach().numpy()},
             "fc": {"type": "Affine", "weight": b.weight.detach().numpy() * 4, "bias": b.bias.detach().numpy()},
             "lif": lif(32), "output": {"type": "Output", "shape": np.array([32])}}
    write_nir(os.path.join(out, "mlp_merge.nir"), nodes,
              [("input", "proj"), ("proj", "fc"), ("fc", "lif"), ("lif", "output")])
    conv1, conv2 = torch.nn.Conv2d(2, 8, 3, padding=1, bias=False), torch.nn.Conv2d(8, 16, 3, padding=1, bias=False)
    fc = torch.nn.Linear(256, 10, bias=False)

    def conv(c, size):
        return {"type": "Conv2d", "weight": c.weight.detach().numpy() * 8, "bias": np.zeros(c.out_channels, np.float32),
                "stride": np.array([1, 1]), "padding": np.array([1, 1]), "dilation": np.array([1, 1]),
                "groups": np.int64(1), "input_shape": np.array([size, size])}

    def if_neurons(shape):
        return {"type": "IF", "r": np.ones(shape), "v_threshold": np.ones(shape), "v_reset": np.zeros(shape)}

    pool = {"type": "SumPool2d", "kernel_size": np.array([2, 2]), "stride": np.array([2, 2]), "padding": np.array([0, 0])}
    nodes = {"input": {"type": "Input", "shape": np.array([2, 16, 16])}, "conv1": conv(conv1, 16),
             "if1": if_neurons((8, 16, 16)), "pool1": pool, "conv2": conv(conv2, 8), "if2": if_neurons((16, 8, 8)),
             "pool2": dict(pool),
             "flat": {"type": "Flatten", "start_dim": np.int64(0), "end_dim": np.int64(-1),
                      "input_type": np.array([16, 4, 4])},
             "fc": {"type": "Linear", "weight": fc.weight.detach().numpy() * 8}, "if3": if_neurons(10),
             "output": {"type": "Output", "shape": np.array([10])}}
    chain = ["input", "conv1", "if1", "pool1", "conv2", "if2", "pool2", "flat", "fc", "if3", "output"]
    write_nir(os.path.join(out, "cnn_sumpool.nir"), nodes, list(zip(chain, chain[1:])))
    lin = torch.nn.Linear(256, 16)
    gains = torch.rand(256, generator=torch.Generator().manual_seed(1)).numpy() * 1.5 + 0.5
    nodes = {"input": {"type": "Input", "shape": np.array([256])},
             "gain": {"type": "Scale", "scale": gains.astype(np.float32)},
             "delay": {"type": "Delay", "delay": np.full(256, 0.002)},
             "fc": {"type": "Affine", "weight": lin.weight.detach().numpy() * 4, "bias": lin.bias.detach().numpy()},
             "lif": lif(16), "output": {"type": "Output", "shape": np.array([16])}}
    chain = ["input", "gain", "delay", "fc", "lif", "output"]
    write_nir(os.path.join(out, "scale_delay.nir"), nodes, list(zip(chain, chain[1:])))
    lin = torch.nn.Linear(128, 32)
    w = lin.weight.detach().numpy()
    q = np.round(w / np.abs(w).max() * 100)
    nodes = {"input": {"type": "Input", "shape": np.array([128])},
             "fc": {"type": "Affine", "weight": (0.375 * q).astype(np.float32), "bias": np.zeros(32, np.float32)},
             "lif": dict(lif(32), v_threshold=np.full(32, 40.0)), "output": {"type": "Output", "shape": np.array([32])}}
    chain = ["input", "fc", "lif", "output"]
    write_nir(os.path.join(out, "mlp_quant.nir"), nodes, list(zip(chain, chain[1:])))
    return ["mlp_dense.nir", "mlp_pruned.nir", "mlp_neurons_pruned.nir", "mlp_merge.nir", "cnn_sumpool.nir", "scale_delay.nir", "mlp_quant.nir"]


def main(exe, out, target):
    os.makedirs(out, exist_ok=True)
    files = [os.path.join(SHARED, f) for f in sorted(os.listdir(SHARED)) if f.endswith(".nir")]
    files += [os.path.join(out, f) for f in make(out)]
    manifest = os.path.join(out, "models.txt")
    open(manifest, "w").write("".join(os.path.abspath(f) + "\n" for f in files))
    print(f"target {target}; load average {os.getloadavg()[0]:.1f}")
    # One `refinery batch` over them all, one model at a time (docs/batch.md):
    # each job's optimize time as on its own. Exit 1 is a failed job (the
    # malformed shared files), shown in the table.
    batch = os.path.join(out, "batch")
    p = subprocess.run([exe, "batch", manifest, "-o", batch, "--target", target, "--jobs", "1", "--quiet"],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"refinery batch failed (exit {p.returncode}): {p.stderr.strip()}")
    print("| file | result | cores | synapses | synaptic events / step | energy / inference (nJ) | weights fit | "
          "optimize (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for job in json.load(open(os.path.join(batch, "summary.json")))["jobs"]:
        name = os.path.basename(job["model"])
        if job["status"] != "written":
            why = (job["reason"] or "?").replace("|", "/")
            print(f"| {name} | exit {job['exit_code']}: {why} | | | | | | {job['wall_seconds']:.2f} |")
            continue
        j = json.load(open(job["report"]))
        n = j["neuromorphic"]
        b, a = n["before"], n["after"]
        fit = lambda m: f"{sum(w['fits'] for w in m['weights'])}/{len(m['weights'])}"
        print(f"| {name} | {j['result']} | {b['cores']} -> {a['cores']} | {b['synapses']} -> {a['synapses']} | "
              f"{b['synaptic_events_per_step']:.4g} -> {a['synaptic_events_per_step']:.4g} | "
              f"{b['energy_per_inference_j'] * 1e9:.4g} -> {a['energy_per_inference_j'] * 1e9:.4g} | "
              f"{fit(b)} -> {fit(a)} | {job['wall_seconds']:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "loihi2")

#!/usr/bin/python3
"""Writes tests/nir/data/pruned_mlp.nir: a torch MLP pruned the way people
prune whole neurons, for the dead-neuron rules (docs/spiking.md, "Pruning";
tests/cli/nir_test.cpp).

torch.nn.Sequential(Linear(20, 16), Linear(16, 12), Linear(12, 4)), a LIF
after each. torch.nn.utils.prune.ln_structured (L2, dim 0: whole rows, 50%)
on the first two layers' weights, and the same rows of their biases
(prune.custom_from_mask), made permanent with prune.remove: 8 of 16 and 6 of
12 neurons get no input at all. Written in NIR's HDF5 layout (as
bench/neuromorphic/measure.py does; the NIR package is not installed here).
The last layer is the graph's output and is not pruned.

    /usr/bin/python3 tests/nir/data/make_pruned_mlp.py OUT.nir
"""
import os
import sys

import numpy as np
import torch
import torch.nn.utils.prune as prune

# NIR's HDF5 layout, written once: bench/neuromorphic/measure.py
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench", "neuromorphic"))
from measure import write_nir  # noqa: E402


def main(out):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(20, 16), torch.nn.Linear(16, 12), torch.nn.Linear(12, 4))
    with torch.no_grad():
        for lin in net:
            lin.weight.mul_(4.0)
            lin.bias.mul_(2.0)
    for lin in list(net)[:2]:
        prune.ln_structured(lin, name="weight", amount=0.5, n=2, dim=0)
        prune.custom_from_mask(lin, name="bias", mask=lin.weight_mask.any(dim=1))
        prune.remove(lin, "weight")
        prune.remove(lin, "bias")
    nodes = {"input": {"type": "Input", "shape": np.array([20])}}
    edges, prev = [], "input"
    for i, lin in enumerate(net):
        w = lin.weight.detach().numpy().astype(np.float32)
        n = w.shape[0]
        nodes[f"fc{i}"] = {"type": "Affine", "weight": w, "bias": lin.bias.detach().numpy().astype(np.float32)}
        nodes[f"lif{i}"] = {"type": "LIF", "tau": np.full(n, 0.005), "r": np.full(n, 5.0), "v_leak": np.zeros(n),
                            "v_threshold": np.ones(n), "v_reset": np.zeros(n)}
        edges += [(prev, f"fc{i}"), (f"fc{i}", f"lif{i}")]
        prev = f"lif{i}"
    nodes["output"] = {"type": "Output", "shape": np.array([4])}
    edges.append((prev, "output"))
    write_nir(out, nodes, edges)


if __name__ == "__main__":
    main(sys.argv[1])

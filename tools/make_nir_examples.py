#!/usr/bin/python3
"""Writes the generated NIR test networks into a folder (the build tree):
LIF, CubaLIF, IF (conv), recurrent and nested networks in the HDF5 layout of
NIR's serialization.py (several versions' variants: v_reset or w_in left out,
gzip or not), and malformed files for the error tests.

    make_nir_examples.py OUT_DIR
"""
import os
import sys

import h5py
import numpy as np

rng = np.random.default_rng(20240611)
STR = h5py.string_dtype()


def put(group, key, value, gzip):
    if isinstance(value, str):
        group.create_dataset(key, data=value, dtype=STR)
    else:
        value = np.asarray(value)
        comp = "gzip" if gzip and value.ndim > 0 else None
        group.create_dataset(key, data=value, compression=comp)


def write_graph(group, nodes, edges, gzip):
    put(group, "type", "NIRGraph", gzip)
    ng = group.create_group("nodes")
    for name, node in nodes.items():
        g = ng.create_group(name)
        if isinstance(node, tuple):  # a nested graph
            write_graph(g, node[0], node[1], gzip)
            continue
        for k, v in node.items():
            put(g, k, v, gzip)
    if edges is not None:
        group.create_dataset("edges", data=np.array(edges, dtype=object).reshape(-1, 2), dtype=STR)


def write(path, nodes, edges, version="1.0.1", gzip=True):
    with h5py.File(path, "w") as f:
        f.create_dataset("version", data=version, dtype=STR)
        write_graph(f.create_group("node"), nodes, edges, gzip)


def w(rows, cols, scale, bias=0.0):
    return (rng.uniform(-0.3, 1.0, size=(rows, cols)) * scale).astype(np.float32), \
        np.full(rows, bias, dtype=np.float32)


def lif(n, tau=0.01, thr=1.0, reset=True):
    d = {"type": "LIF", "tau": np.full(n, tau), "r": np.ones(n), "v_leak": np.zeros(n),
         "v_threshold": np.full(n, thr)}
    if reset:
        d["v_reset"] = np.zeros(n)
    return d


def main(out):
    os.makedirs(out, exist_ok=True)
    # LIF: feed-forward, two layers; the second LIF has no v_reset (NIR 0.1 style).
    w1, b1 = w(30, 20, 0.6)
    w2, b2 = w(10, 30, 0.5)
    write(f"{out}/gen_lif.nir", {
        "input": {"type": "Input", "shape": np.array([20])},
        "fc1": {"type": "Affine", "weight": w1, "bias": b1}, "lif1": lif(30),
        "fc2": {"type": "Affine", "weight": w2, "bias": b2}, "lif2": lif(10, tau=0.02, reset=False),
        "output": {"type": "Output", "shape": np.array([10])},
    }, [("input", "fc1"), ("fc1", "lif1"), ("lif1", "fc2"), ("fc2", "lif2"), ("lif2", "output")], version="0.1.1")
    # CubaLIF into CubaLI, through Linear and Scale; float64 parameters, no gzip.
    w1, _ = w(24, 16, 1.5)
    w2, b2 = w(5, 24, 1.0)
    cuba = {"type": "CubaLIF", "tau_syn": np.full(24, 0.005), "tau_mem": np.full(24, 0.01), "r": np.ones(24),
            "v_leak": np.zeros(24), "v_threshold": np.full(24, 0.5), "v_reset": np.zeros(24), "w_in": np.full(24, 2.0)}
    write(f"{out}/gen_cubalif.nir", {
        "input": {"type": "Input", "shape": np.array([16])},
        "lin": {"type": "Linear", "weight": w1}, "scale": {"type": "Scale", "scale": np.full(16, 1.5)},
        "cuba": cuba, "fc": {"type": "Affine", "weight": w2, "bias": b2},
        "li": {"type": "CubaLI", "tau_syn": np.full(5, 0.005), "tau_mem": np.full(5, 0.02), "r": np.ones(5),
               "v_leak": np.zeros(5), "w_in": np.ones(5)},
        "output": {"type": "Output", "shape": np.array([5])},
    }, [("input", "scale"), ("scale", "lin"), ("lin", "cuba"), ("cuba", "fc"), ("fc", "li"), ("li", "output")],
        version="0.2.0", gzip=False)
    # IF: a small spiking CNN with a delay and a threshold read-out.
    cw = (rng.uniform(-0.2, 1.0, size=(4, 2, 3, 3)) * 0.6).astype(np.float32)
    fw, fb = w(6, 64, 0.4)
    write(f"{out}/gen_if.nir", {
        "input": {"type": "Input", "shape": np.array([2, 8, 8])},
        "delay": {"type": "Delay", "delay": np.full((2, 8, 8), 2.0)},
        "conv": {"type": "Conv2d", "weight": cw, "bias": np.full(4, 0.05, dtype=np.float32), "stride": np.array([1, 1]),
                 "padding": np.array([1, 1]), "dilation": np.array([1, 1]), "groups": np.int64(1),
                 "input_shape": np.array([8, 8])},
        "if1": {"type": "IF", "r": np.ones((4, 8, 8)), "v_threshold": np.ones((4, 8, 8))},
        "pool": {"type": "SumPool2d", "kernel_size": np.array([2, 2]), "stride": np.array([2, 2]),
                 "padding": np.array([0, 0])},
        "avg": {"type": "AvgPool2d", "kernel_size": np.array([2, 2]), "stride": np.array([2, 2]),
                "padding": np.array([1, 1])},
        "flat": {"type": "Flatten", "start_dim": np.int64(0), "end_dim": np.int64(-1), "input_type": np.array([4, 4, 4])},
        "flat_avg": {"type": "Flatten", "start_dim": np.int64(0), "end_dim": np.int64(-1), "input_type": np.array([4, 5, 5])},
        "fc": {"type": "Affine", "weight": fw, "bias": fb},
        "fc_avg": {"type": "Linear", "weight": (rng.uniform(-0.2, 1.0, size=(6, 100)) * 0.3).astype(np.float32)},
        "if2": {"type": "IF", "r": np.ones(6), "v_threshold": np.full(6, 2.0), "v_reset": np.zeros(6)},
        "i": {"type": "I", "r": np.full(6, 0.5)},
        "thr": {"type": "Threshold", "threshold": np.full(6, 3.0)},
        "output": {"type": "Output", "shape": np.array([6])},
    }, [("input", "delay"), ("delay", "conv"), ("input", "conv"), ("conv", "if1"), ("if1", "pool"), ("pool", "flat"),
        ("flat", "fc"), ("if1", "avg"), ("avg", "flat_avg"), ("flat_avg", "fc_avg"), ("fc_avg", "if2"), ("fc", "if2"),
        ("if2", "i"), ("i", "thr"), ("thr", "output")])
    # Recurrent: LIF with a recurrent Linear, and a second loop through two stateful nodes.
    w_in, b_in = w(12, 8, 0.8)
    w_rec = (rng.uniform(-0.6, 0.6, size=(12, 12))).astype(np.float32)
    w_out, b_out = w(4, 12, 0.6)
    w_back = (rng.uniform(-0.5, 0.5, size=(12, 4))).astype(np.float32)
    write(f"{out}/gen_recurrent.nir", {
        "input": {"type": "Input", "shape": np.array([8])},
        "fc_in": {"type": "Affine", "weight": w_in, "bias": b_in}, "lif": lif(12, tau=0.005),
        "rec": {"type": "Linear", "weight": w_rec}, "fc_out": {"type": "Affine", "weight": w_out, "bias": b_out},
        "li": {"type": "LI", "tau": np.full(4, 0.01), "r": np.ones(4), "v_leak": np.zeros(4)},
        "back": {"type": "Linear", "weight": w_back},
        "output": {"type": "Output", "shape": np.array([4])},
    }, [("input", "fc_in"), ("fc_in", "lif"), ("lif", "rec"), ("rec", "lif"), ("lif", "fc_out"), ("fc_out", "li"),
        ("li", "back"), ("back", "lif"), ("li", "output")])
    # Nested: the braille layout with a proper subgraph (CubaLIF + recurrent Affine).
    a1, c1 = w(10, 6, 1.0)
    ar = (rng.uniform(-0.4, 0.4, size=(10, 10))).astype(np.float32)
    a2, c2 = w(3, 10, 0.8)
    inner = ({"input": {"type": "Input", "shape": np.array([10])},
              "lif": {"type": "CubaLIF", "tau_syn": np.full(10, 0.002), "tau_mem": np.full(10, 0.004),
                      "r": np.ones(10), "v_leak": np.zeros(10), "v_threshold": np.full(10, 0.3),
                      "w_in": np.ones(10)},
              "lin": {"type": "Affine", "weight": ar, "bias": np.zeros(10, dtype=np.float32)},
              "output": {"type": "Output", "shape": np.array([10])}},
             [("input", "lif"), ("lif", "lin"), ("lin", "lif"), ("lif", "output")])
    write(f"{out}/gen_nested.nir", {
        "input": {"type": "Input", "shape": np.array([6])},
        "fc1": {"type": "Affine", "weight": a1, "bias": c1}, "rnn": inner,
        "fc2": {"type": "Affine", "weight": a2, "bias": c2}, "lif2": lif(3, tau=0.004, thr=0.2),
        "output": {"type": "Output", "shape": np.array([3])},
    }, [("input", "fc1"), ("fc1", "rnn"), ("rnn", "fc2"), ("fc2", "lif2"), ("lif2", "output")], version="0.2.0")

    # Malformed files (tests check their messages).
    bw, bb = w(5, 7, 1.0)
    write(f"{out}/bad_weight.nir", {
        "input": {"type": "Input", "shape": np.array([6])},
        "fc": {"type": "Affine", "weight": bw, "bias": bb}, "lif": lif(5),
        "output": {"type": "Output", "shape": np.array([5])},
    }, [("input", "fc"), ("fc", "lif"), ("lif", "output")])
    write(f"{out}/dangling_edge.nir", {
        "input": {"type": "Input", "shape": np.array([2])}, "lif": lif(2),
        "output": {"type": "Output", "shape": np.array([2])},
    }, [("input", "lif"), ("lif", "outptu")])
    sa, sb = w(3, 3, 1.0)
    write(f"{out}/stateless_cycle.nir", {
        "input": {"type": "Input", "shape": np.array([3])},
        "a": {"type": "Affine", "weight": sa, "bias": sb}, "b": {"type": "Linear", "weight": sa},
        "output": {"type": "Output", "shape": np.array([3])},
    }, [("input", "a"), ("a", "b"), ("b", "a"), ("b", "output")])
    # A parameter whose extent claims 2^40 elements with nothing stored (a
    # corrupt or truncated file): refused, not allocated.
    write(f"{out}/huge_extent.nir", {
        "input": {"type": "Input", "shape": np.array([2])}, "lif": lif(2),
        "output": {"type": "Output", "shape": np.array([2])},
    }, [("input", "lif"), ("lif", "output")])
    with h5py.File(f"{out}/huge_extent.nir", "a") as f:
        del f["node/nodes/lif/tau"]
        f["node/nodes/lif"].create_dataset("tau", shape=(2**40,), dtype="f8", chunks=(1024,))
    write(f"{out}/no_edges.nir", {
        "input": {"type": "Input", "shape": np.array([2])}, "lif": lif(2),
        "output": {"type": "Output", "shape": np.array([2])},
    }, [])

    # A loop through an Affine in front of a LIF and a second loop through two
    # LIFs, written twice with names whose order is reversed: which edges read
    # the previous step must not depend on names (tests/nir/loop_test.cpp).
    w_front = (rng.uniform(-0.2, 1.0, size=(12, 12)) * 0.9).astype(np.float32)
    w_mid, b_mid = w(6, 12, 0.7)
    w_back = (rng.uniform(-0.8, 0.8, size=(12, 6))).astype(np.float32)
    for suffix, names in (("", ("front", "lif_a", "fc_mid", "lif_b", "fc_back", "input", "output")),
                          ("_renamed", ("z_front", "y_lif", "m_fc", "b_lif", "a_fc", "zz_in", "aa_out"))):
        front, lif_a, mid, lif_b, back, inp, outp = names
        write(f"{out}/gen_loop{suffix}.nir", {
            inp: {"type": "Input", "shape": np.array([12])},
            front: {"type": "Affine", "weight": w_front, "bias": np.zeros(12, dtype=np.float32)},
            lif_a: lif(12, tau=0.004), mid: {"type": "Affine", "weight": w_mid, "bias": b_mid},
            lif_b: lif(6, tau=0.004, thr=0.5), back: {"type": "Linear", "weight": w_back},
            outp: {"type": "Output", "shape": np.array([6])},
        }, [(inp, front), (lif_a, front), (front, lif_a), (lif_a, mid), (mid, lif_b), (lif_b, back),
            (back, lif_a), (lif_b, outp)])
    # snnTorch writes Output shape []: the Output takes what arrives (a note).
    write(f"{out}/output_empty_shape.nir", {
        "input": {"type": "Input", "shape": np.array([3])}, "lif": lif(3),
        "output": {"type": "Output", "shape": np.zeros(0, dtype=np.int64)},
    }, [("input", "lif"), ("lif", "output")])
    # A weight stored as a string: a wrong type, not a missing dataset.
    write(f"{out}/string_weight.nir", {
        "input": {"type": "Input", "shape": np.array([3])},
        "fc": {"type": "Affine", "weight": "[[1, 0, 0]]", "bias": np.zeros(1, dtype=np.float32)},
        "lif": lif(1), "output": {"type": "Output", "shape": np.array([1])},
    }, [("input", "fc"), ("fc", "lif"), ("lif", "output")])


if __name__ == "__main__":
    main(sys.argv[1])

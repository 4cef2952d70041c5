#!/usr/bin/python3
"""An independent NIR simulator in numpy, for checking Refinery's runtime.

Written from NIR's equations (docs/source/primitives.md, nir/ir/*.py) and the
run conventions of docs/spiking.md, not from Refinery's C++: it reads the .nir
file itself with h5py and steps the network T times.

    nir_sim.py MODEL.nir --steps T --dt DT [--discretisation euler|exact]
               [--reset zero|subtract] --input IN.bin --out OUT.txt

IN.bin: float64 little-endian; for each Input node in name order, T x size
values (row-major). OUT.txt: one line per spiking node (LIF, IF, CubaLIF,
Threshold) in name order, "spikes<TAB>NAME<TAB>0110...", T x size digits;
then one line per Output node, "output<TAB>NAME<TAB>hex floats".
"""
import argparse
import math
import sys

import h5py
import numpy as np

STATEFUL = {"I", "IF", "LI", "LIF", "CubaLI", "CubaLIF", "Delay"}
SPIKING = {"IF", "LIF", "CubaLIF", "Threshold"}


def text(x):
    return x.decode("utf8") if isinstance(x, bytes) else str(x)


def read_graph(group, prefix, prims):
    """Flattens a (nested) NIRGraph into prims: name -> dict. Returns the
    graph's Input and Output node names (a nested graph is entered through its
    Input and left through its Output)."""
    ports = {}
    for local in sorted(group["nodes"].keys()):
        node = group["nodes"][local]
        kind = text(node["type"][()])
        name = prefix + local
        if kind == "NIRGraph":
            ports[local] = read_graph(node, name + "/", prims)
            continue
        params = {k: node[k][()] for k in node.keys() if k != "type" and isinstance(node[k], h5py.Dataset)}
        prims[name] = {"type": kind, "params": params, "preds": [], "top": prefix == ""}
        ports[local] = ([name], [name])
    for a, b in group["edges"][()]:
        a, b = text(a), text(b)
        src, dst = ports[a][1], ports[b][0]
        assert len(src) == 1 and len(dst) == 1, (a, b)
        prims[dst[0]]["preds"].append(src[0])
    ins = [p[0][0] for p in ports.values() if p[0] == p[1] and prims[p[0][0]]["type"] == "Input"]
    outs = [p[0][0] for p in ports.values() if p[0] == p[1] and prims[p[0][0]]["type"] == "Output"]
    return ins, outs


def sccs(nodes, succ):
    """Strongly connected components (Kosaraju)."""
    seen, order = set(), []
    for s in nodes:
        if s in seen:
            continue
        stack = [(s, iter(succ[s]))]
        seen.add(s)
        while stack:
            v, it = stack[-1]
            nxt = next((w for w in it if w in nodes and w not in seen), None)
            if nxt is None:
                order.append(v)
                stack.pop()
            else:
                seen.add(nxt)
                stack.append((nxt, iter(succ[nxt])))
    pred = {v: [] for v in nodes}
    for v in nodes:
        for w in succ[v]:
            if w in nodes:
                pred[w].append(v)
    comps, assigned = [], set()
    for v in reversed(order):
        if v in assigned:
            continue
        comp, stack = [], [v]
        assigned.add(v)
        while stack:
            u = stack.pop()
            comp.append(u)
            for w in pred[u]:
                if w not in assigned:
                    assigned.add(w)
                    stack.append(w)
        comps.append(comp)
    return comps


def evaluation_order(prims):
    """docs/nir.md: an edge u -> v inside a cycle reads the previous step when
    v is no further (breadth-first) from the Input nodes than u; every other
    edge reads this step. Names only break ties that change nothing, and the
    two cases with no name-free answer (a cycle no Input reaches; recurrent
    edges at one distance that close a cycle among themselves)."""
    succ = {v: [] for v in prims}
    for v, p in prims.items():
        for s in p["preds"]:
            succ[s].append(v)
    stateless = {v for v, p in prims.items() if p["type"] not in STATEFUL}
    for c in sccs(stateless, succ):
        if len(c) > 1 or c[0] in succ[c[0]]:
            sys.exit("a cycle without a stateful node")
    comp_of = {v: i for i, c in enumerate(sccs(set(prims), succ)) for v in c}
    inputs = [v for v, p in prims.items() if p["type"] == "Input" and p["top"]]
    depth = {v: 0 for v in inputs}
    queue, deepest = list(inputs), 0
    while True:
        q = 0
        while q < len(queue):
            for w in succ[queue[q]]:
                if w not in depth:
                    depth[w] = depth[queue[q]] + 1
                    deepest = max(deepest, depth[w])
                    queue.append(w)
            q += 1
        far = [v for v in prims if v not in depth and v not in stateless]
        if not far:
            break
        deepest += 1
        depth[min(far)] = deepest
        queue = [min(far)]

    def recurrent(p, v):
        return comp_of[p] == comp_of[v] and depth[v] <= depth[p]

    before = {v: [] for v in prims}
    for v, p in prims.items():
        for s in p["preds"]:
            if not recurrent(s, v):
                before[v].append(s)
            elif s != v:
                before[s].append(v)
    done = set(inputs)
    order = []
    while len(done) < len(prims):
        ready = [v for v in prims if v not in done and all(s in done for s in before[v])]
        if ready:
            nxt = min(ready)
        else:
            fwd = [v for v in prims if v not in done
                   and all(s in done or recurrent(s, v) for s in prims[v]["preds"])]
            if not fwd:
                sys.exit("the graph's cycles could not be ordered")
            nxt = min(fwd, key=lambda v: (depth[v], v))
        done.add(nxt)
        order.append(nxt)
    return order


def f64(x):
    return np.asarray(x, dtype=np.float64)


def per_dim(p, key, n, default):
    if key not in p:
        return [default] * n
    v = np.atleast_1d(np.asarray(p[key])).astype(np.int64).tolist()
    return v * n if len(v) == 1 else v


class Node:
    def __init__(self, name, prim, args):
        self.name, self.type, self.p = name, prim["type"], prim["params"]
        self.preds = sorted(prim["preds"])  # inputs are summed in order of source name
        self.args = args
        self.t = 0
        p, dt = self.p, args.dt
        exact = args.discretisation == "exact"

        def factor(tau):
            # one libm exp per element (math.exp), as a C library would compute it
            tau = f64(tau)
            flat = [math.exp(-dt / float(x)) if exact else dt / float(x) for x in tau.ravel()]
            return np.array(flat, dtype=np.float64).reshape(tau.shape)

        if self.type in ("LI", "LIF"):
            self.k_mem = factor(p["tau"])
        if self.type in ("CubaLI", "CubaLIF"):
            self.k_mem, self.k_syn = factor(p["tau_mem"]), factor(p["tau_syn"])
            if "w_in" not in p:
                p["w_in"] = np.ones_like(f64(p["v_leak"]))
        if self.type in ("IF", "LIF", "CubaLIF") and "v_reset" not in p:
            p["v_reset"] = np.zeros_like(f64(p["v_threshold"]))
        self.v = 0.0
        self.i = 0.0
        if self.type == "Delay":
            self.steps = np.rint(f64(p["delay"]) / dt).astype(np.int64)
            self.history = []

    def step(self, x):
        p, a, t = self.p, self.args, self.type
        euler = a.discretisation == "euler"
        if t in ("Input", "Output"):
            return x
        if t == "Affine" or t == "Linear":
            w = f64(p["weight"])
            y = f64(p["bias"]).copy() if t == "Affine" else np.zeros(w.shape[0])
            for c in range(w.shape[1]):
                y = y + w[:, c] * x[c]
            return y
        if t == "Scale":
            return f64(p["scale"]) * x
        if t in ("Conv1d", "Conv2d"):
            return self.conv(x)
        if t in ("SumPool2d", "AvgPool2d"):
            k = per_dim(p, "kernel_size", 2, 1)
            s = per_dim(p, "stride", 2, 1)
            pad = per_dim(p, "padding", 2, 0)
            xp = np.pad(x, ((0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
            oh = (x.shape[1] + 2 * pad[0] - k[0]) // s[0] + 1
            ow = (x.shape[2] + 2 * pad[1] - k[1]) // s[1] + 1
            y = np.zeros((x.shape[0], oh, ow))
            for ky in range(k[0]):
                for kx in range(k[1]):
                    y = y + xp[:, ky:ky + s[0] * (oh - 1) + 1:s[0], kx:kx + s[1] * (ow - 1) + 1:s[1]]
            return y / float(k[0] * k[1]) if t == "AvgPool2d" else y
        if t == "Flatten":
            start = int(p.get("start_dim", 1))
            end = int(p.get("end_dim", -1))
            shape = list(x.shape)
            end = end % len(shape)
            start = start % len(shape)
            return x.reshape(shape[:start] + [int(np.prod(shape[start:end + 1]))] + shape[end + 1:])
        if t == "Delay":  # y(t) = x(t - round(delay / dt)), zero before the start
            self.history.append(x)
            idx = np.broadcast_to(self.t - self.steps, x.shape).ravel()
            flat = np.array([self.history[i].ravel()[e] if i >= 0 else 0.0 for e, i in enumerate(idx)])
            self.t += 1
            return flat.reshape(x.shape)
        if t == "Threshold":
            return (x > f64(p["threshold"])).astype(np.float64)
        # neurons
        if t in ("I", "IF"):
            self.v = self.v + a.dt * (f64(p["r"]) * x)
        elif t in ("LI", "LIF"):
            drive = f64(p["r"]) * x
            if euler:
                self.v = self.v + self.k_mem * ((f64(p["v_leak"]) - self.v) + drive)
            else:
                self.v = self.k_mem * self.v + (1.0 - self.k_mem) * (f64(p["v_leak"]) + drive)
        else:  # CubaLI, CubaLIF: tau_syn dI/dt = -I + w_in S, then tau_mem dv/dt = (v_leak - v) + R I
            inp = f64(p["w_in"]) * x
            if euler:
                self.i = self.i + self.k_syn * (inp - self.i)
            else:
                self.i = self.k_syn * self.i + (1.0 - self.k_syn) * inp
            drive = f64(p["r"]) * self.i
            if euler:
                self.v = self.v + self.k_mem * ((f64(p["v_leak"]) - self.v) + drive)
            else:
                self.v = self.k_mem * self.v + (1.0 - self.k_mem) * (f64(p["v_leak"]) + drive)
        if t not in SPIKING:
            return np.broadcast_to(self.v, x.shape).astype(np.float64)
        thr = f64(p["v_threshold"])
        z = self.v > thr
        if a.reset == "zero":
            self.v = np.where(z, f64(p["v_reset"]), self.v)
        else:
            self.v = np.where(z, self.v - thr, self.v)
        return np.broadcast_to(z, x.shape).astype(np.float64)

    def conv(self, x):
        p = self.p
        w = f64(p["weight"])
        two = self.type == "Conv2d"
        if not two:  # treat [C, L] as [C, 1, L]
            w, x = w[:, :, None, :], x[:, None, :]
        n = 2 if two else 1
        s = per_dim(p, "stride", n, 1)
        d = per_dim(p, "dilation", n, 1)
        if not two:
            s, d = [1] + s, [1] + d
        kh, kw = w.shape[2], w.shape[3]
        pad = p.get("padding", 0)
        if isinstance(pad, (bytes, str)):
            pad = text(pad)
            tot = [d[0] * (kh - 1), d[1] * (kw - 1)] if pad == "same" else [0, 0]
            pb = [tot[0] // 2, tot[1] // 2]
            pe = [tot[0] - pb[0], tot[1] - pb[1]]
        else:
            pv = per_dim(p, "padding", n, 0)
            pv = pv if two else [0] + pv
            pb, pe = pv, pv
        if not two:
            pb, pe = [0, pb[1]], [0, pe[1]]
        groups = int(p.get("groups", 1))
        xp = np.pad(x, ((0, 0), (pb[0], pe[0]), (pb[1], pe[1])))
        oh = (xp.shape[1] - d[0] * (kh - 1) - 1) // s[0] + 1
        ow = (xp.shape[2] - d[1] * (kw - 1) - 1) // s[1] + 1
        cout, cin_g = w.shape[0], w.shape[1]
        cout_g = cout // groups
        y = np.zeros((cout, oh, ow))
        if "bias" in p:
            y = y + np.broadcast_to(f64(p["bias"]), (cout,))[:, None, None]
        for gi in range(groups):
            outs = slice(gi * cout_g, (gi + 1) * cout_g)
            for ci in range(cin_g):
                for ky in range(kh):
                    for kx in range(kw):
                        patch = xp[gi * cin_g + ci, ky * d[0]:ky * d[0] + s[0] * (oh - 1) + 1:s[0],
                                   kx * d[1]:kx * d[1] + s[1] * (ow - 1) + 1:s[1]]
                        y[outs] = y[outs] + w[outs, ci, ky, kx][:, None, None] * patch[None]
        return y if two else y[:, 0, :]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--dt", type=float, required=True)
    ap.add_argument("--discretisation", choices=["euler", "exact"], default="euler")
    ap.add_argument("--reset", choices=["zero", "subtract"], default="zero")
    ap.add_argument("--input", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    prims = {}
    with h5py.File(args.model, "r") as f:
        read_graph(f["node"], "", prims)
    order = evaluation_order(prims)
    inputs = sorted(v for v, p in prims.items() if p["type"] == "Input" and p["top"])
    raw = np.fromfile(args.input, dtype="<f8")
    feeds, at = {}, 0
    for name in inputs:
        shape = [int(s) for s in np.atleast_1d(prims[name]["params"]["shape"])]
        size = int(np.prod(shape))
        feeds[name] = raw[at:at + size * args.steps].reshape([args.steps] + shape)
        at += size * args.steps
    assert at == raw.size, "input file size does not match the Input nodes"
    nodes = {v: Node(v, prims[v], args) for v in order}
    value = {}  # latest output of every node: a recurrent read sees the previous step
    for v in order:  # all values start at zero, shaped like the node's output
        value[v] = None
    trains = {v: [] for v in order if prims[v]["type"] in SPIKING}
    outputs = {v: [] for v in order if prims[v]["type"] == "Output" and prims[v]["top"]}
    for t in range(args.steps):
        for name in inputs:
            value[name] = feeds[name][t]
        for v in order:
            srcs = nodes[v].preds
            xs = [value[s] for s in srcs]
            known = next(x for x in xs if x is not None) if any(x is not None for x in xs) else None
            if known is None:  # the first step of a cycle: every input is a zero of the recurrent type
                known = np.zeros(zero_shape(prims, srcs[0]))
            x = None
            for s in xs:
                s = np.zeros_like(known) if s is None else s
                x = s if x is None else x + s
            value[v] = nodes[v].step(x)
        for v in trains:
            trains[v].append(value[v].ravel() != 0)
        for v in outputs:
            outputs[v].append(value[v].ravel())
    with open(args.out, "w") as out:
        for v in sorted(trains):
            bits = "".join("1" if b else "0" for b in np.concatenate(trains[v]))
            out.write(f"spikes\t{v}\t{bits}\n")
        for v in sorted(outputs):
            vals = " ".join(float(x).hex() for x in np.concatenate(outputs[v]))
            out.write(f"output\t{v}\t{vals}\n")


def zero_shape(prims, name):
    """The output shape of a node from its parameters (for recurrent reads
    before the node has run once)."""
    p = prims[name]
    par = p["params"]
    if p["type"] in ("Affine", "Linear"):
        return (np.asarray(par["weight"]).shape[0],)
    for key in ("v_threshold", "tau", "tau_mem", "r", "delay", "threshold", "scale"):
        if key in par and np.ndim(par[key]) > 0:
            return np.asarray(par[key]).shape
    if p["preds"]:
        return zero_shape(prims, p["preds"][0])
    raise SystemExit(f"cannot tell the shape of {name}")


if __name__ == "__main__":
    main()

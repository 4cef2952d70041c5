#!/usr/bin/env python3
"""The gpu roofline's terms of each micro-model, per node, as `refinery cost`
prices them: what bench/gpu/fit.py refits the constants of (docs/targets.md,
"Measured on a GPU"). No second FLOP or byte count: every figure comes from
refinery's gpu model, read through probe specs.

    python3 bench/gpu/terms.py REFINERY DIR/manifest.jsonl OUT.jsonl [--spec targets/specs/h200.json] [--jobs 2]
                               [--kind kernel|model]

The gpu model prices a node as `share * (max(F / peak, B / bw) + launch)`
(a kernel: matrix, movement, reduction) or `F / peak + B / bw` (an
elementwise op or split fused into its producer), with the matrix ops' peak
tf32 and the others' f32; a kernel adds its family's latency
(`kernel_latency_s`) to its launch, and the graph its launch once
(`graph_launch_s`, not a node's). Four probe specs, each with one constant 1
and the others 1e30 (launch 1e-30, no latencies), make `refinery cost
--json`'s per-node figures these terms: `fm` (matrix FLOPs), `fv` (other
FLOPs), `bytes` and `launches` (the node's share of a launch, 0 for a fused
op). A fifth, with the families' latencies 1, 1e3, 1e6 and 1e9 s, names each
kernel's family (`family`: the power of 1000 its share of a latency is
within; empty for a node with none). A sixth run prices the micro-model with
the spec as it is: `datasheet_us` (the graph's launch included). One line a
micro-model: {id, ops, datasheet_us, nodes: [{op, fm, fv, bytes, launches,
family}]}. --reuse keeps an earlier run's terms and prices the spec alone.
"""
import argparse
import concurrent.futures
import copy
import json
import math
import os
import subprocess
import sys
import tempfile

HUGE, TINY = 1e30, 1e-30
PROBES = ("fm", "fv", "bytes", "launches")
FAMILIES = ("conv", "matmul", "reduction", "movement")  # targets/workload.h, kKernelFamilies


def probe_spec(spec, term):
    s = copy.deepcopy(spec)
    s["name"] = f"{spec['name']}-probe-{term}"
    s["peak_flops"] = {k: HUGE for k in spec["peak_flops"]}
    s["peak_flops"]["tf32"] = 1.0 if term == "fm" else HUGE
    s["peak_flops"]["f32"] = 1.0 if term == "fv" else HUGE
    s["memory_bandwidth"] = 1.0 if term == "bytes" else HUGE
    s["kernel_launch_s"] = 1.0 if term == "launches" else TINY
    s["graph_launch_s"] = 0.0
    s["kernel_latency_s"] = {f: 1000.0 ** i for i, f in enumerate(FAMILIES)} if term == "family" else {}
    s["kernel_efficiency"] = {}
    return s


def family(seconds):
    """The family whose probe latency (1000 ** i s) this node's share of it is."""
    if seconds < 1e-6:
        return ""
    return FAMILIES[max(0, math.ceil(math.log10(seconds) / 3 - 1e-9))]


def cost(refinery, model, spec_file):
    out = subprocess.run([refinery, "cost", model, "--target", spec_file, "--json", "-"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def terms_of(refinery, entry, specs, reuse=None):
    if reuse:  # the terms of an earlier run, priced with this spec
        sheet = cost(refinery, entry["file"], specs["datasheet"])
        return dict(reuse[entry["id"]], datasheet_us=sheet["total_ms"] * 1e3)
    probes = {t: cost(refinery, entry["file"], specs[t])["nodes"] for t in PROBES + ("family",)}
    sheet = cost(refinery, entry["file"], specs["datasheet"])
    nodes = []
    for i, n in enumerate(probes["fm"]):
        row = {"op": n["op"]}
        for t in PROBES:
            v = probes[t][i]["ms"] * 1e-3  # seconds, with the probed constant 1
            row[t] = 0.0 if v < 1e-12 else float(f"{v:.9g}")  # the HUGE and TINY terms left out
        row["family"] = family(probes["family"][i]["ms"] * 1e-3) if row["launches"] else ""
        if any(row[t] for t in PROBES):
            nodes.append(row)
    return {"id": entry["id"], "ops": entry.get("ops", []), "datasheet_us": sheet["total_ms"] * 1e3, "nodes": nodes}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("refinery")
    p.add_argument("manifest")
    p.add_argument("out")
    p.add_argument("--spec", default=os.path.join(os.path.dirname(__file__), "../../targets/specs/h200.json"))
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--kind", default="kernel", help="the manifest entries taken: kernel (micro-models) or model")
    p.add_argument("--reuse", help="an earlier run's terms (OUT.jsonl): kept, only datasheet_us priced again (a spec's "
                   "constants changed, not the model)")
    a = p.parse_args()
    with open(a.spec) as f:
        spec = json.load(f)
    reuse = {r["id"]: r for r in map(json.loads, filter(str.strip, open(a.reuse)))} if a.reuse else None
    with open(a.manifest) as f:
        entries = [e for e in map(json.loads, filter(str.strip, f)) if e.get("kind") == a.kind]
    with tempfile.TemporaryDirectory() as tmp:
        specs = {"datasheet": os.path.abspath(a.spec)}
        for t in PROBES + ("family",):
            specs[t] = os.path.join(tmp, f"probe_{t}.json")
            with open(specs[t], "w") as f:
                json.dump(probe_spec(spec, t), f)
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool, open(a.out, "w") as out:
            for n, row in enumerate(pool.map(lambda e: terms_of(a.refinery, e, specs, reuse), entries), 1):
                out.write(json.dumps(row) + "\n")
                if n % 200 == 0:
                    print(f"terms: {n}/{len(entries)}", file=sys.stderr)
    print(f"terms: {len(entries)} micro-models priced; wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

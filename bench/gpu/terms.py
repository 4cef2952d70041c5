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
tf32 and the others' f32. Four probe specs, each with one constant 1 and the
others 1e30 (launch 1e-30), make `refinery cost --json`'s per-node figures
these terms: `fm` (matrix FLOPs), `fv` (other FLOPs), `bytes` and `launches`
(the node's share of a launch, 0 for a fused op). A fifth run prices the
micro-model with the spec as it is: `datasheet_us`. One line a micro-model:
{id, ops, datasheet_us, nodes: [{op, fm, fv, bytes, launches}]}.
"""
import argparse
import concurrent.futures
import copy
import json
import os
import subprocess
import sys
import tempfile

HUGE, TINY = 1e30, 1e-30
PROBES = ("fm", "fv", "bytes", "launches")


def probe_spec(spec, term):
    s = copy.deepcopy(spec)
    s["name"] = f"{spec['name']}-probe-{term}"
    s["peak_flops"] = {k: HUGE for k in spec["peak_flops"]}
    s["peak_flops"]["tf32"] = 1.0 if term == "fm" else HUGE
    s["peak_flops"]["f32"] = 1.0 if term == "fv" else HUGE
    s["memory_bandwidth"] = 1.0 if term == "bytes" else HUGE
    s["kernel_launch_s"] = 1.0 if term == "launches" else TINY
    return s


def cost(refinery, model, spec_file):
    out = subprocess.run([refinery, "cost", model, "--target", spec_file, "--json", "-"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def terms_of(refinery, entry, specs):
    probes = {t: cost(refinery, entry["file"], specs[t])["nodes"] for t in PROBES}
    sheet = cost(refinery, entry["file"], specs["datasheet"])
    nodes = []
    for i, n in enumerate(probes["fm"]):
        row = {"op": n["op"]}
        for t in PROBES:
            v = probes[t][i]["ms"] * 1e-3  # seconds, with the probed constant 1
            row[t] = 0.0 if v < 1e-12 else float(f"{v:.9g}")  # the HUGE and TINY terms left out
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
    a = p.parse_args()
    with open(a.spec) as f:
        spec = json.load(f)
    with open(a.manifest) as f:
        entries = [e for e in map(json.loads, filter(str.strip, f)) if e.get("kind") == a.kind]
    with tempfile.TemporaryDirectory() as tmp:
        specs = {"datasheet": os.path.abspath(a.spec)}
        for t in PROBES:
            specs[t] = os.path.join(tmp, f"probe_{t}.json")
            with open(specs[t], "w") as f:
                json.dump(probe_spec(spec, t), f)
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool, open(a.out, "w") as out:
            for n, row in enumerate(pool.map(lambda e: terms_of(a.refinery, e, specs), entries), 1):
                out.write(json.dumps(row) + "\n")
                if n % 200 == 0:
                    print(f"terms: {n}/{len(entries)}", file=sys.stderr)
    print(f"terms: {len(entries)} micro-models priced; wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

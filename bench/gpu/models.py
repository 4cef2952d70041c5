#!/usr/bin/env python3
"""Whole models on a GPU against the gpu model's price, and the measured
speedup of what `refinery optimize` wrote (docs/targets.md, "Whole models on
the GPU").

    python3 bench/gpu/models.py DATA [--fit bench/gpu/h200_fit.json] [--spec targets/specs/h200.json]
                                [--write FILE] [--check FILE] [--threshold 0.03]

DATA is `fit.py join`'s file over whole models (`pack.py --kind model`,
`terms.py --kind model`, time_kernels.py, joined with a second timing run as
the repeat). An id `model:NAME[@D]` is a model as the zoo has it (`@D`: its
symbolic dims bound to D); `model:NAME.T[@D]` is what `refinery optimize
--target T` wrote for it, a pair with the first.

Prints, per timing (graph replay, eager), the whole models' MAPE and Kendall
tau-b against four prices: the spec's constants and h200_fit.json's
fitted, saturating and latency ones, each as the gpu model prices a graph (an
elementwise op fused into its producer is no launch of its own) and
"unfused" (every node a kernel, as eager PyTorch and its CUDA graphs run
them); the repeat against the first run is the timings' own noise. Then each
pair: the measured speedup, the modelled one (the spec's), and whether they
agree in direction where the runtime tells them apart (both runs by more
than --threshold, the same way). Held out: each refit on the models of one
half of the zoo scores the other half's, both halves apart and together. As
fit.py: the spec's price of every row must still be
`refinery cost`'s (exit 2), --check compares with stored figures (exit 1).
"""
import argparse
import json
import os
import re
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit import Rows, price_drift, read_jsonl, scores, sig, spec_constants, store_or_check, two_fold  # noqa: E402

import numpy as np  # noqa: E402  (fit.py says how to install it)

SAME = 1e-3  # a modelled speedup within this of 1 claims no difference
HERE = os.path.dirname(os.path.abspath(__file__))
PAIR = re.compile(r"^model:(?P<name>[^@]+?)\.(?P<target>cpu|gpu|tpu)(?P<dims>@\d+)?$")


def constants(spec, fitted, timing):
    f = fitted.get(timing, {})
    out = {"spec": spec_constants(spec)}
    for k in ("fitted", "saturating", "latency"):
        if k in f:
            out[k] = {p: v for p, v in f[k].items() if p != "at_bound"}
    return out


def unfused(rows):
    """The same models with every node a kernel of its own."""
    return [dict(r, nodes=[dict(x, launches=x["launches"] or 1.0) for x in r["nodes"]]) for r in rows]


def pairs(rows, timing, threshold):
    by_id = {r["id"]: r for r in rows}
    out, told, verdicts = [], 0, {"agree": 0, "opposite": 0, "no difference": 0}
    for r in rows:
        m = PAIR.match(r["id"])
        if not m or f"model:{m['name']}{m['dims'] or ''}" not in by_id:
            continue
        o = by_id[f"model:{m['name']}{m['dims'] or ''}"]
        measured = o[f"{timing}_us"] / r[f"{timing}_us"]
        rep = (o.get(f"{timing}_repeat_us", 0) / r[f"{timing}_repeat_us"]) if r.get(f"{timing}_repeat_us") else None
        modelled = o["datasheet_us"] / r["datasheet_us"]
        entry = {"pair": f"{m['name']}{m['dims'] or ''} -> .{m['target']}", "measured": measured, "repeat": rep,
                 "modelled": modelled, "kernels": [o.get("kernels_run"), r.get("kernels_run")]}
        if all(abs(x - 1) > threshold and (x - 1) * (measured - 1) > 0 for x in (measured, rep) if x is not None):
            told += 1
            if abs(modelled - 1) <= SAME:
                entry["model"] = "no difference"
            else:
                entry["model"] = "agree" if (modelled - 1) * (measured - 1) > 0 else "opposite"
            verdicts[entry["model"]] += 1
        out.append(entry)
    return {"pairs": out, "told_apart": told, "verdicts": verdicts}


def heldout(rows, sheet):
    """Constants fitted on the whole models of half the zoo's models (by a
    CRC-32 of the model's name; its optimized forms and bound dims go with
    it), each half's pricing the other's: plain and saturating rooflines."""
    base = [PAIR.sub(r"model:\g<name>", r["id"]).split("@")[0] for r in rows.rows]
    half = np.array([zlib.crc32(b.encode()) % 2 for b in base])
    got = {}
    for name, pred in zip(("refitted", "refitted saturating", "refitted latency"), two_fold(rows, half, sheet)):
        got[f"{name}, held out"] = scores(pred, rows.measured)
        for fold in (0, 1):  # each half scored on its own: fitted on the other
            got[f"{name}, held out, half {fold}"] = scores(pred[half == fold], rows.measured[half == fold])
    return got


def figures(rows, spec, fitted, threshold):
    got = {}
    for timing in ("graph", "eager"):
        whole = Rows(rows, timing)
        apart = Rows(unfused(rows), timing)
        prices = {}
        for name, c in constants(spec, fitted, timing).items():
            prices[name] = scores(whole.predict(c), whole.measured)
            prices[f"{name}, unfused"] = scores(apart.predict(c), apart.measured)
        prices.update(heldout(whole, constants(spec, fitted, timing)["spec"]))
        rep = np.array([r.get(f"{timing}_repeat_us", 0) * 1e-6 for r in whole.rows])
        if (rep > 0).all():
            prices["repeat"] = scores(rep, whole.measured)
        got[timing] = {"models": len(whole.rows), "prices": prices, **pairs(rows, timing, threshold)}
    return sig(got, 4)


def show(got):
    for timing, g in got.items():
        print(f"{timing}: {g['models']} models, MAPE / tau-b of each price against the time")
        for name, s in g["prices"].items():
            print(f"  {name:30s} {s['mape_pct']:7.1f}% / {s['tau']:.3f}")
        v = g["verdicts"]
        print(f"  pairs: the runtime tells {g['told_apart']} apart (by more than the threshold, both runs the same "
              f"way); the model: agrees on {v['agree']}, the opposite on {v['opposite']}, no difference on "
              f"{v['no difference']}")
        print(f"  {'pair':34s} {'measured':>9s} {'repeat':>7s} {'modelled':>9s}  kernels  model")
        for p in g["pairs"]:
            rep = f"{p['repeat']:.3f}" if p["repeat"] is not None else "-"
            print(f"  {p['pair']:34s} {p['measured']:8.3f}x {rep:>7s} {p['modelled']:8.3f}x  "
                  f"{p['kernels'][0]}->{p['kernels'][1]}  {p.get('model', '')}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data")
    p.add_argument("--fit", default=os.path.join(HERE, "h200_fit.json"))
    p.add_argument("--spec", default=os.path.join(HERE, "../../targets/specs/h200.json"))
    p.add_argument("--threshold", type=float, default=0.03)
    p.add_argument("--write")
    p.add_argument("--check")
    a = p.parse_args()
    rows = [r for r in read_jsonl(a.data) if not r.get("id", "").startswith("meta")]
    with open(a.spec) as f:
        spec = json.load(f)
    with open(a.fit) as f:
        fitted = json.load(f)
    worst = price_drift(rows, spec)
    if worst > 1e-6:
        print(f"models: priced with {a.spec}'s constants the terms differ from the data's datasheet_us (refinery "
              f"cost) by up to {worst:.2e}: rerun bench/gpu/terms.py --kind model and fit.py join", file=sys.stderr)
        return 2
    got = figures(rows, spec, fitted, a.threshold)
    if store_or_check(got, a.write, a.check, "models"):
        return 1
    show(got)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Fits the gpu model's constants to micro-model timings on a GPU and says
how well the spec's and the fitted constants rank and price the kernels
(docs/targets.md, "Measured on a GPU").

    python3 bench/gpu/fit.py join TIMINGS.jsonl TERMS.jsonl DATA.jsonl [--repeat TIMINGS2.jsonl] [--variant V]
                                  [--append]
    python3 bench/gpu/fit.py fit DATA.jsonl [--timing graph|eager]... [--spec SPEC] [--write FIGURES.json]
                                 [--check FIGURES.json]

`join` merges bench/gpu/time_kernels.py's timings with bench/gpu/terms.py's
terms by id into the dataset (one line a micro-model: id, ops, models,
variant, flops, bytes, datasheet_us, nodes, the timings), after the timing
run's meta record (id "meta:VARIANT"); --append adds another set of
micro-models (another --variants of refinery measure) to it. A dataset given
as TIMINGS is priced again with new terms (its rows keep their variant and
timings): what a change of the gpu model or the spec needs.

`fit` prices each micro-model as the gpu model does, from its nodes' terms
(fm, fv: FLOPs at the tf32 and the f32 peak; bytes; launches; family): a
node that launches costs `max(fm / Pt + fv / Pf, bytes / bw) + (launch +
latency[family]) * launches`, a fused one `fv / Pf + bytes / bw`, and the
micro-model its graph's launch once. The fit: least squares on the log of the
time (each kernel weighs the same, whatever its length) over the micro-models
whose every node launches (the model fuses elementwise ops into their
producer; eager PyTorch and its CUDA graphs run them as kernels of their own,
so a micro-model holding one is reported, not fitted), by a pattern search
on the constants' logarithms from the datasheet's, steps halving from a
factor 10 to 1.001: deterministic, numpy alone. Reported per kernel class
(from the terms: matrix, movement, reduction, fused), per variant and per op
family (the first op, 20 kernels or more): MAPE and Kendall's tau-b of the
spec's constants (`spec`: what refinery prices), of the latency-free roofline
with its four constants fitted (`fitted`), and of constants
fitted on the micro-models of half the zoo's models on those of the other
half (`heldout`: models never seen; a micro-model goes with the first of
the models it comes from, halves by a CRC-32 of its name). The
same for the saturating roofline (`saturating`, `saturating_heldout`): the
roofline with two more constants, a kernel of F FLOPs running at
`peak * F / (F + flops_half)` and one of B bytes at `bw * B / (B +
bytes_half)` (the cpu model's GEMM efficiency, in the gpu model's terms): what
the timings say a size-dependent efficiency would bring. And for the gpu
model's own form (`latency`, `latency_heldout`): the datasheet's rates kept,
the in-graph launch, the graph's launch and the conv, matmul and reduction
families' latencies fitted (movement's left at 0: see LATENCY_PARAMS), the
constants `h200.json` holds.

First, the terms priced with --spec's constants (default h200.json) must
give each micro-model's datasheet_us (refinery cost's price) to 1e-6: else
the spec or the model changed since the dataset was made (exit 2). --write
stores the figures; --check recomputes them and compares with a stored file
(exit 1 on a difference beyond 1e-6 relative), as the ctest gpu_fit does on
the committed dataset. With --repeat data, `repeat` scores the second run
against the first (the timings' own noise).
"""
import argparse
import json
import math
import os
import sys
import zlib

try:
    import numpy as np
except ImportError:
    sys.exit("fit.py needs numpy: scripts/setup.sh installs python3-numpy")

PARAMS = ("tf32_flops", "f32_flops", "bandwidth", "launch_s")
# The saturating roofline: a kernel of F FLOPs runs at peak * F / (F + flops_half), one of B bytes at
# bandwidth * B / (B + bytes_half), i.e. (F + flops_half) / peak and (B + bytes_half) / bandwidth.
HALVES = ("flops_half", "bytes_half")
HALF_START = {"flops_half": 1e6, "bytes_half": 1e5}
HALF_BOUNDS = (0.0, 12.0)  # log10 of a half size, absolute
# The latency roofline, the gpu model's (targets/models.cpp): a kernel pays its launch and its family's latency
# (kernel_latency_s; terms.py names each kernel's family), the graph its own launch once (graph_launch_s). Fitted
# with the datasheet's rates from LATENCY_START; the latencies and the graph launch within TIME_BOUNDS. Every
# kernel has a family, so the launch and the four latencies are one constant too many: movement's is left at 0
# (a copy's kernel is its launch and its bytes), and the launch is what it pays.
FAMILIES = ("conv", "matmul", "reduction", "movement")  # targets/workload.h, kKernelFamilies
LATENCIES = ("graph_launch_s",) + tuple(f"latency_{f}" for f in FAMILIES if f != "movement")
# A family's share of the peak its kernels reach (kernel_efficiency; 1 where the spec names none): the convolutions'
# (cudnn, NCHW f32 with tf32) fitted, the only family whose FLOPs the timings see at a rate of their own.
EFFICIENCIES = ("efficiency_conv",)
EFFICIENCY_BOUNDS = (-3.0, 0.0)  # log10 of a share of the peak
LATENCY_PARAMS = ("launch_s",) + LATENCIES + EFFICIENCIES
LATENCY_START = dict({k: 1e-6 for k in LATENCY_PARAMS if k not in EFFICIENCIES}, **{k: 1.0 for k in EFFICIENCIES})
TIME_BOUNDS = (-9.0, -3.0)  # log10 seconds, absolute


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def join(a):
    timings = read_jsonl(a.timings)
    terms = {t["id"]: t for t in read_jsonl(a.terms)}
    repeat = {r["id"]: r for r in read_jsonl(a.repeat)} if a.repeat else {}
    n = 0
    present = {r["id"] for r in read_jsonl(a.data)} if a.append and os.path.exists(a.data) else set()
    with open(a.data, "a" if a.append else "w") as out:
        for row in timings:
            if row.get("id", "").startswith("meta"):  # a timing run's, or a dataset's (re-priced: its own variant)
                variant = row.get("variant", a.variant)
                out.write(json.dumps(dict(row, id=f"meta:{variant}", variant=variant)) + "\n")
                continue
            t = terms.get(row["id"])
            if t is None or row["id"] in present:
                continue
            merged = dict(row, variant=row.get("variant", a.variant))
            merged["flops"] = sum(x["fm"] + x["fv"] for x in t["nodes"])
            merged["bytes"] = sum(x["bytes"] for x in t["nodes"])
            merged["datasheet_us"] = t["datasheet_us"]
            merged["nodes"] = t["nodes"]
            for k in ("eager_us", "graph_us"):
                if k in repeat.get(row["id"], {}):
                    merged[k.replace("_us", "_repeat_us")] = repeat[row["id"]][k]
            out.write(json.dumps(merged, separators=(",", ":")) + "\n")
            n += 1
    print(f"fit: joined {n} micro-models into {a.data}", file=sys.stderr)
    return 0


def kernel_class(nodes):
    if all(x["launches"] == 0 for x in nodes):
        return "fused"
    if any(x["launches"] == 0 for x in nodes):
        return "kernel+fused"
    if any(x["fm"] > 0 for x in nodes):
        return "matrix"
    return "reduction" if any(x["fv"] > 0 for x in nodes) else "movement"


class Rows:
    """The micro-models with a timing, their nodes' terms as flat arrays."""

    def __init__(self, rows, timing):
        key = f"{timing}_us"
        self.rows = [r for r in rows if r.get(key) and r.get("nodes") and r[key] > 0]
        self.measured = np.array([r[key] * 1e-6 for r in self.rows])
        self.classes = [kernel_class(r["nodes"]) for r in self.rows]
        owner, cols, family = [], {k: [] for k in ("fm", "fv", "bytes", "launches")}, []
        for i, r in enumerate(self.rows):
            for x in r["nodes"]:
                owner.append(i)
                family.append(x.get("family", ""))
                for k in cols:
                    cols[k].append(x[k])
        self.owner = np.array(owner, dtype=np.int64)
        self.cols = {k: np.array(v, dtype=np.float64) for k, v in cols.items()}
        self.family = np.array(family, dtype=object)

    def predict(self, c):
        t = self.cols
        launched = t["launches"] > 0  # a fused op streams through its producer: no size of its own
        hf, hb = (c.get(k, 0.0) * launched for k in HALVES)
        share = np.ones(len(t["fm"]))
        for f in FAMILIES:
            share = np.where(self.family == f, c.get(f"efficiency_{f}", 1.0), share)
        flops = (t["fm"] + hf * (t["fm"] > 0)) / c["tf32_flops"] + (t["fv"] + hf * (t["fv"] > 0)) / c["f32_flops"]
        flops = flops / share
        memory = (t["bytes"] + hb * (t["bytes"] > 0)) / c["bandwidth"]
        fixed = c["launch_s"] + sum(c.get(f"latency_{f}", 0.0) * (self.family == f) for f in FAMILIES)
        node = np.where(t["launches"] > 0, np.maximum(flops, memory) + fixed * t["launches"], flops + memory)
        return np.bincount(self.owner, weights=node, minlength=len(self.rows)) + c.get("graph_launch_s", 0.0)

    def subset(self, keep):
        out = Rows.__new__(Rows)
        idx = [i for i in range(len(self.rows)) if keep[i]]
        out.rows = [self.rows[i] for i in idx]
        out.measured = self.measured[idx]
        out.classes = [self.classes[i] for i in idx]
        remap = -np.ones(len(self.rows), dtype=np.int64)
        remap[idx] = np.arange(len(idx))
        nodes = remap[self.owner] >= 0
        out.owner = remap[self.owner][nodes]
        out.cols = {k: v[nodes] for k, v in self.cols.items()}
        out.family = self.family[nodes]
        return out


def log_loss(rows, c):
    return float(np.sum((np.log(rows.predict(c)) - np.log(rows.measured)) ** 2))


BOUNDS = (-3.0, 1.0)  # log10 of a fitted constant over the datasheet's: 1/1000 to 10 times it


def fit_constants(rows, start, params=PARAMS):
    """Pattern search on the constants' log10, from `start`: each round tries
    every constant times and divided by the step, keeps the best move, and
    halves the step when none helps. A constant stays within BOUNDS of its
    start: one the timings do not determine (a term that never binds) ends
    at a bound, and `at_bound` names it."""
    absolute = {**{k: HALF_BOUNDS for k in HALVES}, **{k: TIME_BOUNDS for k in LATENCIES},
                **{k: EFFICIENCY_BOUNDS for k in EFFICIENCIES}}
    bounds = {k: absolute.get(k) or tuple(math.log10(start[k]) + b for b in BOUNDS) for k in params}
    lo, hi = {k: b[0] for k, b in bounds.items()}, {k: b[1] for k, b in bounds.items()}
    logc = {k: math.log10(start[k]) for k in params}
    as_c = lambda lc: dict(start, **{k: 10 ** v for k, v in lc.items()})  # noqa: E731  (the rest of start: fixed)
    best = log_loss(rows, as_c(logc))
    step = 1.0
    while step > math.log10(1.001):
        moved = None
        for k in params:
            for d in (step, -step):
                trial = dict(logc, **{k: min(hi[k], max(lo[k], logc[k] + d))})
                loss = log_loss(rows, as_c(trial))
                if loss < best - 1e-12:
                    best, moved = loss, trial
        if moved is None:
            step /= 2
        else:
            logc = moved
    out = as_c(logc)
    out["at_bound"] = [k for k in params if abs(logc[k] - lo[k]) < 1e-9 or abs(logc[k] - hi[k]) < 1e-9]
    return out


def kendall_tau_b(x, y):
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    num = float(np.sum(np.triu(dx * dy, 1)))
    nx = float(np.sum(np.triu(dx != 0, 1)))
    ny = float(np.sum(np.triu(dy != 0, 1)))
    return num / math.sqrt(nx * ny) if nx and ny else float("nan")


def scores(pred, measured):
    if len(measured) < 2:
        return {"mape_pct": float("nan"), "tau": float("nan")}
    return {"mape_pct": float(np.mean(np.abs(pred - measured) / measured) * 100),
            "tau": kendall_tau_b(pred, measured)}


def sig(x, digits=6):
    if isinstance(x, dict):
        return {k: sig(v, digits) for k, v in x.items()}
    if isinstance(x, float) and math.isfinite(x) and x != 0:
        return float(f"{x:.{digits}g}")
    return x


def spec_constants(spec):
    """The gpu model's constants as the spec gives them: the roofline's and the latencies."""
    latency, efficiency = spec.get("kernel_latency_s", {}), spec.get("kernel_efficiency", {})
    return {"tf32_flops": spec["peak_flops"]["tf32"], "f32_flops": spec["peak_flops"]["f32"],
            "bandwidth": spec["memory_bandwidth"], "launch_s": spec["kernel_launch_s"],
            "graph_launch_s": spec.get("graph_launch_s", 0.0),
            **{f"latency_{f}": latency.get(f, 0.0) for f in FAMILIES},
            **{f"efficiency_{f}": efficiency.get(f, 1.0) for f in FAMILIES}}


def price_drift(rows_all, spec):
    """The largest relative difference between the rows' terms priced with
    the spec's constants and their datasheet_us (refinery cost's price when
    the data was made): above 1e-6, the spec or the gpu model changed."""
    rows = Rows(rows_all, "graph")
    priced = np.array([r["datasheet_us"] * 1e-6 for r in rows.rows])
    return float(np.max(np.abs(rows.predict(spec_constants(spec)) - priced) / np.maximum(priced, 1e-12)))


def fit_latency(rows, sheet):
    """The latency roofline's constants fitted, the datasheet's rates kept."""
    return fit_constants(rows, dict(roofline(sheet), **LATENCY_START), LATENCY_PARAMS)


def roofline(sheet):
    """The datasheet's rates alone (a fitted latency roofline keeps them)."""
    return {k: v for k, v in sheet.items() if k in PARAMS}


def two_fold(rows, half, sheet):
    """Held-out predictions: the plain, the saturating and the latency
    roofline fitted (from the datasheet's constants) on the rows of one half
    (`half`: 0 or 1 per row), each half's constants pricing the other half's
    rows."""
    half = np.array(half)
    plain, sat, lat = (np.zeros(len(rows.rows)) for _ in range(3))
    for fold in (0, 1):
        train, mask = rows.subset(half != fold), half == fold
        plain[mask] = rows.predict(fit_constants(train, roofline(sheet)))[mask]
        sat[mask] = rows.predict(fit_constants(train, dict(roofline(sheet), **HALF_START), PARAMS + HALVES))[mask]
        lat[mask] = rows.predict(fit_latency(train, sheet))[mask]
    return plain, sat, lat


def figures(rows_all, meta, timing, spec):
    sheet = spec_constants(spec)
    rows = Rows(rows_all, timing)
    fit_set = rows.subset([c != "fused" and c != "kernel+fused" for c in rows.classes])
    sat_start = dict(roofline(sheet), **HALF_START)
    fitted = fit_constants(fit_set, roofline(sheet))
    saturating = fit_constants(fit_set, sat_start, PARAMS + HALVES)
    latency = fit_latency(fit_set, sheet)
    # Two halves of the zoo's models (a micro-model goes with the first model it comes from): each half's
    # constants price the other half's micro-models, models they never saw.
    half = [zlib.crc32(min(r.get("models") or [r["id"]]).encode()) % 2 for r in fit_set.rows]
    heldout, sat_heldout, lat_heldout = two_fold(fit_set, half, sheet)
    fused = ("fused", "kernel+fused")
    launching = np.array([c not in fused for c in rows.classes])
    groups = [(c, np.array([x == c for x in rows.classes])) for c in sorted(set(rows.classes))]
    groups.append(("kernels", launching))  # the fitted set
    for v in sorted({r.get("variant", "") for r in rows.rows}):
        groups.append((f"kernels, variant {v}", launching & np.array([r.get("variant", "") == v for r in rows.rows])))
    heads = np.array([r["ops"][0] if r.get("ops") else "" for r in rows.rows])
    for op in sorted(set(heads[launching])):  # op families: the kernels whose first op is this one
        m = launching & (heads == op)
        if m.sum() >= 20:
            groups.append((f"kernels, op {op}", m))
    sheet_pred, fit_pred, sat_pred = rows.predict(sheet), rows.predict(fitted), rows.predict(saturating)
    lat_pred = rows.predict(latency)
    rep = np.array([r.get(f"{timing}_repeat_us", 0) * 1e-6 for r in rows.rows])
    in_fit = np.flatnonzero(launching)  # row index of each fit_set row
    by_group = {}
    for name, m in groups:
        if not m.any():
            continue
        entry = {"n": int(m.sum()), "spec": scores(sheet_pred[m], rows.measured[m]),
                 "fitted": scores(fit_pred[m], rows.measured[m]), "latency": scores(lat_pred[m], rows.measured[m])}
        if not (m & ~launching).any():
            entry["heldout"] = scores(heldout[m[in_fit]], fit_set.measured[m[in_fit]])
            entry["saturating"] = scores(sat_pred[m], rows.measured[m])
            entry["saturating_heldout"] = scores(sat_heldout[m[in_fit]], fit_set.measured[m[in_fit]])
            entry["latency_heldout"] = scores(lat_heldout[m[in_fit]], fit_set.measured[m[in_fit]])
        if (rep[m] > 0).all():
            entry["repeat"] = scores(rep[m], rows.measured[m])  # the second run against the first: the noise
        by_group[name] = entry
    # Each half of the zoo's models scored on its own (fitted on the other half), over the kernels fitted.
    h = np.array(half)
    by_group["kernels"]["heldout_by_half"] = {
        f"half {fold}": {k: scores(p[h == fold], fit_set.measured[h == fold])
                         for k, p in (("heldout", heldout), ("saturating_heldout", sat_heldout),
                                      ("latency_heldout", lat_heldout))} for fold in (0, 1)}
    return sig({"timing": timing, "gpu": meta.get("gpu"), "torch": meta.get("torch"), "date": meta.get("date"),
                "micro_models": len(rows_all), "timed": len(rows.rows), "fitted_on": len(fit_set.rows),
                "spec": sheet, "fitted": fitted, "saturating": saturating, "latency": latency, "by_group": by_group})


def differs(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}{k}: only in one"
            d = differs(a[k], b[k], f"{path}{k}.")
            if d:
                return d
        return None
    if isinstance(a, float) and isinstance(b, (int, float)):
        if math.isnan(a) and math.isnan(b):
            return None
        return None if abs(a - b) <= 1e-6 * max(abs(a), abs(b)) else f"{path[:-1]}: {a} against {b}"
    return None if a == b else f"{path[:-1]}: {a} against {b}"


def store_or_check(got, write, check, who):
    """Writes the figures to `write` and compares them with `check` (stored
    figures, to 1e-6 relative); True when they differ."""
    if write:
        with open(write, "w") as f:
            f.write(json.dumps(got, indent=1) + "\n")
    if check:
        with open(check) as f:
            d = differs(got, json.load(f))
        if d:
            print(f"{who}: the figures differ from {check}: {d}", file=sys.stderr)
            return True
        print(f"{who}: the figures agree with {check}", file=sys.stderr)
    return False


def fit(a):
    rows_all = read_jsonl(a.data)
    meta = next((r for r in rows_all if r.get("id", "").startswith("meta")), {})
    rows_all = [r for r in rows_all if not r.get("id", "").startswith("meta")]
    with open(a.spec) as f:
        spec = json.load(f)
    worst = price_drift(rows_all, spec)
    if worst > 1e-6:
        print(f"fit: the terms priced with {a.spec}'s constants differ from the dataset's datasheet_us (refinery cost) "
              f"by up to {worst:.2e}: the spec or the gpu model changed since the dataset was made; rerun "
              "bench/gpu/terms.py and fit.py join", file=sys.stderr)
        return 2
    got = {t: figures(rows_all, meta, t, spec) for t in a.timing}
    if store_or_check(got, a.write, a.check, "fit"):
        return 1
    print(json.dumps(got, indent=1))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    j = sub.add_parser("join")
    j.add_argument("timings")
    j.add_argument("terms")
    j.add_argument("data")
    j.add_argument("--repeat", help="a second timing run of the same micro-models: its times as *_repeat_us")
    j.add_argument("--variant", default="", help="the measure --variants these micro-models were cut with")
    j.add_argument("--append", action="store_true", help="add to DATA, leaving out the ids already there")
    f = sub.add_parser("fit")
    f.add_argument("data")
    f.add_argument("--timing", choices=("graph", "eager"), action="append",
                   help="which timings to fit (graph replay, eager; default both)")
    f.add_argument("--spec", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "../../targets/specs/h200.json"))
    f.add_argument("--write")
    f.add_argument("--check")
    a = p.parse_args()
    if a.cmd == "fit" and not a.timing:
        a.timing = ["graph", "eager"]
    return join(a) if a.cmd == "join" else fit(a)


if __name__ == "__main__":
    sys.exit(main())

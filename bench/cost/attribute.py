#!/usr/bin/env python3
"""Where the learned CPU model's held-out whole-model error comes from
(issue 12; docs/targets.md, "The learned CPU model").

    bench/cost/attribute.py A.json B.json ...   # bench_cost DATASET ... --json A.json, one per dataset

Each file is bench_cost's leave-one-family-out over one dataset (the same
models timed at another time). Per model: the timings and held-out
predictions of every dataset, the timings' repeat error (mean |t_d / t - 1|,
t their geometric mean), and the systematic error, the geometric mean of
the predictions against that of the timings: what stays when the timing
noise and the retraining's averages out. Per dataset beside its MAPE, the
noise floor: the MAPE of the other datasets' timings (their geometric
mean) taken as the prediction, what a model right on average would score. A model's error is the sum over
its ops of the learned price less the in-context share of the timed run
(bench_cost's breakdown), less the run no node was given ("unshared":
kernels matching no node); the op carrying the most of it is named.
Then the same per op over all models: the mean signed contribution in
points of error, and its mean absolute one.
"""
import json
import math
import sys
from collections import defaultdict


def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def kind(name):
    return "copies" if "@" in name else "extractions" if "." in name else "zoo"


def main(paths):
    runs = [json.load(open(p)) for p in paths]
    names = [m["model"] for m in runs[0]["models"]]
    by = [{m["model"]: m for m in r["models"]} for r in runs]
    names = [n for n in names if all(n in b for b in by)]
    print("datasets: " + ", ".join(f"{chr(65 + i)} = {r['dataset']}" for i, r in enumerate(runs)))
    head = " ".join(f"{'t' + chr(65 + i):>8}" for i in range(len(runs)))
    errs = " ".join(f"{'e' + chr(65 + i):>6}" for i in range(len(runs)))
    print(f"{'model':<24} {head} {errs} {'repeat':>7} {'system':>7}  op carrying the mean error (points)")
    rows = {}
    op_signed = defaultdict(lambda: defaultdict(float))  # kind -> op -> sum of mean signed points
    op_abs = defaultdict(lambda: defaultdict(float))
    for n in names:
        ms = [b[n] for b in by]
        t = [m["timed_ms"] for m in ms]
        p = [m["learned_ms"] for m in ms]
        e = [100 * (pi / ti - 1) for pi, ti in zip(p, t)]
        tg = gmean(t)
        repeat = 100 * sum(abs(ti / tg - 1) for ti in t) / len(t)
        system = 100 * (gmean(p) / tg - 1)
        contrib = defaultdict(float)  # op -> mean over datasets of (learned - context) / timed, points
        for m in ms:
            for op, v in m["ops"].items():
                contrib[op] += 100 * (v["learned_ms"] - v["context_ms"]) / m["timed_ms"] / len(ms)
            contrib["(unshared)"] -= 100 * (m["run_ms"] - m["shared_ms"]) / m["timed_ms"] / len(ms)
        top = sorted(contrib.items(), key=lambda kv: -abs(kv[1]))[:3]
        k = kind(n)
        for op, c in contrib.items():
            op_signed[k][op] += c
            op_abs[k][op] += abs(c)
        # The timings of the other datasets as the prediction: what a model
        # right on average would score against this dataset's timing.
        floor = [100 * abs(gmean(t[:i] + t[i + 1:]) / t[i] - 1) for i in range(len(t))] if len(t) > 1 else [0]
        rows[n] = (t, e, repeat, system, floor)
        print(f"{n:<24} " + " ".join(f"{x:>8.3f}" for x in t) + " " + " ".join(f"{x:>+6.1f}" for x in e) +
              f" {repeat:>6.1f}% {system:>+6.1f}%  " + ", ".join(f"{op} {c:+.1f}" for op, c in top))
    for k in ("zoo", "copies", "extractions"):
        ns = [n for n in names if kind(n) == k]
        if not ns:
            continue
        print(f"\n{k}: {len(ns)} models")
        for i in range(len(runs)):
            print(f"  MAPE on {chr(65 + i)}: {sum(abs(rows[n][1][i]) for n in ns) / len(ns):.1f}%; the other datasets' "
                  f"timings as the prediction: {sum(rows[n][4][i] for n in ns) / len(ns):.1f}%")
        system = sum(abs(rows[n][3]) for n in ns) / len(ns)
        repeat = sum(rows[n][2] for n in ns) / len(ns)
        print(f"  systematic (mean predictions against mean timings): {system:.1f}%; the timings' repeat error "
              f"{repeat:.1f}%")
        print("  per op, summed over the models and divided by their count (points of error: signed, absolute):")
        for op, c in sorted(op_abs[k].items(), key=lambda kv: -kv[1])[:10]:
            print(f"    {op:<22} {op_signed[k][op] / len(ns):>+7.2f} {c / len(ns):>7.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: bench/cost/attribute.py BENCH_COST.json ...")
    main(sys.argv[1:])

#!/usr/bin/python3
"""Checks that `refinery optimize --time-limit T --node-limit N` holds on every
zoo model (issue #11 item 9): each model in BUILD/zoo (whatever `zoo_small`
and `zoo` exported there) for each target, as one `refinery batch` (its
summary has each run's exit status and wall time; its reports the rest).

    bench/zoo/check_limits.py BUILD_DIR [--time-limit 2] [--node-limit 2000]
        [--targets cpu,gpu,tpu] [--models a,b] [--time-allowance 0.5]
        [--node-allowance 4096] [--out DIR] [--jobs 1] [--zoo DIR]

What the limits cover (docs/optimize.md, "What the limits cover"): `--time-limit` bounds
saturation (the report's `seconds.saturate`) and, again, ILP extraction; it
does not bound import, seeding, greedy extraction, rebuilding, folding,
pricing, validation or writing, which the wall time includes and which this
script prints beside it. The Runner checks its limits after each rule's
search, after each rule's application and, while a rule's matches are
applied, every `check_every` (256) matches or every ~10 ms of applying,
whichever comes first (docs/egraph.md), so both limits can be passed by what
happens between two checks: one rule's search, up to 256 matches'
right-hand sides (a few nodes each), one rebuild. The allowances are for
that: a run passes when

    seconds.saturate <= T + time allowance
    saturation.egraph.nodes <= N + node allowance

Exit 0 when every run passes and exits 0, 1 otherwise. Standard library only.
"""
import argparse
import json
import os
import subprocess
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("build")
    p.add_argument("--time-limit", type=float, default=2.0)
    p.add_argument("--node-limit", type=int, default=2000)
    p.add_argument("--targets", default="cpu,gpu,tpu")
    p.add_argument("--models", default="")
    p.add_argument("--time-allowance", type=float, default=0.5)
    p.add_argument("--node-allowance", type=int, default=4096)
    p.add_argument("--out", default="/tmp/refinery-limits")
    p.add_argument("--jobs", type=int, default=1, help="models at once (1: each wall time as on its own)")
    p.add_argument("--zoo", default="", help="the models' folder (default BUILD/zoo)")
    a = p.parse_args()

    zoo = a.zoo or os.path.join(a.build, "zoo")
    refinery = os.path.join(a.build, "cli", "refinery")
    models = a.models.split(",") if a.models else sorted(f[:-5] for f in os.listdir(zoo) if f.endswith(".onnx"))
    targets = a.targets.split(",")
    os.makedirs(a.out, exist_ok=True)
    # One batch (docs/batch.md) runs every model for every target, each in its
    # own `refinery optimize` child; its summary has each job's exit and wall time.
    manifest = os.path.join(a.out, "models.txt")
    with open(manifest, "w") as f:
        f.writelines(os.path.abspath(os.path.join(zoo, m + ".onnx")) + "\n" for m in models)
    cmd = [refinery, "batch", manifest, "-o", a.out, "--target", a.targets, "--jobs", str(a.jobs),
           "--time-limit", str(a.time_limit), "--node-limit", str(a.node_limit), "--progress=plain"]
    if subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode not in (0, 1):
        print("refinery batch failed: " + " ".join(cmd))
        return 1
    with open(os.path.join(a.out, "summary.json")) as f:
        jobs = {j["key"]: j for j in json.load(f)["jobs"]}
    print(f"--time-limit {a.time_limit:g} --node-limit {a.node_limit}: pass when saturate <= "
          f"{a.time_limit + a.time_allowance:g} s and e-graph nodes <= {a.node_limit + a.node_allowance}")
    print(f"{'model':<20} {'target':<6} {'exit':>4} {'stop':<20} {'nodes':>6} {'saturate s':>10} "
          f"{'other s':>8} {'wall s':>7}  verdict")
    failures = 0
    worst_time, worst_nodes = 0.0, 0
    for m in models:
        for target in targets:
            folder = os.path.splitext(os.path.basename(target))[0] if target.endswith(".json") else target
            job = jobs[f"{folder}/{m}.onnx"]
            code, wall = job["exit_code"], job["wall_seconds"]
            if job["status"] != "written" or not job.get("report"):
                failures += 1
                print(f"{m:<20} {target:<6} {code:>4}  FAIL: {job['status']}: {job.get('reason', '')[:200]}")
                continue
            with open(job["report"]) as f:
                rep = json.load(f)
            sat = rep["seconds"].get("saturate", 0.0)
            nodes = rep["saturation"]["egraph"]["nodes"]
            stop = rep["saturation"]["stop_reason"]
            other = rep["seconds"].get("total", wall) - sat
            problems = []
            if sat > a.time_limit + a.time_allowance:
                problems.append(f"saturate {sat:.2f} s > {a.time_limit + a.time_allowance:g}")
            if nodes > a.node_limit + a.node_allowance:
                problems.append(f"nodes {nodes} > {a.node_limit + a.node_allowance}")
            failures += bool(problems)
            worst_time, worst_nodes = max(worst_time, sat - a.time_limit), max(worst_nodes, nodes - a.node_limit)
            print(f"{m:<20} {target:<6} {code:>4} {stop:<20} {nodes:>6} {sat:>10.2f} {other:>8.2f} "
                  f"{wall:>7.2f}  {'; '.join(problems) or 'ok'}")
    print(f"largest overshoot: saturate {worst_time:+.2f} s over the limit, e-graph {worst_nodes:+d} nodes over it")
    print(f"{failures} failing run(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

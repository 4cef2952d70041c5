#!/usr/bin/env python3
"""Times `refinery measure`'s micro-models on a GPU with PyTorch: the data
that bench/gpu/fit.py fits the gpu roofline's constants to (docs/targets.md,
"Measured on a GPU").

    python3 bench/gpu/time_kernels.py PACKED.jsonl OUT.jsonl [--device cuda] [--limit N] [--budget-s S]
            [--warmup 3] [--runs 15] [--min-ms 2] [--max-runs 200] [--no-graph]

PACKED is bench/gpu/pack.py's file. Each micro-model runs through the
interpreter of bench/gpu/onnx_torch.py in f32, with tf32 allowed for matrix
products and convolutions (torch.set_float32_matmul_precision('high'),
cudnn.allow_tf32, as the gpu model prices f32 matrix ops) and cudnn's
autotuner on (cudnn.benchmark: the warm-up runs pick each conv's algorithm).
After --warmup runs it is timed with CUDA events around each forward pass
(at least --runs and --min-ms of timing, at most --max-runs): `eager_us`, the
median, and `eager_mad_us`, the median absolute deviation; this is eager
PyTorch, each op its own kernel launched from Python. Then, unless --no-graph,
the forward pass is captured once as a CUDA graph and replayed in batches (a
batch at least about 1 ms, 9 batches): `graph_us` is the median per replay,
the kernels without Python's launch cost. A micro-model with an op the
interpreter lacks is written with `skipped` (the op), one that fails with
`error`; one whose integer inputs have to be read back from the device is
not captured (`graph_error`); one whose outputs' shapes are not the model's
is an error. One line a micro-model; the first line is
{kind: "meta"} (device, versions, settings). Ids already in OUT are skipped
(resumable); no micro-model is started past --budget-s seconds. A progress
line goes to stderr every 50 micro-models.
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_torch  # noqa: E402


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def mad(xs):
    m = median(xs)
    return median([abs(x - m) for x in xs])


class Clock:
    """Elapsed microseconds of `fn` on the device: CUDA events there, the
    wall clock on a CPU (where the script is tried before a GPU run)."""

    def __init__(self, device):
        self.cuda = device.startswith("cuda")

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def time(self, fn):
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) * 1e3
        t = time.perf_counter()
        fn()
        return (time.perf_counter() - t) * 1e6


def time_eager(clock, forward, a):
    times, total = [], 0.0
    while len(times) < a.max_runs and (len(times) < a.runs or total < a.min_ms * 1e3):
        t = clock.time(forward)
        times.append(t)
        total += t
    return times


def time_graph(forward, eager_us, a):
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # the warm-up on a side stream that capture asks for
        forward()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    with torch.cuda.graph(graph):
        forward()
    torch.cuda.synchronize()
    replays = max(5, min(500, int(1000 / max(eager_us, 1.0))))
    per = []
    for _ in range(9):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(replays):
            graph.replay()
        end.record()
        end.synchronize()
        per.append(start.elapsed_time(end) * 1e3 / replays)
    del graph
    return per, replays


def time_one(entry, clock, a):
    row = {k: entry[k] for k in ("id", "ops", "models", "head") if k in entry}
    try:
        feeds, steps, outputs = onnx_torch.prepare(entry["graph"], a.device)
    except onnx_torch.Unsupported as e:
        row["skipped"] = str(e)
        return row
    row["kernels_run"] = len(steps)
    got = [list(y.shape) for y in onnx_torch.run(feeds, steps, outputs)]
    want = entry["graph"].get("output_shapes", [None] * len(got))
    if any(w is not None and g != w for g, w in zip(got, want)):
        raise ValueError(f"output shapes {got}, the model says {want}")

    def forward():
        return onnx_torch.run(feeds, steps, outputs)

    for _ in range(a.warmup):
        forward()
    clock.sync()
    times = time_eager(clock, forward, a)
    row.update(eager_us=round(median(times), 3), eager_mad_us=round(mad(times), 3), eager_runs=len(times))
    if clock.cuda and not a.no_graph:
        if any(node.host_sync for node, _ in steps):
            row["graph_error"] = "an integer input is read back from the device"
        else:
            try:
                per, replays = time_graph(forward, row["eager_us"], a)
                row.update(graph_us=round(median(per), 3), graph_mad_us=round(mad(per), 3), graph_replays=replays)
            except Exception as e:  # noqa: BLE001 - the eager timing stands; the caller checks the device
                row["graph_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
    return row


def device_ok(device):
    """Whether the device still runs work after a failure (a broken capture can leave it unusable)."""
    try:
        return float(torch.ones(4, device=device).sum().item()) == 4.0
    except Exception:  # noqa: BLE001
        return False


def meta(a):
    m = {"kind": "meta", "torch": torch.__version__, "device": a.device,
         "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
         "settings": {k: getattr(a, k) for k in ("warmup", "runs", "min_ms", "max_runs", "no_graph")}}
    if a.device.startswith("cuda"):
        p = torch.cuda.get_device_properties(0)
        m.update(gpu=p.name, sm_count=p.multi_processor_count, cuda=torch.version.cuda,
                 cudnn=torch.backends.cudnn.version(), memory_bytes=p.total_memory)
    for key, read in (("float32_matmul_precision", torch.get_float32_matmul_precision),
                      ("cudnn_allow_tf32", lambda: bool(torch.backends.cudnn.allow_tf32)),
                      ("cudnn_benchmark", lambda: bool(torch.backends.cudnn.benchmark))):
        try:
            m[key] = read()
        except Exception as e:  # noqa: BLE001 - a setting this torch reads otherwise is recorded as such
            m[key] = f"unread: {e}"[:200]
    return m


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("packed")
    p.add_argument("out")
    p.add_argument("--device", default="cuda")
    p.add_argument("--limit", type=int, default=0, help="time at most this many micro-models (0: all)")
    p.add_argument("--budget-s", type=float, default=0, help="start no micro-model past this many seconds (0: none)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--min-ms", type=float, default=2.0)
    p.add_argument("--max-runs", type=int, default=200)
    p.add_argument("--no-graph", action="store_true")
    a = p.parse_args()
    began = time.monotonic()
    torch.set_float32_matmul_precision("high")
    try:
        torch.backends.cudnn.allow_tf32 = True  # the default; a torch that refuses the legacy flag keeps it
    except Exception as e:  # noqa: BLE001
        print(f"time_kernels: cudnn.allow_tf32 not set: {e}", file=sys.stderr)
    torch.backends.cudnn.benchmark = True
    torch.set_grad_enabled(False)
    clock = Clock(a.device)
    done = set()
    if os.path.exists(a.out):
        with open(a.out) as f:
            done = {json.loads(line).get("id") for line in f if line.strip()}
    counts = {"timed": 0, "skipped": 0, "error": 0, "graph_error": 0}
    with open(a.packed) as f, open(a.out, "a") as out:
        if "meta" not in done:
            out.write(json.dumps(dict(meta(a), id="meta")) + "\n")
        n = 0
        for line in f:
            entry = json.loads(line)
            if entry["id"] in done:
                continue
            if (a.limit and n >= a.limit) or (a.budget_s and time.monotonic() - began > a.budget_s):
                print(f"time_kernels: stopped after {n} micro-models ({time.monotonic() - began:.0f} s)",
                      file=sys.stderr)
                break
            n += 1
            try:
                row = time_one(entry, clock, a)
            except Exception as e:  # noqa: BLE001 - a failing micro-model is recorded, the run goes on
                row = {k: entry[k] for k in ("id", "ops") if k in entry}
                row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
            if ("error" in row or "graph_error" in row) and not device_ok(a.device):
                row["error"] = row.get("error", "") + "; the device no longer runs work: stopped"
                out.write(json.dumps(row) + "\n")
                print(f"time_kernels: the device failed after {row['id']}: stopped", file=sys.stderr)
                return 3
            for k in ("skipped", "error", "graph_error"):
                counts[k] += k in row
            counts["timed"] += "eager_us" in row
            out.write(json.dumps(row) + "\n")
            out.flush()
            if n % 50 == 0:
                print(f"time_kernels: {n} done, {counts}, {time.monotonic() - began:.0f} s", file=sys.stderr)
    print(f"time_kernels: {counts} in {time.monotonic() - began:.0f} s; wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The GPU's ceilings as PyTorch reaches them, beside the fitted roofline
(docs/targets.md, "Measured on a GPU"): copy bandwidth, f32 matrix rates with
and without tf32, and the cost of one tiny kernel launched eagerly and
replayed in a CUDA graph. One JSON object on stdout.

    python3 bench/gpu/ceilings.py [--gib 2] [--n 8192]

Each figure is the median of 7 timed repeats (CUDA events) after 2 warm-ups.
"""
import argparse
import json
import sys

import torch


def timed_us(fn, repeats=7):
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e3)
    return sorted(times)[len(times) // 2]


def copy_rate(elems):
    """Bytes per second of a device-to-device copy of `elems` floats, read and written."""
    src, dst = torch.empty(elems, device="cuda"), torch.empty(elems, device="cuda")
    return 2 * 4 * elems / (timed_us(lambda: dst.copy_(src)) * 1e-6)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gib", type=float, default=2.0, help="bytes copied, GiB")
    p.add_argument("--n", type=int, default=8192, help="matrix size of the n x n x n product")
    a = p.parse_args()
    torch.set_grad_enabled(False)
    out = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__}
    out["copy_bytes_per_s"] = copy_rate(int(a.gib * 2**30) // 4)
    m = torch.rand(a.n, a.n, device="cuda")
    flops = 2.0 * a.n ** 3
    for precision, key in (("high", "matmul_tf32_flops"), ("highest", "matmul_f32_flops")):
        torch.set_float32_matmul_precision(precision)
        out[key] = flops / (timed_us(lambda: m @ m) * 1e-6)
    torch.set_float32_matmul_precision("high")
    t = torch.ones(1, device="cuda")
    launches = 1000

    def eager():
        for _ in range(launches):
            t.add_(1)
    out["eager_launch_s"] = timed_us(eager) * 1e-6 / launches
    g = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        t.add_(1)
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(g):
        t.add_(1)

    def replay():
        for _ in range(launches):
            g.replay()
    out["graph_replay_s"] = timed_us(replay) * 1e-6 / launches
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

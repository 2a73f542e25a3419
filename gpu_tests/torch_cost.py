"""torch_cost.py — per-collective cost of all_reduce (8 B and 1 MiB) through PyTorch,
for the comparison "DETAIL vs lockstep vs neither".

GROUPS is a comma list of: plain (a NCCL process group made with debug OFF) and detail
(one made after set_debug_level(DETAIL), i.e. wrapped by ProcessGroupWrapper). Both live
in one process and are measured in interleaved rounds (the order alternates every round),
so their ratio is free of process-to-process drift. "lockstep" is the plain group of a
process started under `lockstep run` (preloading is per process, so that one ratio is
across processes; the runner says so).
One sample = host time of all_reduce + torch.cuda.synchronize(). Rank 0 prints one
JSON line per (group, size): median/p5/p95 in us.
Usage (under torchrun): torch_cost.py LABEL GROUPS [ROUNDS=5] [ITERS=200]
"""
import datetime
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist


def main():
    label, groups = sys.argv[1], sys.argv[2].split(",")
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    iters = int(sys.argv[4]) if len(sys.argv) > 4 else 200
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=60), device_id=dev)
    pgs = {}
    for g in groups:
        if g == "detail":
            dist.set_debug_level(dist.DebugLevel.DETAIL)
            pgs[g] = dist.new_group(backend="nccl")
            dist.set_debug_level(dist.DebugLevel.OFF)
        else:
            pgs[g] = dist.new_group(backend="nccl")
    sizes = {"8B": 2, "1MiB": (1 << 20) // 4}
    tensors = {k: torch.ones(n, device=dev) for k, n in sizes.items()}
    samples = {(g, k): [] for g in pgs for k in sizes}
    for g, pg in pgs.items():  # warm-up: connect every group for every size
        for k, t in tensors.items():
            for _ in range(10):
                dist.all_reduce(t, group=pg)
            torch.cuda.synchronize()
    for r in range(rounds):
        order = list(pgs) if r % 2 == 0 else list(reversed(list(pgs)))
        for k, t in tensors.items():
            for g in order:
                pg = pgs[g]
                for _ in range(5):  # untimed: settles the ranks into step
                    dist.all_reduce(t, group=pg)
                torch.cuda.synchronize()
                for _ in range(iters):
                    t0 = time.perf_counter_ns()
                    dist.all_reduce(t, group=pg)
                    torch.cuda.synchronize()
                    samples[(g, k)].append((time.perf_counter_ns() - t0) / 1e3)
    if rank == 0:
        for (g, k), v in samples.items():
            v.sort()
            n = len(v)
            print("@@ " + json.dumps({
                "label": label, "group": g, "size": k, "n": n, "world": world,
                "median_us": statistics.median(v), "p5_us": v[int(0.05 * (n - 1))],
                "p95_us": v[int(0.95 * (n - 1))]}), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())

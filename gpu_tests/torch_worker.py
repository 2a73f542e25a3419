"""torch_worker.py — one rank of the ProcessGroup failure matrix.

Started by torchrun, one process per GPU. Every case first completes one valid
all_reduce (so init and the NVLink path are ruled out), then injects its fault:
  ordered        every rank: broadcast -> all_reduce
  op_mismatch    rank 0 broadcast, the others all_reduce
  size_mismatch  rank 0 all_reduce of 4 elements, the others of 8
  skip           rank 0 skips the collective, the others all_reduce
Each rank prints one JSON line per event ("@@ {...}") with CLOCK_MONOTONIC time, so
the runner can say how long after the divergent call each report came. A rank whose
call returned holds for HOLD seconds (a real job would move on; its peers' watchdog
fires meanwhile) and leaves with os._exit, skipping a teardown that could hang.
Non-goal: measuring anything; see torch_cost.py for that.
"""
import datetime
import json
import os
import re
import sys
import time

import torch
import torch.distributed as dist


def emit(ev, **kw):
    kw.update(ev=ev, rank=int(os.environ.get("RANK", -1)), t=time.monotonic())
    print("@@ " + json.dumps(kw), flush=True)


def pg_seq():
    try:
        return int(dist.distributed_c10d._get_default_group()._get_sequence_number_for_group())
    except Exception:  # not every backend/wrapper exposes it
        return -1


def main():
    case = sys.argv[1]
    timeout_s = float(os.environ.get("GT_PG_TIMEOUT", "6"))
    hold = float(os.environ.get("GT_HOLD", "9"))
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    dev = torch.device("cuda", local)
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=timeout_s), device_id=dev)
    emit("init", world=world, debug=os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF"))

    x = torch.full((1,), float(rank + 1), device=dev)
    dist.all_reduce(x)
    torch.cuda.synchronize()
    emit("warmup_ok", value=x.item(), expect=world * (world + 1) / 2, seq_after=pg_seq())

    op = "all_reduce"
    try:
        if case == "ordered":
            b = torch.full((1,), 10.0, device=dev)
            emit("divergent_call", op="broadcast", count=1, seq_before=pg_seq())
            dist.broadcast(b, src=0)
            dist.all_reduce(b)
            torch.cuda.synchronize()
            emit("returned", value=b.item(), expect=10.0 * world)
        elif case == "op_mismatch":
            t = torch.full((1,), 10.0, device=dev)
            op = "broadcast" if rank == 0 else "all_reduce"
            emit("divergent_call", op=op, count=1, seq_before=pg_seq())
            if rank == 0:
                dist.broadcast(t, src=0)
            else:
                dist.all_reduce(t)
            torch.cuda.synchronize()
            emit("returned", op=op, value=t.item())
        elif case == "size_mismatch":
            n = 4 if rank == 0 else 8
            t = torch.ones(n, device=dev)
            emit("divergent_call", op=op, count=n, seq_before=pg_seq())
            dist.all_reduce(t)
            torch.cuda.synchronize()
            emit("returned", op=op, value=t.sum().item())
        elif case == "skip":
            t = torch.ones(1, device=dev)
            emit("divergent_call", op="skip" if rank == 0 else op, count=1, seq_before=pg_seq())
            if rank != 0:
                dist.all_reduce(t)
                torch.cuda.synchronize()
            emit("returned", op="skip" if rank == 0 else op, value=t.item())
        else:
            emit("bad_case", case=case)
            os._exit(2)
    except Exception as e:  # DETAIL's mismatch report arrives as an exception
        # Keep the line under PIPE_BUF (4 KiB) so the ranks' lines never interleave;
        # the parts that name seq/op/shape/ranks are extracted first.
        msg = str(e)
        keys = re.findall(r"Rank \d+ is running collective|but Rank \d+|SequenceNumber=\d+|"
                          r"OpType=\w+|TensorShape=\[[^\]]*\]|TensorDtypes=\w+", msg)
        differ = msg[msg.find("Collectives differ"):][:300] if "Collectives differ" in msg else ""
        emit("exception", type=type(e).__name__, keys=keys, differ=differ, message=msg[:1500])
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)

    if case == "ordered":
        dist.destroy_process_group()
        emit("clean_exit")
        return 0
    time.sleep(hold)
    emit("hold_over")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())

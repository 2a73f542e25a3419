#!/usr/bin/env python3
"""tests/mpi/check_program.py — a test program under real MPI ranks, with and without lockstep.

passthrough: the program's output (sorted lines) must be identical with and without the
  PMPI wrappers, and every failing call's return code must be recorded as returned.
off:         with LOCKSTEP_MPI=0 the program runs the same and no MPI call is recorded.
completion:  every non-blocking collective in the traces must be marked completed (EXPECT
  of them per rank) and the traces consistent.
usage: check_program.py MODE LOCKSTEP PROGRAM WORKDIR [EXPECT]   (exit 0 pass, 1 fail, 2 usage)
"""
import json
import os
import shutil
import subprocess
import sys

NP = 4
MPIRUN = ["timeout", "-k", "3", "60", os.environ.get("LS_MPIRUN", "mpirun"),
          "--allow-run-as-root", "--oversubscribe", "-np", str(NP)]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, cwd):
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, timeout=90)
    if p.returncode != 0:
        fail(f"exit {p.returncode}: {p.stderr.decode(errors='replace')[-3000:]}")
    return p.stdout.decode()


def records(lockstep, traces, cwd):
    out = run([lockstep, "trace", "export", traces], cwd)
    return [r for t in json.loads(out)["traces"] for r in t["records"]]


def main(argv):
    if len(argv) not in (5, 6) or argv[1] not in ("passthrough", "completion", "off"):
        print(__doc__)
        return 2
    mode, lockstep, prog, work = argv[1:5]
    expect = int(argv[5]) if len(argv) == 6 else 7
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    traces = os.path.join(work, "traces")
    if mode == "off":
        os.environ["LOCKSTEP_MPI"] = "0"
    traced = run([lockstep, "run", "--trace-dir", traces, "--timeout", "20", "--policy", "exit",
                  "--"] + MPIRUN + [prog], work)
    recs = records(lockstep, traces, work)
    if len([f for f in os.listdir(traces) if f.endswith(".lstrace")]) != NP:
        fail(f"expected {NP} traces: {os.listdir(traces)}")
    if mode == "off":
        mpi = [r["api"] for r in recs if r["api"].startswith("MPI_")]
        if mpi:
            fail(f"LOCKSTEP_MPI=0 but MPI calls were recorded: {mpi[:5]}")
        if traced.count("sum ") != NP:
            fail("the program did not run to the end on every rank")
    elif mode == "passthrough":
        plain = run(MPIRUN + [prog], work)
        a, b = sorted(plain.splitlines()), sorted(traced.splitlines())
        print("\n".join(b))
        if a != b:
            fail("output differs with lockstep:\n" + "\n".join(
                f"  plain: {x}\n  traced: {y}" for x, y in zip(a, b) if x != y))
        if "rc=error" not in traced or "sums 6 10 14 18" not in traced:
            fail("the program did not exercise failing and succeeding calls as expected")
        # Each failing call is recorded with MPI's own code, returned.
        want = {"MPI_Bcast": "MPI_ERR_ROOT", "MPI_Iallreduce": "MPI_ERR_OP"}
        for api, rc in want.items():
            got = [r["rc"] for r in recs if r["api"] == api]
            if got.count(rc) != NP:
                fail(f"{api}: recorded rcs {got}, expected {rc} on all {NP} ranks")
        barrier = [r for r in recs if r["api"] == "MPI_Barrier"]
        if len(barrier) != NP or any(r["seq"] is not None for r in barrier):
            fail(f"MPI_Barrier(MPI_COMM_NULL) must be recorded without a sequence: {barrier}")
    else:
        nb = [r for r in recs if "nonblocking" in r["flags"]]
        if len(nb) != NP * expect:
            fail(f"expected {NP * expect} non-blocking collectives, found {len(nb)}")
        left = [(r["api"], r["comm_rank"], r["seq"]) for r in nb if "completed" not in r["flags"]]
        if left:
            fail(f"not marked completed: {left[:10]} ({len(left)} in all)")
        c = subprocess.run([lockstep, "compare", traces], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=60)
        if c.returncode != 0:
            fail("compare: " + c.stdout.decode(errors="replace")[-2000:])
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

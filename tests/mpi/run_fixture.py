#!/usr/bin/env python3
"""tests/mpi/run_fixture.py — one MPI fixture end to end under real Open MPI ranks.

Runs `lockstep run --timeout 3 --policy exit -- mpirun -np N FIXTURE` (N = 4, or the
fixture's RANKS if larger), then `lockstep compare --format=json` on its traces, and
checks what the fixture's `// RUNTIME:` line promises: `consistent`, or the first
divergence's class, seq and ranks. A run that does not end by itself within the bound
fails (and its whole process group is killed), so a hang can never stall the suite.
usage: run_fixture.py LOCKSTEP FIXTURE.c FIXTURE_BIN WORKDIR [--watchdog]
  --watchdog  the run must also be ended by the watchdog (exit 86, a timeout listed)
Exit 0 pass, 1 fail, 2 usage.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

BOUND_S = 45          # the whole mpirun, however it ends
WATCHDOG_EXIT = 86    # liblockstep's policy-exit code


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    if len(args) != 4:
        print(__doc__)
        return 2
    lockstep, src, binary, work = args
    want_watchdog = "--watchdog" in argv
    text = open(src, encoding="utf-8").read()
    m = re.search(r"^// RUNTIME: (.*)$", text, re.M)
    if not m:
        fail(f"{src}: no '// RUNTIME:' line")
    expect = m.group(1).strip()
    r = re.search(r"^// RANKS: (\d+)$", text, re.M)
    np = max(4, int(r.group(1)) if r else 0)

    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    traces = os.path.join(work, "traces")
    cmd = [lockstep, "run", "--trace-dir", traces, "--timeout", "3", "--policy", "exit", "--",
           "timeout", "-k", "3", str(BOUND_S), os.environ.get("LS_MPIRUN", "mpirun"),
           "--allow-run-as-root", "--oversubscribe",
           "-np", str(np), binary]
    print("$ " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True, cwd=work)
    try:
        out, _ = p.communicate(timeout=BOUND_S + 15)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        fail(f"the run did not end within {BOUND_S + 15} s")
    elapsed = time.monotonic() - t0
    log = out.decode(errors="replace")
    print(log[-4000:])
    print(f"run exit {p.returncode} after {elapsed:.1f} s")
    if p.returncode == 124 or p.returncode == 137:
        fail(f"mpirun had to be killed after {BOUND_S} s: the run did not end by itself")

    files = sorted(f for f in os.listdir(traces) if f.endswith(".lstrace")) \
        if os.path.isdir(traces) else []
    if len(files) != np:
        fail(f"expected {np} traces (one per rank, none for mpirun), found {files}")

    c = subprocess.run([lockstep, "compare", "--format=json", traces], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    try:
        report = json.loads(c.stdout)
    except ValueError:
        fail(f"compare printed no JSON (exit {c.returncode}): {c.stderr.decode()[-2000:]}")
    print(json.dumps(report.get("divergences", [])[:2], indent=1)[:3000])

    if expect == "consistent":
        if c.returncode != 0 or report.get("status") != "consistent":
            fail(f"expected consistent, compare says {report.get('status')} (exit {c.returncode})")
        if p.returncode != 0:
            fail(f"a correct program must run cleanly under lockstep; exit {p.returncode}")
    else:
        e = re.match(r"^([a-z-]+) seq=(\d+) ranks=(\d+),(\d+)$", expect)
        if not e:
            fail(f"{src}: malformed RUNTIME line '{expect}'")
        cls, seq, ra, rb = e.group(1), int(e.group(2)), int(e.group(3)), int(e.group(4))
        if c.returncode != 1 or report.get("status") != "divergent":
            fail(f"expected divergent, compare says {report.get('status')} (exit {c.returncode})")
        first = report["divergences"][0]
        got = (first.get("class"), first.get("seq"), sorted(first.get("ranks", [])))
        if got != (cls, seq, sorted([ra, rb])):
            fail(f"first divergence {got}, expected {(cls, seq, sorted([ra, rb]))}")
    if want_watchdog:
        if p.returncode != WATCHDOG_EXIT:
            fail(f"expected the watchdog to end the run (exit {WATCHDOG_EXIT}), got {p.returncode}")
        if "not complete after" not in log and "not returned after" not in log:
            fail("no watchdog report on stderr")
        if not any(d.get("class") == "timeout" for d in report.get("divergences", [])):
            fail("compare lists no timeout")
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

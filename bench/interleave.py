#!/usr/bin/env python3
"""interleave.py — medians of interleaved runs of several shell commands, each against the first.

usage: bench/interleave.py RUNS NAME=COMMAND [NAME=COMMAND ...]
Runs every command RUNS times, alternating their order from round to round (a busy
machine then slows every arm alike), output to /dev/null, and prints per command the
medians of wall time, user and system time, peak RSS and minor page faults (wait4's
rusage of the `sh -c` that runs it), with wall and CPU (user+sys) as ratios to the first
command. A measuring instrument for bench/RESULTS.md, not a test.
Example: bench/interleave.py 21 "clang=clang-19 -fsyntax-only t.c" "lint=build/lockstep lint t.c --"
"""
import os
import statistics
import subprocess
import sys
import time


def main(argv):
    if len(argv) < 3 or not argv[1].isdigit() or any("=" not in a for a in argv[2:]):
        print(__doc__, file=sys.stderr)
        return 2
    runs = int(argv[1])
    arms = [a.split("=", 1) for a in argv[2:]]
    res = {name: [] for name, _ in arms}
    for r in range(runs):
        for name, cmd in (arms if r % 2 == 0 else arms[::-1]):
            t0 = time.perf_counter()
            p = subprocess.Popen(["sh", "-c", cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, _, ru = os.wait4(p.pid, 0)
            res[name].append((time.perf_counter() - t0, ru.ru_utime, ru.ru_stime, ru.ru_maxrss, ru.ru_minflt))
    base = None
    for name, _ in arms:
        med = [statistics.median(x[i] for x in res[name]) for i in range(5)]
        base = base or med
        print("%-10s wall %.3f s (%.2fx)  user %.3f  sys %.3f  cpu %.3f (%.2fx)  rss %d KB  faults %d"
              % (name, med[0], med[0] / max(base[0], 1e-9), med[1], med[2], med[1] + med[2],
                 (med[1] + med[2]) / max(base[1] + base[2], 1e-9), med[3], med[4]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

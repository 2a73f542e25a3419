#!/usr/bin/env python3
"""corpus_time.py — lint's cost on the development corpus against `clang -fsyntax-only`, side by
side, TU by TU. Inputs: bench/realcode.sh's out/ folder (PKG/tus + PKG/flags) and bench/corpus.sh's
OUT (SET/compile_commands.json). For each TU it runs lint on that TU alone (`lint --allow-errors
--format=json FILE -- FLAGS`, or `lint -p SET FILE`) with bench/lint_phase.c preloaded to capture
the exact arguments lint gave libclang, then `clang -fsyntax-only` with those arguments (lint's
-w and, for .cu, its CUDA host-side set included: the same frontend work) in the entry's
directory; the order alternates from TU to TU so that a load change hits both alike. Prints per
set and in all: CPU seconds (user+sys, /usr/bin/time) and their ratio, and the ratio of peak RSS
(median TU and worst TU). CPU time, not wall: the machine is shared. Not a test; the targets
(1.3x time, 1.5x memory) are printed beside the numbers.
Usage: corpus_time.py DIR...   (each a realcode out/ folder or a corpus.sh OUT)
Env: LOCKSTEP (default build/lockstep), CLANG (default clang-19), STEP (every STEP-th TU of each
     set, default 1), TIMEOUT (seconds per run, default 900), SHIM (the built lint_phase.so;
     default: built into a temporary folder)"""
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def die(msg):
    print("corpus_time.py: " + msg, file=sys.stderr)
    sys.exit(2)


def timed(cmd, cwd, timeout, env=None):
    """(cpu seconds, peak RSS KiB, exit status) of cmd, or None if it timed out."""
    try:
        p = subprocess.run(["/usr/bin/time", "-f", "LSTIME %U %S %M"] + cmd, cwd=cwd, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    for line in reversed(p.stderr.splitlines()):
        if line.startswith("LSTIME "):
            u, s, m = line.split()[1:4]
            return float(u) + float(s), int(m), p.returncode
    return None


def tus_of(d, lint):
    """[(set, file, lint command, cwd)] of one input folder."""
    out = []
    for s in sorted(os.listdir(d)):
        sd = os.path.join(d, s)
        if os.path.isfile(os.path.join(sd, "tus")) and os.path.isfile(os.path.join(sd, "flags")):
            flags = shlex.split(open(os.path.join(sd, "flags")).read())
            for l in open(os.path.join(sd, "tus")):
                if "\t" in l:
                    f = l.rstrip("\n").split("\t", 1)[1]
                    out.append((s, f, [lint, "lint", "--allow-errors", "--format=json", f, "--"] + flags,
                                os.path.dirname(f)))
        elif os.path.isfile(os.path.join(sd, "compile_commands.json")):
            try:
                db = json.load(open(os.path.join(sd, "compile_commands.json")))
            except (OSError, ValueError) as e:
                die(f"{sd}/compile_commands.json: {e}")
            for e in db:
                f = os.path.join(e["directory"], e["file"])
                out.append((s, f, [lint, "lint", "--allow-errors", "--format=json", "-p", sd, f], e["directory"]))
    return out


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 else 2
    lint = os.path.abspath(os.environ.get("LOCKSTEP", os.path.join(root, "build", "lockstep")))
    clang = os.environ.get("CLANG", "clang-19")
    step = int(os.environ.get("STEP", "1"))
    timeout = int(os.environ.get("TIMEOUT", "900"))
    tmp = tempfile.mkdtemp(prefix="corpus_time.")
    shim = os.environ.get("SHIM")
    if not shim:
        cl = subprocess.run(["sh", "-c", f"readlink -f $(command -v {shlex.quote(clang)})"],
                            capture_output=True, text=True).stdout.strip()
        inc = os.path.join(os.path.dirname(os.path.dirname(cl)), "include")
        shim = os.path.join(tmp, "lint_phase.so")
        if subprocess.run(["cc", "-O2", "-fPIC", "-shared", "-I" + inc, "-o", shim,
                           os.path.join(root, "bench", "lint_phase.c"), "-ldl"]).returncode:
            die("cannot build the phase shim (bench/lint_phase.c)")
    tus = []
    for d in sys.argv[1:]:
        if not os.path.isdir(d):
            die(f"{d}: not a folder")
        got = tus_of(d, lint)
        if not got:
            die(f"{d}: neither PKG/tus+flags (realcode.sh out/) nor SET/compile_commands.json (corpus.sh OUT)")
        tus += got
    args_out = os.path.join(tmp, "args")
    rows = {}
    for k, (s, f, lcmd, cwd) in enumerate(t for i, t in enumerate(tus) if i % step == 0):
        if os.path.exists(args_out):
            os.unlink(args_out)
        env = dict(os.environ, LOCKSTEP_BENCH_ARGS_OUT=args_out)
        lrun = ["env", "LD_PRELOAD=" + shim] + lcmd
        # An untimed first run captures lint's libclang arguments and warms the page cache
        # for both; then the timed pair, in alternating order.
        w = timed(lrun, cwd, timeout, env)
        args = open(args_out, errors="replace").read().splitlines() if os.path.exists(args_out) else []
        if w is None or w[2] not in (0, 1) or not args:
            print(f"corpus_time.py: {f}: lint {'timed out' if w is None else 'exited %d' % w[2]}"
                  f"{'' if args else ', no libclang arguments captured'}; left out", file=sys.stderr)
            continue
        ccmd = [clang, "-fsyntax-only"] + args[0].split("\x1f")[1:] + [f]
        if k % 2 == 0:
            ra = timed(lrun, cwd, timeout)
            rb = timed(ccmd, cwd, timeout)
        else:
            rb = timed(ccmd, cwd, timeout)
            ra = timed(lrun, cwd, timeout)
        if ra is None or rb is None:
            print(f"corpus_time.py: {f}: a timed run timed out; left out", file=sys.stderr)
            continue
        rows.setdefault(s, []).append((f, ra, rb))

    def line(name, res):
        if not res:
            return f"| {name} | 0 | | | | | |"
        lc = sum(r[1][0] for r in res)
        cc = sum(r[2][0] for r in res)
        mem = [r[1][1] / r[2][1] for r in res if r[2][1]]
        worst = max(res, key=lambda r: r[1][1] / max(r[2][1], 1))
        return (f"| {name} | {len(res)} | {lc:.1f} | {cc:.1f} | **{lc / cc:.2f}x** | "
                f"{statistics.median(mem):.2f}x | {max(mem):.2f}x ({os.path.basename(worst[0])}) |")

    print("| set | TUs | lint CPU s | clang CPU s | time (target 1.3x) | peak RSS, median TU | worst TU (target 1.5x) |")
    print("|---|---:|---:|---:|---:|---:|---|")
    every = []
    for s, res in rows.items():
        print(line(s, res))
        every += res
    print(line("**all**", every))
    return 0


if __name__ == "__main__":
    sys.exit(main())

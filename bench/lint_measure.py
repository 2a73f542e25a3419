#!/usr/bin/env python3
"""lint_measure.py — time `lockstep lint` against `clang -fsyntax-only` on the
same translation units with the same flags and print markdown tables.

Two baselines: *clang* gets the TU's flags plus what lint adds to parse it
(-resource-dir, the CUDA host-side set): the bare parse a user runs, which the
targets are about. *clang -w* gets exactly libclang's arguments, including the
final -w lint adds because it reports no compiler warnings: the same frontend
work, so lint − clang -w is lint's own work (walk, analysis, output).

Runs are interleaved (lint, clang, clang -w, lint+phase shim, then the reverse
order, ...) after one discarded warm-up of each, and medians are reported, because the machine is
shared and noisy. Peak RSS comes from `/usr/bin/time -f %M`. The phase shim
(lint_phase.c, preloaded only into its own runs) splits lint into the libclang
parse and the rest. Called by lint_bench.sh; not a test.
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

CUDA_INC = "/usr/local/cuda/include"
MPI_INC = ["/usr/lib/x86_64-linux-gnu/openmpi/include",
           "/usr/lib/x86_64-linux-gnu/openmpi/include/openmpi"]


def flags_for(path, extra):
    """The flags a user gives lint after `--` (as tests/fixtures.cmake does);
    lint adds its own (.cu: the CUDA host-side set), and clang gets all of
    them, as captured from lint's libclang call (clang -w also lint's -w)."""
    return ["-I" + CUDA_INC] + ["-I" + d for d in MPI_INC] + extra


def count_lines(paths):
    n = 0
    for p in paths:
        with open(p, "rb") as fh:
            n += fh.read().count(b"\n")
    return n


class Runner:
    def __init__(self, a):
        self.a = a
        self.tmp = tempfile.mkdtemp(prefix="lint_bench_")

    def timed(self, cmd, out=None):
        """One run: (wall seconds, peak RSS KiB, cpu seconds, exit code)."""
        tf = os.path.join(self.tmp, "time.txt")
        # --pin: every timed run on one CPU (taskset), so that no arm is moved between CPUs
        pin = ["taskset", "-c", self.a.pin] if self.a.pin else []
        full = ["/usr/bin/time", "-f", "%M %U %S", "-o", tf] + pin + cmd
        sink = open(out, "w") if out else subprocess.DEVNULL
        # Blocking wait4 plus a kill timer: subprocess's own timeout polls with
        # sleeps of up to 50 ms, which would quantize every wall time.
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=sink, stderr=subprocess.STDOUT if out else sink)
        timer = threading.Timer(self.a.timeout, p.kill)
        timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        if out:
            sink.close()
        if os.WIFSIGNALED(status):
            return None
        rc = p.returncode
        with open(tf) as fh:
            last = fh.read().strip().splitlines()[-1].split()
        # CPU from wait4 (microseconds; time(1)'s %U/%S have 10 ms steps): the
        # rusage of time(1) includes the command it waited for.
        return wall, int(last[0]), ru.ru_utime + ru.ru_stime, rc

    def instructions(self, cmd):
        """Instructions executed (valgrind cachegrind, no cache simulation):
        deterministic, so immune to the machine's load. None if unavailable."""
        try:
            p = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                                "--cachegrind-out-file=/dev/null"] + cmd,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, timeout=self.a.timeout * 60)
        except (OSError, subprocess.TimeoutExpired):
            return None
        m = re.search(r"I\s+refs:\s+([\d,]+)", p.stderr)
        return int(m.group(1).replace(",", "")) if m else None

    def lint_cmd(self, files, flags):
        return [self.a.lockstep, "lint"] + self.a.lint_opt + files + ["--"] + flags

    def clang_cmd(self, files, flags):
        return [self.a.clang, "-fsyntax-only"] + flags + files

    def captured_flags(self, files, args_out):
        """The arguments lint gave libclang for `files` (from the shim's log),
        minus the files themselves; None if they differ between the files.
        (The last is the -w lint adds, see analyzer/parse.c ls_tu_parse.)"""
        seen = []
        with open(args_out, errors="replace") as fh:
            for line in fh.read().splitlines():
                f, *args = line.split("\x1f")
                seen.append([x for x in args if x not in files and x != f])
        if not seen or any(x != seen[0] for x in seen):
            return None
        return seen[0]

    def measure(self, name, files, flags, instr=False):
        lint = self.lint_cmd(files, flags)
        phase_out = os.path.join(self.tmp, "phase.txt")
        args_out = os.path.join(self.tmp, "args.txt")
        diag_out = os.path.join(self.tmp, "diag.txt")
        # The shim is preloaded through env(1) after /usr/bin/time, so that
        # only lint (not time itself) carries it.
        plint = ["env", "LD_PRELOAD=" + self.a.phase_shim,
                 "LOCKSTEP_BENCH_PHASE_OUT=" + phase_out] + lint
        res = {"name": name, "files": files, "lines": count_lines(files), "flags": flags,
               "lint": [], "clang": [], "clang_w": [], "phase": [], "error": None}
        # Warm-up (page cache, dynamic loader): discarded, but checked. Lint's
        # warm-up also records the exact libclang arguments (lint adds its own:
        # -resource-dir, and for .cu the CUDA host-side set), which clang then gets.
        for x in (args_out, phase_out):
            if os.path.exists(x):
                os.unlink(x)
        w = self.timed(plint[:1] + ["LOCKSTEP_BENCH_ARGS_OUT=" + args_out] + plint[1:],
                       out=diag_out)
        if w is None:
            res["error"] = "lint timed out (> %ds)" % self.a.timeout
            return res
        with open(diag_out, errors="replace") as fh:
            diag = fh.read()
        # exit 2 for a TU with compile errors only (lint's verdict on an incomplete analysis):
        # still measured, and marked "(parse errors in both)" below when clang fails too
        if w[3] not in (0, 1) and not (w[3] == 2 and re.search(r"^lockstep lint: error: \d+ of \d+ TUs? did not "
                                                               r"compile", diag, re.M)
                                       and "cannot be parsed" not in diag):
            res["error"] = "lint rc=%d: %s" % (w[3], diag[-400:])
            return res
        res["findings"] = len(re.findall(r": warning: .*\[[a-z-]+\]", diag))
        res["tu_errors"] = len(re.findall(r": (?:fatal )?error: ", diag))
        cflags = self.captured_flags(files, args_out) if os.path.exists(args_out) else None
        if cflags is None:
            res["error"] = "could not capture lint's libclang arguments (phase shim not loaded?)"
            return res
        if cflags[-1:] != ["-w"]:
            res["error"] = "lint's libclang arguments do not end in the -w it adds: an older lint?"
            return res
        res["clang_flags"] = cflags[:-1]
        clang = self.clang_cmd(files, cflags[:-1])
        clang_w = self.clang_cmd(files, cflags)
        w = self.timed(clang, out=diag_out)
        if w is not None and w[3] == 1 and res["tu_errors"]:
            # Both fail to parse it the same way: still comparable, but marked.
            res["name"] += " (parse errors in both)"
        elif w is None or w[3] != 0:
            with open(diag_out, errors="replace") as fh:
                res["error"] = "clang -fsyntax-only failed (rc=%s): %s" % (
                    w and w[3], fh.read()[-300:].replace("\n", " "))
            return res
        arms = (("lint", lint), ("clang", clang), ("clang_w", clang_w), ("phase", plint))
        for rnd in range(self.a.runs):
            # the order reversed every other round (as bench/interleave.py does): no arm
            # always runs right after the same one
            for key, cmd in (arms if rnd % 2 == 0 else arms[::-1]):
                if key == "phase" and not self.a.phase_shim:
                    continue
                if key == "phase" and os.path.exists(phase_out):
                    os.unlink(phase_out)
                r = self.timed(cmd)
                if r is None:
                    res["error"] = "%s timed out (> %ds)" % (key, self.a.timeout)
                    return res
                if key == "phase":
                    with open(phase_out) as fh:
                        kv = dict(x.split("=") for x in fh.read().split())
                    r = r + ({k: int(v) for k, v in kv.items()},)
                res[key].append(r)
        if instr:
            res["lint_ir"] = self.instructions(lint)
            res["clang_ir"] = self.instructions(clang)
            res["clang_w_ir"] = self.instructions(clang_w)
        return res


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def summarize(res):
    s = {"name": res["name"], "lines": res["lines"], "error": res["error"],
         "findings": res.get("findings"), "tu_errors": res.get("tu_errors")}
    if res["error"]:
        return s
    s["lint_s"] = med([r[0] for r in res["lint"]])
    s["clang_s"] = med([r[0] for r in res["clang"]])
    s["lint_kib"] = med([r[1] for r in res["lint"]])
    s["clang_kib"] = med([r[1] for r in res["clang"]])
    s["lint_cpu"] = med([r[2] for r in res["lint"]])
    s["clang_cpu"] = med([r[2] for r in res["clang"]])
    s["clang_w_s"] = med([r[0] for r in res["clang_w"]])
    s["time_x"] = s["lint_s"] / s["clang_s"]
    s["time_wx"] = s["lint_s"] / s["clang_w_s"]
    s["cpu_x"] = s["lint_cpu"] / s["clang_cpu"] if s["clang_cpu"] > 0 else float("nan")
    s["lint_ir"], s["clang_ir"] = res.get("lint_ir"), res.get("clang_ir")
    s["ir_x"] = s["lint_ir"] / s["clang_ir"] if s["lint_ir"] and s["clang_ir"] else None
    s["clang_w_ir"] = res.get("clang_w_ir")
    s["ir_wx"] = s["lint_ir"] / s["clang_w_ir"] if s["lint_ir"] and s["clang_w_ir"] else None
    s["mem_x"] = s["lint_kib"] / s["clang_kib"]
    if res["phase"]:
        s["parse_s"] = med([r[4]["parse_ns"] / 1e9 for r in res["phase"]])
        s["rest_s"] = med([(r[4]["process_ns"] - r[4]["parse_ns"] - r[4]["dispose_ns"]) / 1e9
                           for r in res["phase"]])
        s["dispose_s"] = med([r[4]["dispose_ns"] / 1e9 for r in res["phase"]])
        s["visit_s"] = med([r[4].get("visit_ns", 0) / 1e9 for r in res["phase"]])
    return s


def fmt(x, nd=3):
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def verdict(s, tmax, mmax):
    t = "ok" if s["time_x"] <= tmax else "**over**"
    m = "ok" if s["mem_x"] <= mmax else "**over**"
    return f"time {t}, mem {m}"


HDR = ("| input | lines | findings | lint s | clang s | **time ×** | cpu × | instr × | clang -w s "
       "| time × -w | instr × -w | lint MiB | clang MiB | **mem ×** | lint parse s | lint walk s "
       "| lint rest s | verdict |\n"
       "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")


def row(s, a):
    if s["error"]:
        return f"| {s['name']} | {s['lines']} | — | error: {s['error'][:120]} |||||||||||||||"
    return (f"| {s['name']} | {s['lines']} | {s['findings']} | {fmt(s['lint_s'])} | "
            f"{fmt(s['clang_s'])} | **{s['time_x']:.2f}** | {fmt(s.get('cpu_x'), 2)} | "
            f"{fmt(s.get('ir_x'), 2)} | {fmt(s.get('clang_w_s'))} | {fmt(s.get('time_wx'), 2)} | "
            f"{fmt(s.get('ir_wx'), 2)} | {s['lint_kib'] / 1024:.1f} | "
            f"{s['clang_kib'] / 1024:.1f} | **{s['mem_x']:.2f}** | {fmt(s.get('parse_s'))} | "
            f"{fmt(s.get('visit_s'))} | {fmt(s.get('rest_s', 0) - s.get('visit_s', 0))} | "
            f"{verdict(s, a.time_target, a.mem_target)} |")


def growth(pts):
    """Exponent b of d = c * K^b between the smallest and largest K (1 = linear)."""
    pts = [(k, d) for k, d in pts if k > 0 and d and d > 0]
    if len(pts) < 2:
        return None
    (k0, d0), (k1, d1) = pts[0], pts[-1]
    return math.log(d1 / d0) / math.log(k1 / k0)


def linearity(ser):
    """The series tables: time from the phase shim, and, when counted,
    instructions (lint minus clang: the parse is the same frontend, so the
    difference is lint's own work). Δ: minus the K=0 TU (an empty function)."""
    out = []
    ok = [s for s in ser if not s["error"]]
    base = next((s for s in ok if s["k"] == 0), {})
    one = next((s for s in ok if s["k"] == 1), None)
    out.append("\n**Linearity**: one function scaled K× (`lint_gen.py --single K`). *analysis* = "
               "lint's process time outside libclang's parse/dispose (AST walk included), from "
               "the phase shim; Δ = minus the K=0 TU (same program, empty function).\n")
    out.append("| K | lines | findings | lint s | clang -w s | lint − clang -w s | lint parse s "
               "| of it walk s | analysis s | Δ analysis s | Δ / K | Δ(K)/Δ(1) (linear: K) |")
    out.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def d_of(s):
        return s.get("rest_s", float("nan")) - base.get("rest_s", 0.0)

    for s in ser:
        if s["error"]:
            out.append(f"| {s['k']} | {s['lines']} | error: {s['error'][:100]} ||||||||||")
            continue
        d = d_of(s)
        rel = d / d_of(one) if one and s["k"] else float("nan")
        out.append(f"| {s['k']} | {s['lines']} | {s['findings']} | {fmt(s['lint_s'])} | "
                   f"{fmt(s['clang_w_s'])} | {fmt(s['lint_s'] - s['clang_w_s'])} | "
                   f"{fmt(s.get('parse_s'))} | {fmt(s.get('visit_s'))} | {fmt(s.get('rest_s'))} | "
                   f"{fmt(d)} | {fmt(d / s['k'] if s['k'] else float('nan'), 4)} | {fmt(rel, 1)} |")
    e = growth([(s["k"], d_of(s)) for s in ok])
    if e is not None:
        out.append(f"\nGrowth exponent of Δ analysis time, K=1 → K=16: **{e:.2f}** "
                   "(1.0 = linear, 2.0 = quadratic; wall-clock on a shared machine, see the "
                   "instruction counts for a noise-free figure).")
    if any(s.get("lint_ir") for s in ok):
        def own(s):
            return (s["lint_ir"] - s["clang_w_ir"]) if s.get("lint_ir") and s.get("clang_w_ir") else None
        b = own(base) if base else 0
        out.append("\nInstructions (valgrind cachegrind, one run each; deterministic). *own* = "
                   "lint − clang -w (same parser and flags: libclang's parse executes within 0.2% "
                   "of `clang -fsyntax-only` given the same arguments), Δ own = minus K=0:\n")
        out.append("| K | lines | lint Minstr | clang -w Minstr | instr × -w | own Minstr | Δ own Minstr "
                   "| Δ own / K | Δ(K)/Δ(1) (linear: K) |")
        out.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        d1 = (own(one) - b) if one and own(one) is not None else None
        pts = []
        for s in ok:
            o = own(s)
            if o is None:
                continue
            d = o - (b or 0)
            pts.append((s["k"], d))
            out.append(f"| {s['k']} | {s['lines']} | {s['lint_ir'] / 1e6:.0f} | "
                       f"{s['clang_w_ir'] / 1e6:.0f} | {s['lint_ir'] / s['clang_w_ir']:.2f} | "
                       f"{o / 1e6:.0f} | {d / 1e6:.0f} | "
                       f"{fmt(d / 1e6 / s['k'] if s['k'] else float('nan'), 1)} | "
                       f"{fmt(d / d1 if d1 and s['k'] else float('nan'), 1)} |")
        e = growth(pts)
        if e is not None:
            out.append(f"\nGrowth exponent of Δ own instructions, K=1 → K=16: **{e:.2f}**.")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lockstep", required=True)
    ap.add_argument("--clang", required=True)
    ap.add_argument("--phase-shim", default="")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--time-target", type=float, default=1.3)
    ap.add_argument("--mem-target", type=float, default=1.5)
    ap.add_argument("--lint-opt", action="append", default=[],
                    help="extra option for `lockstep lint` (before the files)")
    ap.add_argument("--fixtures", nargs="*", default=[], help="fixture files, one TU each")
    ap.add_argument("--tu", action="append", default=[], metavar="NAME=FILE",
                    help="a named TU (real-world, generated)")
    ap.add_argument("--series", action="append", default=[], metavar="K=FILE",
                    help="the linearity series: function scaled K x (K=0: empty baseline)")
    ap.add_argument("--json", help="write raw results here")
    ap.add_argument("--pin", default="", metavar="CPU",
                    help="run every timed command on this CPU only (taskset -c CPU)")
    ap.add_argument("--instr", action="store_true",
                    help="also count instructions with valgrind (TUs and series; slow)")
    a = ap.parse_args()
    r = Runner(a)
    raw = {"fixtures": [], "tus": [], "series": []}

    def note(msg):
        print(msg, file=sys.stderr, flush=True)

    for f in a.fixtures:
        note(f"lint_measure: {f}")
        raw["fixtures"].append(r.measure(f, [f], flags_for(f, [])))
    # All fixtures of one language in a single invocation: lint's per-run cost
    # (rules, start-up) amortized, as a user linting a project would see it.
    for ext in (".c", ".cu"):
        group = [f for f in a.fixtures if f.endswith(ext)]
        if len(group) > 1:
            note(f"lint_measure: all {ext} fixtures in one invocation")
            raw["tus"].append(r.measure(f"all {len(group)} fixtures/**/*{ext}, one invocation",
                                        group, flags_for(group[0], [])))
    for spec in a.tu:
        name, f = spec.split("=", 1)
        note(f"lint_measure: {name}")
        raw["tus"].append(r.measure(name, [f], flags_for(f, []), instr=a.instr))
    for spec in a.series:
        k, f = spec.split("=", 1)
        note(f"lint_measure: series {k}x")
        m = r.measure(f"single function {k}×", [f], flags_for(f, []), instr=a.instr)
        m["k"] = int(k)
        raw["series"].append(m)

    out = []
    fx = [summarize(x) for x in raw["fixtures"]]
    ok = [s for s in fx if not s["error"]]
    tus = [summarize(x) for x in raw["tus"]]
    out.append(f"Medians of {a.runs} interleaved runs each (wall time; *cpu ×*: user+sys, less sensitive to a busy machine; *instr ×*: instructions, valgrind, when counted); targets: time × ≤ {a.time_target}, "
               f"mem × ≤ {a.mem_target}, against *clang*: `clang -fsyntax-only` with the TU's flags. "
               "*× -w*: against `clang -fsyntax-only -w`, libclang's exact arguments (lint adds -w: "
               "it reports no compiler warnings), i.e. the same frontend work." +
               (f" Every timed run pinned to CPU {a.pin} (`taskset -c {a.pin}`)." if a.pin else "") + " *lint parse/rest*: from the phase shim "
               "(time inside libclang's parse calls), *walk* (inside outermost clang_visitChildren: the AST "
               "walk and its callbacks), *rest* (the remainder of the process after the shim's "
               "constructor: rules, CFG, taint, checks, output; dynamic loading is before it).\n")
    out.append(HDR)
    if ok:
        agg = {"name": f"fixtures: {len(ok)} TUs one by one (sum of medians; mem: worst file)",
               "lines": sum(s["lines"] for s in ok), "error": None,
               "findings": sum(s["findings"] for s in ok)}
        for k in ("lint_s", "clang_s", "clang_w_s", "parse_s", "rest_s", "visit_s", "lint_cpu", "clang_cpu"):
            agg[k] = sum(s.get(k, 0.0) for s in ok)
        worst_mem = max(ok, key=lambda s: s["mem_x"])
        agg["lint_kib"], agg["clang_kib"] = worst_mem["lint_kib"], worst_mem["clang_kib"]
        agg["time_x"] = agg["lint_s"] / agg["clang_s"]
        agg["time_wx"] = agg["lint_s"] / agg["clang_w_s"]
        agg["cpu_x"] = agg["lint_cpu"] / agg["clang_cpu"] if agg["clang_cpu"] else float("nan")
        agg["mem_x"] = worst_mem["mem_x"]
        out.append(row(agg, a))
        worst = max(ok, key=lambda s: s["time_x"])
        out.append(row(dict(worst, name=f"worst fixture (time): {worst['name']}"), a))
    for s in tus:
        out.append(row(s, a))
    bad = [s for s in fx if s["error"]]
    if bad:
        out.append("\nFixtures not measured: " + "; ".join(f"{s['name']}: {s['error'][:100]}"
                                                        for s in bad))

    ser = sorted([summarize(x) | {"k": x["k"]} for x in raw["series"]], key=lambda s: s["k"])
    if ser:
        out += linearity(ser)
    if ok:
        out.append("\n<details><summary>Per fixture</summary>\n")
        out.append(HDR)
        out += [row(s, a) for s in sorted(ok, key=lambda s: -s["time_x"])]
        out.append("\n</details>")
    print("\n".join(out))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"raw": raw, "fixtures": fx, "tus": tus, "series": ser}, fh, indent=1)


if __name__ == "__main__":
    main()

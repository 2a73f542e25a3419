#!/usr/bin/env python3
"""suite.py — runs the GPU suite (semantics, completion, failure matrix, PyTorch, benchmark)
on one machine with NRANKS GPUs and writes the report and raw results. Called by
run_all.sh after it has built lockstep and the programs; not meant to be run alone.

Every child runs under `timeout` in its own session and is killed with its group at
the limit; every step also yields to a global deadline, so the whole suite ends by
itself. A step that cannot run (tool missing, time spent) is recorded as such, never
silently dropped. Output (<= 8 files): the report .md, native_semantics.csv,
completion_timing.csv, failure_matrix.json, torch.json, bench_allreduce.csv,
summary.json, logs.tar.gz.
"""
import argparse
import csv
import datetime
import glob
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tarfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import traces  # noqa: E402

VARIANTS = ["group-end-without-start", "nested-depth-two", "two-user-streams",
            "async-error-after-success", "invalid-root-group-cleanup",
            "valid-op-after-group-error", "nonblocking-init-poll", "nonblocking-group-poll",
            "nonblocking-finalize-poll"]


def pct(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    return v[min(len(v) - 1, max(0, int(round(p * (len(v) - 1)))))]


def median_ci(v, n=4000, seed=1):
    """95 % bootstrap interval of the median of v (fixed seed: a report is reproducible)."""
    import random
    if len(v) < 2:
        return (float("nan"), float("nan"))
    rnd = random.Random(seed)
    b = sorted(statistics.median(rnd.choices(v, k=len(v))) for _ in range(n))
    return b[int(0.025 * n)], b[int(0.975 * n) - 1]


def cv(v):
    if len(v) < 2:
        return float("nan")
    m = statistics.mean(v)
    return statistics.stdev(v) / m * 100 if m else float("nan")


def f3(x):
    return "n/a" if x is None or x != x else f"{x:.3f}"


class Suite:
    def __init__(self, a):
        self.n = a.nranks
        self.out = a.out
        self.work = a.work
        self.ls = a.lockstep
        self.bin = a.bin
        self.root = a.root
        self.t0 = time.monotonic()
        self.deadline = self.t0 + a.budget
        self.logs = os.path.join(self.work, "logs")
        os.makedirs(self.logs, exist_ok=True)
        os.makedirs(self.out, exist_ok=True)
        self.summary = {"nranks": self.n, "date": a.date, "machine": a.machine, "steps": {},
                        "lockstep": {}, "notes": []}
        self.md = []
        self.have_run = False
        self.have_tool = {}
        # Further lockstep processes beside "lockstep" in steps timing and bench (
        # side by side in one run): GT_BASE_LS=PATH, a lockstep built from other sources
        # (run_all.sh GT_BASE_ROOT); GT_DEFER_US=N, this lockstep with LOCKSTEP_DEFER_US=N.
        self.variants = [("lockstep", None, {})]
        if os.environ.get("GT_DEFER_US"):
            self.variants.append(("defer", None, {"LOCKSTEP_DEFER_US": os.environ["GT_DEFER_US"]}))
        if os.environ.get("GT_BASE_LS") and os.access(os.environ["GT_BASE_LS"], os.X_OK):
            self.variants.append(("base", os.environ["GT_BASE_LS"], {}))
        # GT_VARIANTS="LABEL:VAR=V,VAR=V;LABEL:...": more processes of this lockstep, each
        # label with its environment (e.g. pollslow:LOCKSTEP_POLL_MS=60000, nodev:LOCKSTEP_DEVICE=0,
        # disabled:LOCKSTEP_DISABLE=1), to tell apart what slows a lockstep process.
        for item in filter(None, (x.strip() for x in os.environ.get("GT_VARIANTS", "").split(";"))):
            label, _, assigns = item.partition(":")
            extra = dict(kv.split("=", 1) for kv in assigns.split(",") if "=" in kv)
            if label and label not in ("plain", "lockstep", "defer", "base"):
                self.variants.append((label, None, extra))
        self.summary["variants"] = {label: extra for label, _, extra in self.variants}

    # ---------------------------------------------------------------- running
    def left(self):
        return self.deadline - time.monotonic()

    def run(self, name, argv, timeout, env=None, stdout_file=None, cwd=None):
        """Run argv under `timeout`; returns (rc, [(t_mono, line)], elapsed_s).
        Lines are stamped on arrival, so report delays can be measured."""
        timeout = max(1, min(timeout, int(self.left()) - 3))
        full = ["timeout", "-k", "3", str(timeout)] + [str(x) for x in argv]
        t0 = time.monotonic()
        lines = []
        out_f = open(stdout_file, "w") if stdout_file else None
        try:
            p = subprocess.Popen(full, stdout=out_f or subprocess.PIPE,
                                 stderr=subprocess.PIPE if out_f else subprocess.STDOUT,
                                 env=env, cwd=cwd, start_new_session=True)
        except OSError as e:
            if out_f:
                out_f.close()
            return 127, [(t0, f"cannot start {argv[0]}: {e}")], 0.0
        stream = p.stderr if out_f else p.stdout

        def reader():
            for raw in iter(stream.readline, b""):
                lines.append((time.monotonic(), raw.decode("utf-8", "replace").rstrip("\n")))

        th = threading.Thread(target=reader, daemon=True)
        th.start()
        try:
            rc = p.wait(timeout + 6)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            rc = p.wait()
        # torchrun/mpirun children may outlive the launcher: end the session's group.
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        th.join(3)
        if out_f:
            out_f.close()
        el = time.monotonic() - t0
        with open(os.path.join(self.logs, name + ".log"), "w") as f:
            f.write(f"$ {' '.join(full)}\n# rc={rc} elapsed={el:.2f}s\n")
            for t, ln in lines:
                f.write(f"[{t - t0:8.3f}] {ln}\n")
        print(f"  [{time.monotonic() - self.t0:6.1f}s] {name}: rc={rc} ({el:.1f}s)", flush=True)
        return rc, lines, el

    def mpirun(self, prog_argv):
        # GT_TASKSET=CPUS: every process of the run on those CPUs (taskset -c), so that
        # processes compared with one another do not land on different cores
        pin = ["taskset", "-c", os.environ["GT_TASKSET"]] if os.environ.get("GT_TASKSET") else []
        return pin + ["mpirun", "-np", self.n, "--allow-run-as-root", "--bind-to", "none",
                "-x", "NCCL_NVLS_ENABLE=0", "-x", "FIXTURE_TIMEOUT_S"] + list(prog_argv)

    def under_lockstep(self, trace_dir, cmd, timeout_s=None, policy=None, ls=None):
        if not self.have_run:
            return list(cmd)
        a = [ls or self.ls, "run", "--trace-dir", trace_dir]
        if timeout_s is not None:
            a += ["--timeout", str(timeout_s)]
        if policy:
            a += ["--policy", policy]
        return a + ["--"] + list(cmd)

    def tool_json(self, name, argv, timeout=60):
        """Run a lockstep tool that prints JSON; returns (rc, doc or None)."""
        path = os.path.join(self.work, "json", name + ".json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        rc, _, _ = self.run(name, [self.ls] + argv, timeout, stdout_file=path)
        try:
            with open(path) as f:
                return rc, json.load(f)
        except (OSError, ValueError):
            return rc, None

    def probe(self):
        d = os.path.join(self.work, "probe")
        rc, lines, _ = self.run("probe-lockstep-run", [self.ls, "run", "--trace-dir", d, "--",
                                                        "true"], 30)
        self.have_run = rc == 0
        for sub in ("compare", "trace", "confirm"):
            rc2, ln2, _ = self.run(f"probe-lockstep-{sub}", [self.ls, sub, "--help"], 10)
            self.have_tool[sub] = rc2 == 0 and not any("not implemented" in x for _, x in ln2)
        self.summary["lockstep"] = {"run": self.have_run, **self.have_tool}
        if not self.have_run:
            self.summary["notes"].append("lockstep run unavailable: programs ran without the "
                                         "recorder; trace checks are n/a")

    # ------------------------------------------------------------- trace access
    def trace_records(self, trace_dir, name):
        """(records by rank, source) — the export when it works, else the raw files."""
        if self.have_tool.get("trace"):
            rc, doc = self.tool_json(name + "-export",
                                     ["trace", "export", "--format=json", trace_dir])
            if doc is not None:
                recs = traces.from_export(doc)
                if recs:
                    return recs, "lockstep trace export --format=json"
        recs = traces.from_raw(trace_dir)
        return recs, ("raw .lstrace files (export unavailable)" if recs else "none")

    # ------------------------------------------------------------ step 1
    def step_native(self):
        d = os.path.join(self.work, "native")
        tr = os.path.join(self.work, "traces", "native")
        os.makedirs(d, exist_ok=True)
        cmd = self.mpirun([os.path.join(self.bin, "native_semantics"), os.path.join(d, "ns")])
        # Every query recorded (by default the recorder keeps only queries that report
        # something): the check below aligns the program's log call by call.
        rc, _, el = self.run("native_semantics", self.under_lockstep(tr, cmd, 30), 120,
                             env=dict(os.environ, LOCKSTEP_RECORD_QUERIES="1"))
        rows, calls = [], []
        for p in sorted(glob.glob(os.path.join(d, "ns.rank*.csv"))):
            rows += list(csv.DictReader(open(p)))
        for p in sorted(glob.glob(os.path.join(d, "ns.calls.rank*.csv"))):
            calls += list(csv.DictReader(open(p)))
        recs, source = self.trace_records(tr, "native") if self.have_run else ({}, "none")
        # Align each rank's program-logged NCCL calls with its trace records, as a
        # subsequence by api name (the trace may hold calls the program did not log).
        verdict = {}  # (variant, rank) -> list of problems, or None if unchecked
        for rank in sorted({int(c["rank"]) for c in calls}):
            mine = [c for c in calls if int(c["rank"]) == rank]
            tr_recs = [r for r in recs.get(rank, []) if str(r["api"]).startswith("nccl")]
            j = 0
            for c in mine:
                key = (c["variant"], rank)
                if not tr_recs:
                    verdict.setdefault(key, None)
                    continue
                verdict.setdefault(key, [])
                while j < len(tr_recs) and tr_recs[j]["api"] != c["api"]:
                    j += 1
                if j == len(tr_recs):
                    verdict[key].append(f"{c['api']}#{c['idx']} not in trace")
                    continue
                t = tr_recs[j]
                j += 1
                if t["rc"] != int(c["rc"]):
                    verdict[key].append(f"{c['api']}#{c['idx']} rc trace={t['rc']} prog={c['rc']}")
                if t["depth"] != int(c["depth_at_entry"]):
                    verdict[key].append(
                        f"{c['api']}#{c['idx']} depth trace={t['depth']} prog={c['depth_at_entry']}")
                if c["api"] == "ncclCommGetAsyncError" and t["aux0"] is not None and \
                        traces._rc(t["aux0"]) not in (None, int(c["aux"])):
                    verdict[key].append(f"async state trace={t['aux0']} prog={c['aux']}")
        for r in rows:
            v = verdict.get((r["variant"], int(r["rank"])), None)
            r["trace_check"] = ("n/a" if v is None else "agree" if not v
                                else "DISAGREE: " + "; ".join(v[:3]))
        order = {v: i for i, v in enumerate(VARIANTS)}
        rows.sort(key=lambda r: (order.get(r["variant"], 99), int(r["rank"])))
        fields = ["variant", "rank", "nranks", "expected_rc", "observed_rc", "group_depth",
                  "data_check", "result", "trace_check", "detail"]
        with open(os.path.join(self.out, "native_semantics.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
        with open(os.path.join(d, "calls.csv"), "w", newline="") as f:
            if calls:
                w = csv.DictWriter(f, fieldnames=list(calls[0].keys()))
                w.writeheader()
                w.writerows(calls)
        ok = rc == 0 and len(rows) == len(VARIANTS) * self.n and all(r["result"] == "PASS" for r in rows)
        tr_ok = bool(rows) and all(r["trace_check"] == "agree" for r in rows)
        self.summary["steps"]["native_semantics"] = {
            "rc": rc, "rows": len(rows), "expected_rows": len(VARIANTS) * self.n,
            "pass": ok, "trace_source": source, "trace_agrees": tr_ok,
            "calls_logged": len(calls)}
        # report
        md = [f"## 1. Native NCCL semantics ({self.n} ranks, under "
              f"{'`lockstep run`' if self.have_run else 'no recorder'})", "",
              f"Rank rows: {len(rows)} (expected {len(VARIANTS) * self.n}); NCCL calls logged by "
              f"the program: {len(calls)}; trace source: {source}.", "",
              "| variant | rank rows | result | observed (rank 0) | trace agrees (rc + depth) | detail (rank 0) |",
              "|---|---|---|---|---|---|"]
        for v in VARIANTS:
            vr = [r for r in rows if r["variant"] == v]
            r0 = next((r for r in vr if r["rank"] == "0"), None)
            res = "PASS" if vr and all(r["result"] == "PASS" for r in vr) and len(vr) == self.n else "FAIL"
            tc = ("yes" if vr and all(r["trace_check"] == "agree" for r in vr) else
                  "n/a" if all(r["trace_check"] == "n/a" for r in vr) else "NO")
            md.append(f"| {v} | {len(vr)} | {res} | {r0['observed_rc'] if r0 else '-'} | {tc} | "
                      f"{(r0['detail'] if r0 else 'missing').replace('|', '/')} |")
        bad = [r for r in rows if r["trace_check"].startswith("DISAGREE")]
        if bad:
            md += ["", "Trace disagreements:", ""] + [
                f"- {r['variant']} rank {r['rank']}: {r['trace_check']}" for r in bad[:10]]
        self.md += md + [""]

    # ------------------------------------------------------------ step 1b
    # What lint's nonblocking-not-ready and compare's not-ready assume about a split of a
    # non-blocking parent (measured with NCCL 2.28.3 on 2xH200): it returns ncclSuccess with
    # the child still NULL; polling the PARENT out of ncclInProgress hands the child out,
    # already ready. A blocking parent hands out a ready child at once. A future NCCL that
    # changes either shows up here as FAIL (then revisit rules/nccl.json nonblocking).
    SPLIT_EXPECT = {
        "blocking-parent,child-cfg-nonblocking": ("ncclSuccess", "0", "ncclSuccess", "0", "ncclSuccess"),
        "nonblocking-parent,child-cfg-null": ("ncclSuccess", "1", "ncclSuccess", "0", "ncclSuccess"),
        "nonblocking-parent,child-cfg-nonblocking": ("ncclSuccess", "1", "ncclSuccess", "0", "ncclSuccess"),
    }

    def step_split(self):
        rc, lines, _ = self.run("split_probe", self.mpirun([os.path.join(self.bin, "split_probe")]), 90)
        rows = []
        for _, ln in lines:
            f = ln.strip().split(",")
            if len(f) == 14 and f[0] + "," + f[1] in self.SPLIT_EXPECT and f[5] == "parent":
                rows.append({"case": f[0] + "," + f[1], "rank": f[2], "split_rc": f[3],
                             "child_null_after_return": f[4], "parent_polls": f[6], "parent_ms": f[7],
                             "parent_state": f[8], "child_null_after_parent_poll": f[9],
                             "child_state": f[13]})
        for r in rows:
            got = (r["split_rc"], r["child_null_after_return"], r["parent_state"],
                   r["child_null_after_parent_poll"], r["child_state"])
            r["result"] = "PASS" if got == self.SPLIT_EXPECT[r["case"]] else "FAIL"
        want = len(self.SPLIT_EXPECT) * self.n
        ok = rc == 0 and len(rows) == want and all(r["result"] == "PASS" for r in rows)
        self.summary["steps"]["split"] = {"rc": rc, "rows": len(rows), "expected_rows": want, "pass": ok,
                                          "results": rows}
        md = ["## 1b. ncclCommSplit of a non-blocking parent (split_probe)", "",
              "Expected (NCCL 2.28.3): a blocking parent hands out a ready child at once; a non-blocking "
              "parent returns ncclSuccess with the child NULL, and polling the parent out of ncclInProgress "
              "hands out a ready child (lint `nonblocking-not-ready` and compare `not-ready` rely on this).",
              "", f"Rank rows: {len(rows)} (expected {want}); probe rc={rc}.", "",
              "| case | rank | split rc | child NULL after return | parent polls | parent ms | parent state "
              "| child NULL after parent poll | child state | result |",
              "|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            md.append(f"| {r['case']} | {r['rank']} | {r['split_rc']} | {r['child_null_after_return']} | "
                      f"{r['parent_polls']} | {r['parent_ms']} | {r['parent_state']} | "
                      f"{r['child_null_after_parent_poll']} | {r['child_state']} | {r['result']} |")
        self.md += md + [""]

    # ------------------------------------------------------------ step 2
    def step_timing(self):
        d = os.path.join(self.work, "timing")
        os.makedirs(d, exist_ok=True)
        prog = os.path.join(self.bin, "completion_timing")
        runs = {}
        cycles = int(os.environ.get("GT_TIMING_CYCLES", "10"))
        for label, ls, extra in [("plain", None, {})] + self.variants:
            if label != "plain" and not self.have_run:
                continue
            path = os.path.join(d, f"{label}.csv")
            tr = os.path.join(self.work, "traces", "timing" if label == "lockstep" else f"timing-{label}")
            cmd = self.mpirun([prog, path, cycles, 3, 256])
            env = None
            if label != "plain":
                cmd = self.under_lockstep(tr, cmd, 30, ls=ls)
                # lockstep sees completion by polling its events; 1 ms instead of the
                # default 10 ms so its record resolves a ~1 ms collective.
                env = dict(os.environ, LOCKSTEP_POLL_MS="1")
                env.update(extra) # a variant's own LOCKSTEP_POLL_MS wins
            rc, _, _ = self.run(f"completion_timing-{label}", cmd, 120, env=env)
            try:
                runs[label] = (rc, list(csv.DictReader(open(path))))
            except OSError:
                runs[label] = (rc, [])
        # lockstep's own record of the lockstep run's cycles
        ls_rows = {}
        if "lockstep" in runs:
            recs, source = self.trace_records(os.path.join(self.work, "traces", "timing"), "timing")
            self.summary["steps"]["timing_trace_source"] = source
            for rank, rl in recs.items():
                rl = [r for r in rl if str(r["api"]).startswith("ncclGroup") or r["api"] == "ncclAllReduce"]
                cyc = []
                for i in range(len(rl) - 2):
                    if [rl[i]["api"], rl[i + 1]["api"], rl[i + 2]["api"]] == \
                            ["ncclGroupStart", "ncclAllReduce", "ncclGroupEnd"]:
                        cyc.append((rl[i], rl[i + 1], rl[i + 2]))
                for k, (gs, ar, ge) in enumerate(cyc):
                    comp = ar["t_complete"] or ge["t_complete"]
                    ls_rows[(rank, k)] = {
                        "ls_host_us": (ge["t_exit"] - gs["t_enter"]) / 1e3 if ge["t_exit"] and gs["t_enter"] else None,
                        "ls_complete_after_start_us": (comp - gs["t_enter"]) / 1e3 if comp and gs["t_enter"] else None,
                        "ls_complete_after_end_us": (comp - ge["t_exit"]) / 1e3 if comp and ge["t_exit"] else None,
                        "ls_t_complete_ns": comp,
                        "ls_after_group_end": bool(comp and ge["t_exit"] and comp > ge["t_exit"])}
        fields = ["run", "rank", "cycle", "warmup", "host_us", "cuda_us", "ready_after_group_end",
                  "t_start_ns", "t_end_ns", "t_done_ns", "ls_host_us", "ls_complete_after_start_us",
                  "ls_complete_after_end_us", "ls_t_complete_ns", "nranks", "mib",
                  "bad_elements_last_cycle_all_ranks"]
        allrows = []
        for label, (rc, rows) in runs.items():
            for r in rows:
                r["run"] = label
                if label == "lockstep":
                    k = int(r["cycle"]) + 3
                    r.update({kk: (f3(vv) if isinstance(vv, float) else vv)
                              for kk, vv in ls_rows.get((int(r["rank"]), k), {}).items()})
                allrows.append(r)
        with open(os.path.join(self.out, "completion_timing.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
            w.writeheader()
            w.writerows(allrows)
        md = [f"## 2. GroupEnd is not completion (in-place AllReduce SUM/int32, 256 MiB per rank, "
              f"{self.n} ranks, 3 warm-up + {cycles} measured cycles; per-cycle max over ranks)", "",
              "| run | metric | median | P95 | CV | n |", "|---|---|---|---|---|---|"]
        st = {}
        for label, (rc, rows) in runs.items():
            meas = [r for r in rows if r["warmup"] == "0"]
            cycles = sorted({int(r["cycle"]) for r in meas})
            host = [max(float(r["host_us"]) for r in meas if int(r["cycle"]) == c) for c in cycles]
            cuda = [max(float(r["cuda_us"]) for r in meas if int(r["cycle"]) == c) for c in cycles]
            ready = sum(int(r["ready_after_group_end"]) for r in meas)
            bad = meas[0]["bad_elements_last_cycle_all_ranks"] if meas else "n/a"
            st[label] = {"rc": rc, "cycles": len(cycles), "rank_cycles": len(meas),
                         "ready_after_group_end": ready, "bad_elements": bad,
                         "host_median_us": statistics.median(host) if host else None,
                         "host_p95_us": pct(host, .95), "host_cv_pct": cv(host),
                         "cuda_median_us": statistics.median(cuda) if cuda else None,
                         "cuda_p95_us": pct(cuda, .95), "cuda_cv_pct": cv(cuda)}
            md.append(f"| {label} | host GroupStart/API/End interval (us) | {f3(st[label]['host_median_us'])} | "
                      f"{f3(pct(host, .95))} | {f3(cv(host))}% | {len(host)} |")
            md.append(f"| {label} | CUDA event completion interval (us) | {f3(st[label]['cuda_median_us'])} | "
                      f"{f3(pct(cuda, .95))} | {f3(cv(cuda))}% | {len(cuda)} |")
            if label == "lockstep" and ls_rows:
                per = {}
                for (rank, k), v in ls_rows.items():
                    if k >= 3:
                        per.setdefault(k, []).append(v)
                lh = [max(x["ls_host_us"] for x in v if x["ls_host_us"] is not None)
                      for v in per.values() if any(x["ls_host_us"] is not None for x in v)]
                lc = [max(x["ls_complete_after_start_us"] for x in v if x["ls_complete_after_start_us"] is not None)
                      for v in per.values() if any(x["ls_complete_after_start_us"] is not None for x in v)]
                seen = [v for (rank, k), v in ls_rows.items() if k >= 3]
                st[label]["ls_completion_after_group_end"] = f"{sum(1 for v in seen if v['ls_after_group_end'])} / {len(seen)}"
                st[label]["ls_host_median_us"] = statistics.median(lh) if lh else None
                st[label]["ls_complete_median_us"] = statistics.median(lc) if lc else None
                md.append(f"| lockstep's record | GroupStart enter -> GroupEnd exit (us) | "
                          f"{f3(st[label]['ls_host_median_us'])} | {f3(pct(lh, .95))} | {f3(cv(lh))}% | {len(lh)} |")
                md.append(f"| lockstep's record | GroupStart enter -> device completion seen (us) | "
                          f"{f3(st[label]['ls_complete_median_us'])} | {f3(pct(lc, .95))} | {f3(cv(lc))}% | {len(lc)} |")
        md.append("")
        for label, s in st.items():
            md.append(f"- {label}: CUDA stop event ready immediately after GroupEnd: "
                      f"**{s['ready_after_group_end']} / {s['rank_cycles']}** rank-cycles; "
                      f"full-buffer check after the last cycle: {s['bad_elements']} bad elements.")
        if "lockstep" in st and "ls_completion_after_group_end" in st["lockstep"]:
            md.append(f"- lockstep's record (completion polled every 1 ms): device completion recorded after "
                      f"GroupEnd returned in **{st['lockstep']['ls_completion_after_group_end']}** rank-cycles; "
                      "its GroupEnd record is never taken as completion.")
        if "lockstep" in runs and not ls_rows:
            md.append("- lockstep's record: no GroupStart/AllReduce/GroupEnd triples found in the trace.")
        self.summary["steps"]["completion_timing"] = st
        self.md += md + [""]

    # ------------------------------------------------------------ step 3
    @staticmethod
    def parse_expect(text):
        """'<class> [seq=<k>] [ranks=<a>,<b>]' -> (class, seq or None, ranks or None)."""
        m = re.match(r"([a-z-]+)(?:\s+seq=(\d+))?(?:\s+ranks=([\d,]+))?", text or "")
        if not m:
            return None, None, None
        return (m.group(1), int(m.group(2)) if m.group(2) else None,
                [int(x) for x in m.group(3).split(",")] if m.group(3) else None)

    def fixture_meta(self, path):
        # RUNTIME: the first divergence; RUNTIME-ALSO: one that must appear anywhere in
        # the list (a later one, e.g. the after-abort that follows an async-error);
        # RUNTIME-NOT: a class that must not appear at all.
        meta = {"runtime": None, "ranks": 2, "also": [], "not": []}
        for ln in open(path, errors="replace").read().splitlines()[:60]:
            m = re.search(r"//\s*RUNTIME:\s*(.+)", ln)
            if m and meta["runtime"] is None:
                meta["runtime"] = m.group(1).strip()
            m = re.search(r"//\s*RUNTIME-ALSO:\s*(.+)", ln)
            if m:
                meta["also"].append(m.group(1).strip())
            m = re.search(r"//\s*RUNTIME-NOT:\s*([a-z-]+)", ln)
            if m:
                meta["not"].append(m.group(1))
            m = re.search(r"//\s*RANKS:\s*(\d+)", ln)
            if m:
                meta["ranks"] = int(m.group(1))
        meta["class"], meta["seq"], meta["ranks_expected"] = self.parse_expect(meta["runtime"])
        return meta

    def divergence_matches(self, d, cls, seq, ranks):
        return (d.get("class") == cls and (seq is None or d.get("seq") == seq) and
                (ranks is None or sorted(d.get("ranks") or []) == sorted(ranks)))

    def step_matrix(self):
        lint_dir = os.path.join(self.root, "gpu_tests", "lint")
        sel = os.path.join(self.root, "gpu_tests", "matrix.txt")
        names = []
        if os.path.exists(sel):
            names = [x.split("#")[0].strip() for x in open(sel) if x.split("#")[0].strip()]
        results = []
        md = [f"## 3. Failure matrix: lint -> run under lockstep -> compare -> confirm ({self.n} ranks)", "",
              "| fixture | RUNTIME expects | lint findings | run rc (s) | lockstep watchdog | compare | class / seq / ranks seen | confirm (per finding) | verdict |",
              "|---|---|---|---|---|---|---|---|---|"]
        for name in names:
            src = os.path.join(self.root, name)
            base = os.path.splitext(os.path.basename(name))[0]
            res = {"fixture": name}
            results.append(res)
            if not os.path.exists(src):
                res["verdict"] = "MISSING"
                md.append(f"| {name} | - | - | - | - | - | - | - | MISSING (not on this checkout) |")
                continue
            meta = self.fixture_meta(src)
            res["expect"] = meta
            exp_s = (f"{meta['runtime']}" + "".join(f"; also {a}" for a in meta["also"]) +
                     "".join(f"; not {c}" for c in meta["not"]))
            exe = os.path.join(self.bin, "fixtures", base)
            lint_json = os.path.join(lint_dir, base + ".json")
            nfind = None
            try:
                nfind = len(json.load(open(lint_json)).get("findings", []))
            except (OSError, ValueError):
                pass
            res["lint_findings"] = nfind
            if meta["ranks"] > self.n or self.left() < 30:
                res["verdict"] = "SKIPPED"
                md.append(f"| {base} | {exp_s} | {nfind} | - | - | - | - | - | SKIPPED "
                          f"({'needs ' + str(meta['ranks']) + ' ranks' if meta['ranks'] > self.n else 'time budget'}) |")
                continue
            if not os.path.exists(exe):
                res["verdict"] = "BUILD FAILED"
                md.append(f"| {base} | {exp_s} | {nfind} | - | - | - | - | - | BUILD FAILED |")
                continue
            tr = os.path.join(self.work, "traces", "fx", base)
            # Policy "report": the watchdog (5 s) names the stuck call, then the fixture's own
            # timeout (10 s) aborts the communicator and both ranks reach MPI_Finalize. With
            # "exit" mpirun would kill the skipping rank too, and compare could no longer
            # tell that it ended cleanly without the call (a skip).
            env = dict(os.environ, FIXTURE_TIMEOUT_S=os.environ.get("GT_FIXTURE_TIMEOUT", "10"))
            rc, lines, el = self.run(f"fixture-{base}",
                                     self.under_lockstep(tr, self.mpirun([exe]), 5, "report"), 45, env=env)
            wd = [ln for _, ln in lines if re.search(r"lockstep: rank \d+: seq \d+ .* not complete after", ln)]
            res.update(run_rc=rc, run_s=round(el, 2), watchdog=wd[:4])
            crc, cdoc = (None, None)
            if self.have_tool.get("compare"):
                crc, cdoc = self.tool_json(f"compare-{base}", ["compare", "--format=json", tr])
            res["compare_rc"], res["compare"] = crc, cdoc
            first = (cdoc or {}).get("divergences") or [{}]
            first = first[0] if first else {}
            seen = f"{first.get('class', '-')} / {first.get('seq', '-')} / {first.get('ranks', '-')}"
            frc, fdoc = (None, None)
            if self.have_tool.get("confirm") and os.path.exists(lint_json):
                frc, fdoc = self.tool_json(f"confirm-{base}",
                                           ["confirm", "--findings", lint_json, "--traces", tr,
                                            "--format=json"])
            res["confirm_rc"], res["confirm"] = frc, fdoc
            states = self.confirm_states(fdoc)
            res["confirm_states"] = states
            status = (cdoc or {}).get("status")
            # compare must show what the fixture's RUNTIME line says; every lint finding
            # must then be confirmed when the run diverged, and none when it did not.
            if meta["class"] == "consistent":
                # a run that crashed before any collective also "compares consistent"
                cmp_ok = status == "consistent" and rc == 0 and bool((cdoc or {}).get("communicators"))
            else:
                cls_ok = first.get("class") == meta["class"]
                seq_ok = meta["seq"] is None or first.get("seq") == meta["seq"]
                rk_ok = meta["ranks_expected"] is None or \
                    sorted(first.get("ranks") or []) == sorted(meta["ranks_expected"])
                cmp_ok = status == "divergent" and cls_ok and seq_ok and rk_ok
                if meta["class"] in ("skip", "timeout"):  # the watchdog must fire
                    cmp_ok = cmp_ok and bool(wd)
            # Later divergences the fixture names (an async-error first, then the
            # after-abort of the call the program issued anyway), and classes it rules out.
            divs = (cdoc or {}).get("divergences") or []
            also_bad = [a for a in meta["also"]
                        if not any(self.divergence_matches(d, *self.parse_expect(a)) for d in divs)]
            not_bad = [c for c in meta["not"] if any(d.get("class") == c for d in divs)]
            res["also_missing"], res["not_present"] = also_bad, not_bad
            cmp_ok = cmp_ok and not also_bad and not not_bad
            # A flagged fixture is confirmed when at least one of its findings is (a
            # finding on a line the diverged run never reached stays not-exercised).
            if nfind and meta["class"] != "consistent":
                conf_ok = "confirmed" in states
            else:
                conf_ok = "confirmed" not in states
            ok = cmp_ok and conf_ok
            why = ("as expected" if ok else
                   f"compare {'ok' if cmp_ok else 'WRONG'}, confirm {'ok' if conf_ok else 'WRONG'}" +
                   (f"; missing {', '.join(also_bad)}" if also_bad else "") +
                   (f"; unexpected {', '.join(not_bad)}" if not_bad else ""))
            res["verdict"] = "PASS" if ok else "FAIL"
            res["why"] = why
            wds = (wd[0].split("lockstep: ", 1)[-1][:90] if wd else "-").replace("|", "/")
            md.append(f"| {base} | {exp_s} | {nfind if nfind is not None else 'no lint json'} | "
                      f"{rc} ({el:.1f}) | {wds} | {status or ('n/a' if crc is None else 'rc ' + str(crc))} | {seen} | "
                      f"{', '.join(states) or ('n/a' if frc is None else 'no findings' if not nfind else 'rc ' + str(frc))} | "
                      f"{res['verdict']} ({why}) |")
        if not names:
            md.append("| (gpu_tests/matrix.txt lists no fixtures) | | | | | | | | |")
        with open(os.path.join(self.out, "failure_matrix.json"), "w") as f:
            json.dump({"nranks": self.n, "results": results}, f, indent=1)
        self.summary["steps"]["failure_matrix"] = {
            r["fixture"]: r.get("verdict") for r in results}
        self.md += md + [""]

    @staticmethod
    def confirm_states(doc):
        """Per finding: confirmed / exercised / not-exercised, whatever the spelling."""
        out = []
        if not isinstance(doc, dict):
            return out
        items = doc.get("findings") or doc.get("results") or []
        for it in items if isinstance(items, list) else []:
            s = str(it.get("status") or it.get("state") or it.get("verdict") or "").lower()
            if "not" in s and "exercis" in s:
                out.append("not-exercised")
            elif "confirm" in s:
                out.append("confirmed")
            elif "exercis" in s or "consistent" in s or "no-divergence" in s:
                out.append("exercised")
            elif s:
                out.append(s)
        return out

    # ------------------------------------------------------------ step 4
    def torchrun(self, name, script_argv, env_extra, ls_trace=None, ls_timeout=None, limit=25):
        # The smoke run showed a timed-out rank dumping debug info instead of exiting
        # (still alive 25 s later): skip the dump so the watchdog's teardown follows.
        env = dict(os.environ, PYTHONUNBUFFERED="1", NCCL_NVLS_ENABLE="0",
                   TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1",
                   TORCH_NCCL_DUMP_ON_TIMEOUT="0", TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC="1000")
        env.update(env_extra)
        cmd = ["torchrun", "--standalone", f"--nproc-per-node={self.n}"] + script_argv
        if ls_trace:
            cmd = self.under_lockstep(ls_trace, cmd, ls_timeout, "report")
        return self.run(name, cmd, limit, env=env)

    @staticmethod
    def events(lines):
        ev = []
        for t, ln in lines:
            i = ln.find("@@ {")
            if i >= 0:
                try:
                    e = json.loads(ln[i + 3:])
                    e["_arrival"] = t
                    ev.append(e)
                except ValueError:
                    pass
        return ev

    REPORTERS = [
        ("PyTorch DETAIL (ProcessGroupWrapper)", re.compile(r"Detected mismatch between collectives")),
        ("PyTorch watchdog", re.compile(r"Watchdog caught collective operation timeout")),
        ("lockstep", re.compile(r"lockstep.*(seq|diverg|mismatch|not complete|skip|timeout)", re.I)),
        ("NCCL", re.compile(r"NCCL WARN")),
    ]

    def analyse_torch(self, case, lines, rc, el, compare_doc):
        ev = self.events(lines)
        div = [e for e in ev if e.get("ev") == "divergent_call"]
        t_div = min((e["t"] for e in div), default=None)
        reports = []
        for who, rx in self.REPORTERS:
            hits = [(t, ln) for t, ln in lines if rx.search(ln) and "@@ {" not in ln]
            if not hits:
                continue
            t, ln = hits[0]
            m = re.search(r"\[(?:rank|Rank )?(\d+)\]|rank (\d+)", ln)
            named = {}
            blob = "\n".join(x for _, x in hits[:40])
            for pat, key in ((r"SequenceNumber=(\d+)", "seq"), (r"SeqNum=(\d+)", "seq"),
                             (r"OpType=(\w+)", "op"), (r"seq (\d+) (\w+)", "seq_op")):
                mm = re.findall(pat, blob)
                if mm:
                    named[key] = sorted(set(mm if isinstance(mm[0], str) else [" ".join(x) for x in mm]))
            reports.append({"by": who, "first_line": ln[:400], "lines": len(hits),
                            "rank": next((g for g in (m.groups() if m else ()) if g), None),
                            "delay_s": round(t - t_div, 3) if t_div is not None else None,
                            "named": named})
        returned = sorted({e["rank"] for e in ev if e.get("ev") == "returned"})
        exc = [e for e in ev if e.get("ev") == "exception"]
        # DETAIL's report arrives as the exception the worker caught (it prints it as an
        # event and leaves): that is the ProcessGroupWrapper speaking, on each rank.
        det = [e for e in exc if "Detected mismatch" in e.get("message", "")
               or "Collectives differ" in e.get("differ", "")]
        if det:
            msg = det[0]["message"] + " " + " ".join(det[0].get("keys", [])) + " " + det[0].get("differ", "")
            named = {"seq": sorted(set(re.findall(r"SequenceNumber=(\d+)", msg))),
                     "op": sorted(set(re.findall(r"OpType=(\w+)", msg))),
                     "ranks": sorted(set(re.findall(r"Rank (\d+) is running", msg)) |
                                     set(re.findall(r"but Rank (\d+)", msg))),
                     "shapes": sorted(set(re.findall(r"TensorShape=(\[[^\]]*\])", msg))),
                     "differ_in": re.findall(r"Collectives differ in[^.]*", msg)[:1]}
            reports.insert(0, {"by": "PyTorch DETAIL (ProcessGroupWrapper exception)",
                               "first_line": msg[:400], "lines": len(det),
                               "rank": ",".join(str(e["rank"]) for e in det),
                               "delay_s": round(min(e["t"] for e in det) - t_div, 3) if t_div else None,
                               "named": named})
        first = ((compare_doc or {}).get("divergences") or [{}])
        first = first[0] if first else {}
        self.judge(case, div, reports, first)
        return {"case": case, "rc": rc, "elapsed_s": round(el, 2),
                "divergent_call": {str(e["rank"]): {"op": e.get("op"), "count": e.get("count"),
                                                    "pg_seq_before": e.get("seq_before")} for e in div},
                "ranks_returned": returned,
                "exceptions": [{"rank": e["rank"], "type": e.get("type"),
                                "delay_s": round(e["t"] - t_div, 3) if t_div else None,
                                "message": e.get("message", "")[:600]} for e in exc],
                "reports": reports,
                "compare": {"status": (compare_doc or {}).get("status"), "class": first.get("class"),
                            "seq": first.get("seq"), "ranks": first.get("ranks"),
                            "op": first.get("op"), "right": first.get("right")} if compare_doc else None}

    @staticmethod
    def _op(x):
        x = str(x).lower().replace("_", "").replace("nccl", "")
        return {"bcast": "broadcast"}.get(x, x)

    def judge(self, case, div, reports, first):
        """Did each reporter name the right seq, op and ranks? PyTorch numbers its own
        collectives: DETAIL names the process group's sequence number before the call,
        the watchdog the work's (one more); lockstep numbers NCCL calls on the
        communicator, where the warm-up all_reduce is seq 0 and the fault seq 1."""
        sb = next((e.get("seq_before") for e in div if e.get("seq_before") is not None), None)
        want_ops = {"op_mismatch": {"broadcast", "allreduce"}, "size_mismatch": {"allreduce"},
                    "skip": {"allreduce"}}.get(case)
        want_ranks = {str(r) for r in range(self.n)}
        for r in reports:
            nm = r.get("named") or {}
            seqs = {str(x) for x in nm.get("seq", [])}
            ops = {self._op(x) for x in nm.get("op", [])}
            for so in nm.get("seq_op", []):
                a, b = so.split(" ", 1)
                seqs.add(a)
                ops.add(self._op(b))
            if "DETAIL" in r["by"]:
                exp_seq = {str(sb)}
            elif "watchdog" in r["by"]:
                exp_seq = {str(sb + 1)} if sb is not None else set()
            else:
                exp_seq = {"1"}
            r["right"] = {
                "seq": (seqs == exp_seq) if seqs else None,
                "op": (want_ops is not None and ops >= want_ops) if ops else None,
                "ranks": (set(nm.get("ranks", [])) >= want_ranks) if nm.get("ranks") else None}
        if first:
            fr = {str(x) for x in (first.get("ranks") or [])}
            fo = first.get("op") or []
            fo = {self._op(x) for x in (fo if isinstance(fo, list) else [fo])}
            first["right"] = {"seq": first.get("seq") == 1,
                              "op": want_ops is not None and (fo >= want_ops or case != "op_mismatch" and bool(fo & want_ops)),
                              "ranks": len(fr) >= 2 and "0" in fr}

    def step_torch(self):
        worker = os.path.join(self.root, "gpu_tests", "torch_worker.py")
        seed_rows = [("ordered", "OFF"), ("op_mismatch", "DETAIL"), ("size_mismatch", "DETAIL"),
                     ("op_mismatch", "OFF"), ("skip", "OFF")]
        results = []
        ls_done = {}
        for case, dbg in seed_rows:
            for mode in ("seed", "lockstep"):
                if mode == "lockstep" and not self.have_run:
                    continue
                if self.left() < 40:
                    results.append({"case": case, "debug": dbg, "mode": mode, "skipped": "time budget"})
                    continue
                if mode == "lockstep" and case in ls_done:  # DETAIL off either way: same run
                    r = dict(ls_done[case])
                    r["debug_row"] = dbg
                    results.append(r)
                    continue
                env = {"TORCH_DISTRIBUTED_DEBUG": dbg if mode == "seed" else "OFF",
                       "GT_PG_TIMEOUT": "6", "GT_HOLD": "9"}
                tr = os.path.join(self.work, "traces", f"torch-{case}") if mode == "lockstep" else None
                name = f"torch-{case}-{dbg if mode == 'seed' else 'lockstep'}"
                # The plain (DEBUG) runs' outer limit is 25 s; under lockstep the start (preload, one more
                # exec) takes ~1 s longer and the timed-out rank's teardown ended at 24.8 s,
                # so give those runs 35 s to end by themselves.
                rc, lines, el = self.torchrun(name, [worker, case], env, tr, 3,
                                              25 if mode == "seed" else 35)
                cdoc = None
                if tr and self.have_tool.get("compare"):
                    _, cdoc = self.tool_json(f"compare-{name}", ["compare", "--format=json", tr])
                r = self.analyse_torch(case, lines, rc, el, cdoc)
                r.update(debug=env["TORCH_DISTRIBUTED_DEBUG"], debug_row=dbg, mode=mode)
                results.append(r)
                if mode == "lockstep":
                    ls_done[case] = r
        cost = self.torch_cost()
        with open(os.path.join(self.out, "torch.json"), "w") as f:
            json.dump({"nranks": self.n, "matrix": results,
                       "cost_median_us": {"/".join(k): v for k, v in cost.items()},
                       "cost_note": "A = one process without lockstep (plain and DETAIL groups, "
                                    "interleaved rounds); B = a process under lockstep run (plain group)"},
                      f, indent=1)
        md = [f"## 4. PyTorch side by side ({self.n} ranks, torchrun, ProcessGroup timeout 6 s)", "",
              "Each case first completes one valid all_reduce. 'delay' is seconds from the divergent "
              "call (earliest rank) to the first line of that reporter.", "",
              "| case | run | exit | ranks that returned | reported by (delay s, rank) | names seq / op / ranks | right seq/op/ranks | lockstep compare |",
              "|---|---|---|---|---|---|---|---|"]
        for r in results:
            if r.get("skipped"):
                md.append(f"| {r['case']} | {r['mode']} {r['debug']} | skipped ({r['skipped']}) | | | | | |")
                continue
            rep = "; ".join(f"{x['by']} ({x['delay_s']}, r{x['rank']})" for x in r["reports"]) or "nothing"
            if r["exceptions"]:
                rep += "; exception on ranks " + ",".join(str(e["rank"]) for e in r["exceptions"])
            named = "; ".join(f"{x['by'].split(' ')[0]}: {x['named']}" for x in r["reports"] if x["named"]) or "-"
            c = r.get("compare")
            cs = (f"{c['status']}: {c['class']} seq={c['seq']} ranks={c['ranks']} op={c['op']}"
                  if c else "n/a")
            yn = {True: "yes", False: "NO", None: "-"}
            right = "; ".join(f"{x['by'].split(' ')[0]} {yn[x['right']['seq']]}/{yn[x['right']['op']]}/{yn[x['right']['ranks']]}"
                              for x in r["reports"] if x.get("right") and x["named"])
            if c and c.get("right"):
                right += ("; " if right else "") + "compare " + "/".join(yn[c["right"][k]] for k in ("seq", "op", "ranks"))
            run = "plain, DEBUG=" + r["debug"] if r["mode"] == "seed" else "under lockstep, DEBUG=OFF"
            md.append(f"| {r['case']} ({r['debug_row']}) | {run} | {r['rc']} ({r['elapsed_s']} s) | "
                      f"{r['ranks_returned']} | {rep} | {named.replace('|', '/')} | {right or '-'} | {cs} |")
        md += ["", "Per-collective cost (all_reduce + synchronize, median us; ratios to 'neither'):", "",
               "| size | neither | DETAIL | lockstep | DETAIL / neither | lockstep / neither |",
               "|---|---|---|---|---|---|"]
        for size in ("8B", "1MiB"):
            nb = cost.get(("A", "plain", size))
            de = cost.get(("A", "detail", size))
            lsv = cost.get(("B", "plain", size))
            md.append(f"| {size} | {f3(nb)} | {f3(de)} | {f3(lsv)} | "
                      f"{f3(de / nb) if nb and de else 'n/a'} | {f3(lsv / nb) if nb and lsv else 'n/a'} |")
        md.append("")
        md.append("neither and DETAIL: one process, interleaved rounds; lockstep: a second process "
                  "(preloading is per process) started right after, same sizes and rounds.")
        self.summary["steps"]["torch"] = {
            "matrix": [{k: r.get(k) for k in ("case", "debug_row", "mode", "rc", "ranks_returned")}
                       for r in results],
            "cost_us": {"/".join(k): v for k, v in cost.items()}}
        self.md += md + [""]

    def torch_cost(self):
        script = os.path.join(self.root, "gpu_tests", "torch_cost.py")
        cost = {}
        for tag, groups, ls in (("A", "plain,detail", False), ("B", "plain", True)):
            if ls and not self.have_run:
                continue
            if self.left() < 45:
                break
            tr = os.path.join(self.work, "traces", "torch-cost") if ls else None
            rc, lines, _ = self.torchrun(f"torch-cost-{tag}", [script, tag, groups, 5, 200],
                                         {"TORCH_DISTRIBUTED_DEBUG": "OFF"}, tr, 60, 90)
            for e in self.events(lines):
                if "median_us" in e:
                    cost[(tag, e["group"], e["size"])] = e["median_us"]
        return cost

    # ------------------------------------------------------------ step 5
    def step_bench(self):
        prog = os.path.join(self.bin, "gpu_allreduce_bench")
        csvp = os.path.join(self.out, "bench_allreduce.csv")
        if os.path.exists(csvp):
            os.remove(csvp)
        rounds = int(os.environ.get("GT_BENCH_ROUNDS", "3"))
        labels = [("plain", None, {})] + self.variants
        for r in range(rounds):
            # each round a rotation of the labels: drift falls on all of them alike
            for label, ls, extra in labels[r % len(labels):] + labels[:r % len(labels)]:
                if label != "plain" and not self.have_run:
                    continue
                if self.left() < 25:
                    break
                cmd = self.mpirun([prog, csvp, f"{label}-r{r}", 10000, 200, 256])
                env = None
                if label != "plain":
                    cmd = self.under_lockstep(os.path.join(self.work, "traces", f"bench-{label}-r{r}"), cmd, 60, ls=ls)
                    env = dict(os.environ, **extra)
                self.run(f"bench-{label}-r{r}", cmd, 90, env=env)
        rows = list(csv.DictReader(open(csvp))) if os.path.exists(csvp) else []
        md = [f"## 5. ncclAllReduce latency with and without lockstep ({self.n} ranks; "
              "one latency = call + cudaStreamSynchronize, host clock; medians)", ""]
        res = {}
        for size in ("8", str(256 << 20)):
            def med(pred):
                v = [float(x["median_us"]) for x in rows if x["bytes"] == size and pred(x)]
                return statistics.median(v) if v else None
            plain = med(lambda x: x["label"].startswith("plain-") and x["variant"] == "wrapped")
            lsw = med(lambda x: x["label"].startswith("lockstep-") and x["variant"] == "wrapped")
            lsd = med(lambda x: x["label"].startswith("lockstep-") and x["variant"] == "direct")
            pd = med(lambda x: x["label"].startswith("plain-") and x["variant"] == "direct")
            res[size] = {"plain_us": plain, "plain_direct_us": pd, "lockstep_wrapped_us": lsw,
                         "lockstep_direct_us": lsd,
                         "in_process_ratio": lsw / lsd if lsw and lsd else None,
                         "noise_floor_ratio": plain / pd if plain and pd else None,
                         "cross_process_ratio": lsw / plain if lsw and plain else None}
        md += ["| size | plain (us) | under lockstep: interposed (us) | under lockstep: NCCL direct (us) | "
               "in-process ratio | cross-process ratio | noise floor (plain/plain) | target |",
               "|---|---|---|---|---|---|---|---|"]
        for size, lab, tgt in (("8", "8 B", "<= 1.03"), (str(256 << 20), "256 MiB", "<= 1.005")):
            x = res[size]
            md.append(f"| {lab} | {f3(x['plain_us'])} | {f3(x['lockstep_wrapped_us'])} | "
                      f"{f3(x['lockstep_direct_us'])} | {f3(x['in_process_ratio'])} | "
                      f"{f3(x['cross_process_ratio'])} | {f3(x['noise_floor_ratio'])} | {tgt} |")
        md += ["", f"{rounds} rounds, plain and lockstep processes alternating; each process: 10000 "
               "8-byte and 200 256-MiB iterations per variant, the two variants alternating per "
               "iteration. In-process ratio = interposed ncclAllReduce / NCCL's own symbol from "
               "libnccl.so.2 in the same lockstep process (everything else equal). Values are "
               "medians over ranks and rounds of per-process medians.", ""]
        if len(self.variants) > 1 or rows:
            md += ["| size | process | interposed median (us) | p95 | NCCL direct median (us) | p95 | "
                   "interposed / plain | direct / plain | interposed / direct, in process |",
                   "|---|---|---|---|---|---|---|---|---|"]
            var = {}
            for size, lab in (("8", "8 B"), (str(256 << 20), "256 MiB")):
                def med2(label, variant, col):
                    v = [float(x[col]) for x in rows if x["bytes"] == size and x["variant"] == variant
                         and x["label"].rsplit("-r", 1)[0] == label]
                    return statistics.median(v) if v else None
                pw = med2("plain", "wrapped", "median_us")
                for label, _, _ in labels:
                    w, d = med2(label, "wrapped", "median_us"), med2(label, "direct", "median_us")
                    w95, d95 = med2(label, "wrapped", "p95_us"), med2(label, "direct", "p95_us")
                    ip = [float(a["median_us"]) / float(b["median_us"]) for a in rows for b in rows
                          if a["bytes"] == size == b["bytes"] and a["label"] == b["label"]
                          and a["rank"] == b["rank"] and a["label"].rsplit("-r", 1)[0] == label
                          and a["variant"] == "wrapped" and b["variant"] == "direct" and float(b["median_us"]) > 0]
                    inproc = statistics.median(ip) if ip else None
                    # per-process medians, sorted: processes run in modes (~0.5 / ~0.8 / ~1.0 us
                    # per 8-byte call on one H200), so the spread says more than one median
                    per_proc = sorted(float(a["median_us"]) for a in rows if a["bytes"] == size
                                      and a["variant"] == "direct" and a["label"].rsplit("-r", 1)[0] == label)
                    x = {"wrapped_us": w, "wrapped_p95_us": w95, "direct_us": d, "direct_p95_us": d95,
                         "in_process": inproc, "direct_per_process_us": per_proc,
                         "wrapped_vs_plain": w / pw if w and pw else None,
                         "direct_vs_plain": d / pw if d and pw else None}
                    var.setdefault(size, {})[label] = x
                    md.append(f"| {lab} | {label} | {f3(w)} | {f3(w95)} | {f3(d)} | {f3(d95)} | "
                              f"{f3(x['wrapped_vs_plain'])} | {f3(x['direct_vs_plain'])} | {f3(inproc)} |")
            for label, _, _ in labels:
                pp = var.get("8", {}).get(label, {}).get("direct_per_process_us") or []
                if pp:
                    md.append(f"- 8 B, {label}, NCCL's own symbol, per process (us): " + " ".join(f3(v) for v in pp))
            md += ["", "Per process label: medians over rounds of per-process medians (p95: of per-process "
                   "p95s); ratios against the plain process's interposed (= NCCL's own) symbol; the "
                   "in-process ratio is the median over processes of interposed / direct. Labels: "
                   "lockstep = this tree; defer = this tree with LOCKSTEP_DEFER_US; base = the baseline "
                   "tree (GT_BASE_ROOT); others: GT_VARIANTS (their environment in summary.json's variants).", ""]
            res["variants"] = var
        self.summary["steps"]["bench"] = res
        self.md += md

    # ------------------------------------------------------------ driver costs
    def step_drivercost(self):
        """What each driver call the recorder makes costs alone and inside a launch-bound
        loop, and what a thread querying events beside it costs (no lockstep involved)."""
        prog = os.path.join(self.bin, "gpu_driver_cost")
        csvp = os.path.join(self.out, "driver_cost.csv")
        rc, lines, _ = self.run("driver_cost", [prog, csvp, 20000], 120)
        rows = list(csv.DictReader(open(csvp))) if os.path.exists(csvp) else []
        md = ["## Driver calls: cost alone and in an 8-byte ncclAllReduce + sync loop (one GPU, no lockstep)",
              "", "| part | what | median (ns) | p95 (ns) | n |", "|---|---|---|---|---|"]
        md += [f"| {r['part']} | {r['name']} | {r['median_ns']} | {r['p95_ns']} | {r['n']} |" for r in rows]
        md += [""]
        self.summary["steps"]["drivercost"] = {"rc": rc, "rows": rows}
        self.md += md

    # ------------------------------------------------------------ host cost, in one process
    def step_ab(self):
        """bench/gpu_hostcost_ab.c: the recorder's host cost with the process's speed level
        cancelled out. Each lockstep process runs phase A0 (NCCL's own symbols before the
        recorder starts), then A (own symbols, recorder running) and B (interposed)
        alternating; plain processes run the same (all three phases are NCCL's function:
        the noise floor); thread/map/pin are plain processes alternating A with B = an idle
        sleeping thread / a 192 MiB shared mapping / pinned to one CPU. GT_AB_PROCS
        processes per label (default 6, labels rotating), GT_AB_ROUNDS rounds of
        GT_AB_ITERS iterations per phase (8, 2000)."""
        prog = os.path.join(self.bin, "gpu_hostcost_ab")
        csvp = os.path.join(self.out, "hostcost_ab.csv")
        if os.path.exists(csvp):
            os.remove(csvp)
        procs = int(os.environ.get("GT_AB_PROCS", "6"))
        rounds, iters = os.environ.get("GT_AB_ROUNDS", "8"), os.environ.get("GT_AB_ITERS", "2000")
        pin = ["taskset", "-c", os.environ["GT_TASKSET"]] if os.environ.get("GT_TASKSET") else []
        labels = ["plain"] + [v[0] for v in self.variants] + ["thread", "map", "pin"]
        byname = {v[0]: v for v in self.variants}
        dev = {}  # process -> LOCKSTEP_DEVICE_STATS line
        runs = {}
        for k in range(procs):
            for j in range(len(labels)):
                lab = labels[(j + k) % len(labels)]  # rotating order
                if self.left() < 30:
                    break
                name = f"{lab}#{k}"
                mode = lab if lab in ("thread", "map", "pin") else "ab"
                argv = [prog, csvp, name, mode, rounds, iters]
                env = dict(os.environ)
                if lab in byname:
                    _, ls, extra = byname[lab]
                    env.update(extra)
                    env["LOCKSTEP_DEVICE_STATS"] = "1"
                    argv = self.under_lockstep(os.path.join(self.work, "traces", "ab", name), argv, ls=ls)
                rc, lines, _ = self.run(f"ab-{lab}-{k}", pin + argv, 120, env=env)
                runs[name] = rc
                for _, ln in lines:
                    if "lockstep: device:" in ln:
                        dev[name] = ln.split("lockstep: device: ", 1)[1]
        rows = list(csv.DictReader(open(csvp))) if os.path.exists(csvp) else []
        per = {}  # process -> (phase, metric) -> (median, p95), pooled rows
        for r in rows:
            if r["round"] == "-1":
                per.setdefault(r["label"], {})[(r["phase"], r["metric"])] = (float(r["median_ns"]), float(r["p95_ns"]))
        res = {"rc": runs, "device_stats": dev, "labels": {}}

        def med(v):
            v = [x for x in v if x is not None]
            return statistics.median(v) if v else None

        def ratio(a, b):
            return a / b if a and b else None

        for lab in labels:
            ps = [p for n, p in per.items() if n.split("#")[0] == lab]
            if not ps:
                continue
            d = {"processes": len(ps)}
            for ph in ("A0", "A", "B"):
                for m in ("allreduce_sync", "group_host"):
                    d[f"{ph}/{m}/median_ns"] = med([p.get((ph, m), (None, None))[0] for p in ps])
                    d[f"{ph}/{m}/p95_ns"] = med([p.get((ph, m), (None, None))[1] for p in ps])
                    d[f"{ph}/{m}/per_process"] = [p.get((ph, m), (None, None))[0] for p in ps]
            for m in ("allreduce_sync", "group_host"):  # medians of per-process ratios
                for a, b in (("B", "A"), ("A", "A0"), ("B", "A0")):
                    d[f"{a}/{b}/{m}"] = med([ratio(p.get((a, m), (None,))[0], p.get((b, m), (None,))[0]) for p in ps])
            res["labels"][lab] = d
        pl = res["labels"].get("plain", {})
        for lab, d in res["labels"].items():  # across processes, against plain processes' A0
            for m in ("allreduce_sync", "group_host"):
                for ph in ("A", "B"):
                    d[f"{ph}/plain/{m}"] = ratio(d.get(f"{ph}/{m}/median_ns"), pl.get(f"A0/{m}/median_ns"))
        self.summary["steps"]["ab"] = res
        us = lambda x: "n/a" if x is None else f"{x / 1000:.3f}"
        md = ["## Host cost per call, within one process (bench/gpu_hostcost_ab.c, one rank, 8 B)", "",
              f"{procs} processes per label, {rounds} rounds x {iters} iterations per phase. A0: NCCL's own symbols "
              "before the recorder starts; A: own symbols, recorder running; B: interposed (plain: all NCCL's). "
              "thread/map/pin: plain processes, A = as is, B = an idle thread / a 192 MiB mapping / pinned. "
              "Medians over processes of per-process medians (p95: of per-process p95s), µs; ratios: medians "
              "of per-process ratios. Targets: interposed <= 1.15x plain (B/A0), own symbol <= 1.03x (A/A0), "
              "group interval <= 1.3x (group B/A0).", "",
              "| label | n | AR+sync A0 | A | B | p95 A0 / A / B | B/A | A/A0 | B/A0 | group A0 | A | B | p95 A0 / A / B | B/A | A/A0 | B/A0 | B / plain A0: AR, group |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for lab, d in res["labels"].items():
            cells = [lab, str(d["processes"])]
            for m in ("allreduce_sync", "group_host"):
                cells += [us(d.get(f"{ph}/{m}/median_ns")) for ph in ("A0", "A", "B")]
                cells.append(" / ".join(us(d.get(f"{ph}/{m}/p95_ns")) for ph in ("A0", "A", "B")))
                cells += [f3(d.get(f"{a}/{b}/{m}")) for a, b in (("B", "A"), ("A", "A0"), ("B", "A0"))]
            cells.append(f"{f3(d.get('B/plain/allreduce_sync'))}, {f3(d.get('B/plain/group_host'))}")
            md.append("| " + " | ".join(cells) + " |")
        md += ["", "Per-process medians of A0, AR+sync (µs; the speed levels): " + "; ".join(
            f"{lab} " + " ".join(us(x) for x in d["A0/allreduce_sync/per_process"] if x is not None)
            for lab, d in res["labels"].items() if d["A0/allreduce_sync/per_process"][0] is not None), ""]
        if dev:
            md += ["LOCKSTEP_DEVICE_STATS per process: " + "; ".join(f"{k}: {v}" for k, v in sorted(dev.items())), ""]
        self.md += md
        readme = os.path.join(self.out, "README.md")
        if not os.path.exists(readme):
            with open(readme, "w") as f:
                f.write(f"# {self.summary['date']}, {self.summary['machine']}: host cost per call in one process\n\n"
                        f"Command: `GT_STEPS={os.environ.get('GT_STEPS', 'ab')} gpu_tests/run_all.sh {self.n} OUT` "
                        f"(GT_AB_PROCS={procs}, GT_AB_ROUNDS={rounds}, GT_AB_ITERS={iters}"
                        + "".join(f", {k}={os.environ[k]}" for k in ("GT_VARIANTS", "GT_DEFER_US", "GT_TASKSET")
                                  if os.environ.get(k)) + "); tree: see summary.json env.source.\n"
                        "Raw rows: hostcost_ab.csv (label#process, mode, phase, metric, round (-1 pooled), n, "
                        "median_ns, p95_ns).\n\nReading: (to be written)\n\n" + "\n".join(md) + "\n")

    # ------------------------------------------------------------ 6. online
    def step_online(self):
        """Detection latency of the side channel (divergent call -> report line, same
        host CLOCK_MONOTONIC) for op, count and skip, and all-reduce cost with online
        detection on / off / no lockstep in interleaved rounds. Bounded: <= ~90 s."""
        md = [f"## 6. Online detection ({self.n} ranks, LOCKSTEP_TIMEOUT 6 s, "
              "LOCKSTEP_SKIP_MS 500)", ""]
        res = {"latency_ms": {}, "lines": {}, "bench": {}}
        if not self.have_run:
            self.md += md + ["lockstep not available: skipped", ""]
            self.summary["steps"]["online"] = res
            return
        prog = os.path.join(self.bin, "online_latency")
        pat_t = re.compile(r"\[t=([0-9]+\.[0-9]+)\]")
        pat_d = re.compile(r"DIVERGE rank=\d+ how=(\w+) t=([0-9]+\.[0-9]+)")
        os.environ["LOCKSTEP_ONLINE_TIMESTAMPS"] = "1"
        try:
            for how in ("op", "count", "skip", "op-xhost"):
                if self.left() < 30:
                    break
                # 4 s: the report comes within a second; the program then ends itself
                argv = [prog, how.split("-")[0], 4]
                if how.endswith("-xhost"):  # each rank its own host key: the logs carry it
                    argv = ["sh", "-c", 'LOCKSTEP_ONLINE_HOST=host$OMPI_COMM_WORLD_RANK exec "$0" "$@"'] + argv
                cmd = self.mpirun(["-x", "LOCKSTEP_ONLINE_TIMESTAMPS"] + argv)
                cmd = self.under_lockstep(os.path.join(self.work, "traces", f"online-{how}"), cmd, 6)
                rc, lines, el = self.run(f"online-{how}", cmd, 25)
                t_div, first = None, None
                for _, ln in lines:
                    m = pat_d.search(ln)
                    if m:
                        t_div = float(m.group(2))
                    if ln.startswith("lockstep: rank") and ("differs" in ln or "skipped" in ln):
                        m = pat_t.search(ln)
                        if m and (first is None or float(m.group(1)) < first[0]):
                            first = (float(m.group(1)), ln)
                lat = (first[0] - t_div) * 1e3 if first and t_div else None
                res["latency_ms"][how] = lat
                res["lines"][how] = first[1] if first else None
        finally:
            os.environ.pop("LOCKSTEP_ONLINE_TIMESTAMPS", None)
        md += ["| divergence | latency: divergent call -> first report (ms) | target | first report |",
               "|---|---|---|---|"]
        for how, tgt in (("op", "< 100"), ("count", "< 100"), ("skip", "well before 6000"),
                         ("op-xhost", "< 2 x 50 ms poll + filesystem")):
            lat = res["latency_ms"].get(how)
            md.append(f"| {how} | {f3(lat) if lat is not None else 'not detected'} | {tgt} | "
                      f"`{(res['lines'].get(how) or '')[:160]}` |")
        # All-reduce cost, online on vs off vs no lockstep. One process against another
        # differs by ~1 % at 256 MiB (GPU clocks, where buffers land), more than the
        # effect: so several rounds, each running the three labels back to back in an
        # order that rotates through all six permutations (drift falls on every label
        # alike), and the ratios taken per round (paired), their median reported.
        bprog = os.path.join(self.bin, "gpu_allreduce_bench")
        csvp = os.path.join(self.out, "bench_online.csv")
        if os.path.exists(csvp):
            os.remove(csvp)
        labels = ("plain", "online-on", "online-off")
        perms = ((0, 1, 2), (1, 2, 0), (2, 0, 1), (0, 2, 1), (2, 1, 0), (1, 0, 2))
        small, large, nbufs = 2000, 400, 4
        max_rounds, bench_s = 6, 50.0  # ~2.5 s a process: 18 processes fit in ~50 s
        t_bench = time.monotonic()
        rounds_done = 0
        for r in range(max_rounds):
            if self.left() < 25 or time.monotonic() - t_bench > bench_s - 8:
                break
            for li in perms[r % len(perms)]:
                label = labels[li]
                tag = f"{label}-r{r}"
                cmd = self.mpirun(["-x", "LOCKSTEP_ONLINE", bprog, csvp, tag, small, large, 256, nbufs])
                if label != "plain":
                    cmd = self.under_lockstep(os.path.join(self.work, "traces", f"bench-{tag}"), cmd, 60)
                os.environ["LOCKSTEP_ONLINE"] = "0" if label == "online-off" else "1"
                try:
                    self.run(f"bench-{tag}", cmd, 40)
                finally:
                    os.environ.pop("LOCKSTEP_ONLINE", None)
            rounds_done = r + 1
        rows = list(csv.DictReader(open(csvp))) if os.path.exists(csvp) else []
        res["bench_rounds"] = rounds_done
        for size in ("8", str(256 << 20)):
            def proc(lab, r):  # one process: mean over its ranks of their medians
                v = [float(x["median_us"]) for x in rows if x["bytes"] == size and
                     x["label"] == f"{lab}-r{r}" and x["variant"] == "wrapped"]
                return statistics.mean(v) if v else None
            per = {lab: [proc(lab, r) for r in range(rounds_done)] for lab in labels}
            def med(lab):
                v = [x for x in per[lab] if x]
                return statistics.median(v) if v else None
            def paired(a, b):  # per-round ratios a/b where both processes ran
                return [x / y for x, y in zip(per[a], per[b]) if x and y]
            on_none, on_off = paired("online-on", "plain"), paired("online-on", "online-off")
            p, on, off = med("plain"), med("online-on"), med("online-off")
            res["bench"][size] = {
                "plain_us": p, "online_on_us": on, "online_off_us": off,
                "on_vs_plain": statistics.median(on_none) if on_none else None,
                "on_vs_off": statistics.median(on_off) if on_off else None,
                "on_vs_plain_rounds": on_none, "on_vs_off_rounds": on_off,
                "per_round_us": per}
        tq = self.summary["steps"].get("torch", {}).get("cost_us", {})
        nb, de = tq.get("A/plain/8B"), tq.get("A/detail/8B")
        md += ["", "| size | no lockstep (us) | online off (us) | online on (us) | on/none | on/off | "
               "per-round on/off (min-max) | PyTorch DETAIL/neither (step 4) | target |",
               "|---|---|---|---|---|---|---|---|---|"]
        for size, lab, tgt in (("8", "8 B", "<= 1.03"), (str(256 << 20), "256 MiB", "<= 1.005")):
            x = res["bench"].get(size, {})
            det = f3(de / nb) if size == "8" and nb and de else "n/a"
            ro = x.get("on_vs_off_rounds") or []
            spread = f"{f3(min(ro))}-{f3(max(ro))}" if ro else "n/a"
            md.append(f"| {lab} | {f3(x.get('plain_us'))} | {f3(x.get('online_off_us'))} | "
                      f"{f3(x.get('online_on_us'))} | {f3(x.get('on_vs_plain'))} | "
                      f"{f3(x.get('on_vs_off'))} | {spread} | {det} | {tgt} |")
        md += ["", "Latency: the divergent rank (the last) prints CLOCK_MONOTONIC just before its "
               "divergent call (or where it skips it); lockstep's lines carry [t=...] "
               "(LOCKSTEP_ONLINE_TIMESTAMPS=1); the first report on any rank counts. op-xhost: "
               "each rank gets its own LOCKSTEP_ONLINE_HOST, so they compare only through the "
               "cross-host logs (in a local directory here, not a network filesystem). Bench: "
               f"{rounds_done} rounds; each round runs one process per label (no lockstep, "
               "online on, online off) back to back, the order rotating through the six "
               f"permutations; each process {small} 8-byte and {large} 256-MiB iterations (the "
               f"large ones rotating over {nbufs} buffers), interposed variant. Times: median over "
               "rounds of each process's rank-mean median; ratios: median over rounds of that "
               "round's ratio (paired, so drift between rounds cancels).", ""]
        ires, imd = self.online_inproc()
        res["inproc"] = ires
        md += imd
        self.summary["steps"]["online"] = res
        self.md += md

    def online_inproc(self):
        """Online on/off/none inside one process (gpu_allreduce_bench --online): blocks
        of the three arms in rotating order, the channel paused and resumed with
        lockstep_online_set_enabled. Processes alternate between lockstep (online on,
        LOCKSTEP_ONLINE_STATS=1 so the published/paused counts can be checked) and
        plain (all arms NCCL's own function: the method's noise floor). <= ~100 s."""
        prog = os.path.join(self.bin, "gpu_allreduce_bench")
        csvp = os.path.join(self.out, "bench_online_inproc.csv")
        if os.path.exists(csvp):
            os.remove(csvp)
        res = {"processes": [], "stats_lines": {}}
        sb, snb, lb, lnb = 4000, 36, 60, 18
        plan = ["lockstep-r0", "plain-r0", "lockstep-r1", "plain-r1", "lockstep-r2"]
        t_start = time.monotonic()
        for tag in plan:
            if not self.have_run and tag.startswith("lockstep"):
                continue
            if self.left() < 40 or time.monotonic() - t_start > 110:
                break
            cmd = self.mpirun(["-x", "LOCKSTEP_ONLINE_STATS", prog, "--online", csvp, tag,
                               sb, snb, lb, lnb, 256, 4])
            if tag.startswith("lockstep"):
                cmd = self.under_lockstep(os.path.join(self.work, "traces", f"inproc-{tag}"), cmd, 60)
            os.environ["LOCKSTEP_ONLINE_STATS"] = "1"
            try:
                rc, lines, _ = self.run(f"bench-inproc-{tag}", cmd, 60)
            finally:
                os.environ.pop("LOCKSTEP_ONLINE_STATS", None)
            res["processes"].append({"tag": tag, "rc": rc})
            res["stats_lines"][tag] = [ln for _, ln in lines if ": online: comm " in ln]
        rows = list(csv.DictReader(open(csvp))) if os.path.exists(csvp) else []
        res["toggle"] = {r["label"]: int(r["toggle"]) for r in rows}

        def ratios(kind, size, stat):  # per block: rank-mean of the arm's block statistic
            per = {}
            for r in rows:
                if r["label"].startswith(kind) and r["bytes"] == size:
                    per.setdefault((r["label"], int(r["block"])), {}).setdefault(
                        r["arm"], []).append(float(r[stat]))
            out = {"on/off": [], "on/none": [], "off/none": []}
            arms = {"none": [], "off": [], "on": []}
            for key in sorted(per):
                a = {k: statistics.mean(v) for k, v in per[key].items()}
                if len(a) < 3:
                    continue
                for k in arms:
                    arms[k].append(a[k])
                out["on/off"].append(a["on"] / a["off"])
                out["on/none"].append(a["on"] / a["none"])
                out["off/none"].append(a["off"] / a["none"])
            return out, arms

        md = ["### Online cost inside one process (on / off / none interleaved)", "",
              "| process | size | blocks | none (us) | off (us) | on (us) | on/none (95 % CI) | "
              "on/off (95 % CI) | on/off per block p10-p90 (min-max) | on/off of block means | target |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
        res["result"] = {}
        for kind in ("lockstep", "plain"):
            for size, lab, tgt in (("8", "8 B", "<= 1.03"), (str(256 << 20), "256 MiB", "<= 1.005")):
                rm, arms = ratios(kind, size, "median_us")
                rmean, _ = ratios(kind, size, "mean_us")
                if not rm["on/off"]:
                    continue
                oo = rm["on/off"]
                x = {"blocks": len(oo),
                     "none_us": statistics.median(arms["none"]),
                     "off_us": statistics.median(arms["off"]),
                     "on_us": statistics.median(arms["on"]),
                     "on_vs_none": statistics.median(rm["on/none"]),
                     "on_vs_off": statistics.median(oo),
                     "off_vs_none": statistics.median(rm["off/none"]),
                     "on_vs_off_p10": pct(oo, 0.1), "on_vs_off_p90": pct(oo, 0.9),
                     "on_vs_off_min": min(oo), "on_vs_off_max": max(oo),
                     "on_vs_none_p10": pct(rm["on/none"], 0.1),
                     "on_vs_none_p90": pct(rm["on/none"], 0.9),
                     "on_vs_off_ci95": median_ci(oo),
                     "on_vs_none_ci95": median_ci(rm["on/none"]),
                     "on_vs_off_of_means": statistics.median(rmean["on/off"]),
                     "on_vs_none_of_means": statistics.median(rmean["on/none"]),
                     "per_block_on_vs_off": oo, "per_block_on_vs_none": rm["on/none"]}
                res["result"][f"{kind}/{size}"] = x
                md.append(f"| {kind} | {lab} | {x['blocks']} | {f3(x['none_us'])} | {f3(x['off_us'])} | "
                          f"{f3(x['on_us'])} | {f3(x['on_vs_none'])} ({f3(x['on_vs_none_ci95'][0])}-"
                          f"{f3(x['on_vs_none_ci95'][1])}) | {f3(x['on_vs_off'])} ({f3(x['on_vs_off_ci95'][0])}-"
                          f"{f3(x['on_vs_off_ci95'][1])}) | "
                          f"{f3(x['on_vs_off_p10'])}-{f3(x['on_vs_off_p90'])} "
                          f"({f3(x['on_vs_off_min'])}-{f3(x['on_vs_off_max'])}) | "
                          f"{f3(x['on_vs_off_of_means'])} | {tgt if kind == 'lockstep' else 'noise floor'} |")
        md += ["", f"Processes: {', '.join(p['tag'] + ' rc=' + str(p['rc']) for p in res['processes'])}. "
               f"Each process per size: blocks of {sb} (8 B) / {lb} (256 MiB, 4 buffers) iterations, "
               f"{snb} / {lnb} blocks per arm, the three arms in an order rotating through the six "
               "permutations, each block after a 25 ms sleep (the watchdog publishes what an 'on' "
               "block left) and 20 direct calls. none = NCCL's own symbol, off/on = the interposed "
               "symbol with the side channel paused/publishing (lockstep_online_set_enabled). "
               "Per block: rank-mean of the block's median; ratios per block (the three arms of a "
               "block index ran within ~0.3 s of each other), their median over blocks of all "
               "processes of a kind; 'plain' processes have no lockstep: all arms are NCCL's "
               "function, so their ratios are the method's noise floor. 95 % CI: bootstrap of the "
               "median over blocks (4000 resamples). Toggle column of the CSV: "
               f"{json.dumps(res['toggle'])}.", ""]
        for tag, ls_ in res["stats_lines"].items():
            for ln in ls_:
                md.append(f"- `{tag}`: `{ln.strip()[:160]}`")
        md.append("")
        return res, md

    # ------------------------------------------------------------ 7. stress
    def step_stress(self):
        """The recorder under stress on real NCCL (src/stress_gpu.c): 8 threads x 4
        communicators per rank, 400 collectives each (every 10th of one kind an invalid
        root), then the same with thread 0 aborting communicator 0 half-way. Pass: the
        program saw every expected result with and without lockstep (it exits 1
        otherwise) and printed the same counts; per rank and communicator the trace
        numbers the calls 0..n-1, as many as the program made; the abort is recorded;
        compare names nothing but the injected argument errors (api-error). ~1 min."""
        md = [f"## 7. Stress ({self.n} ranks, 8 threads x 4 communicators per rank)", ""]
        prog = os.path.join(self.bin, "stress_gpu")
        res = {}
        for mode in ("threads", "abort"):
            if self.left() < 40:
                break
            r = {}
            argv = [prog, mode, 8, 400]
            rc, lines, el = self.run(f"stress-{mode}-plain", self.mpirun(argv), 60)
            plain = sorted(ln for _, ln in lines if ln.startswith("stress rank"))
            r.update(plain_rc=rc, plain_s=round(el, 2))
            if not self.have_run:
                r["pass"] = rc == 0
                res[mode] = r
                continue
            td = os.path.join(self.work, "traces", f"stress-{mode}")
            rc2, lines2, el2 = self.run(f"stress-{mode}-lockstep",
                                        self.under_lockstep(td, self.mpirun(argv), 60), 90)
            under = sorted(ln for _, ln in lines2 if ln.startswith("stress rank"))
            r.update(lockstep_rc=rc2, lockstep_s=round(el2, 2),
                     same_output=plain == under and len(plain) == self.n)
            calls = {}
            for ln in under:
                f = ln.split()
                calls[int(f[2])] = int(f[4])
            recs, src = self.trace_records(td, f"stress-{mode}")
            numbered, counts, aborts = True, {}, {}
            for rank, rs in recs.items():
                by = {}
                for x in rs:
                    if x["api"] == "ncclCommAbort":
                        aborts[rank] = aborts.get(rank, 0) + 1
                    if x["seq"] is not None and x["api"].startswith("nccl"):
                        by.setdefault(x["comm"], []).append(x["seq"])
                numbered &= len(by) == 4 and all(sorted(v) == list(range(len(v))) for v in by.values())
                counts[rank] = sum(len(v) for v in by.values())
            r.update(trace_source=src, trace_numbered=numbered, trace_calls=counts, program_calls=calls,
                     aborts_recorded=aborts)
            crc, doc = self.tool_json(f"stress-{mode}-compare", ["compare", "--format=json", td])
            classes = sorted({d.get("class") for d in (doc or {}).get("divergences", [])})
            r.update(compare_rc=crc, compare_classes=classes)
            want_abort = 1 if mode == "abort" else 0
            r["pass"] = (rc == 0 and rc2 == 0 and r["same_output"] and numbered and
                         len(counts) == self.n and all(counts.get(k) == v for k, v in calls.items()) and
                         all(aborts.get(k, 0) == want_abort for k in range(self.n)) and
                         doc is not None and classes == ["api-error"])
            res[mode] = r
        md += ["| mode | pass | plain rc / s | lockstep rc / s | same output | trace numbered 0..n-1 | "
               "calls: trace / program | aborts recorded | compare classes |",
               "|---|---|---|---|---|---|---|---|---|"]
        for mode, r in res.items():
            md.append(f"| {mode} | {'PASS' if r.get('pass') else 'FAIL'} | {r.get('plain_rc')} / "
                      f"{r.get('plain_s')} | {r.get('lockstep_rc')} / {r.get('lockstep_s')} | "
                      f"{r.get('same_output')} | {r.get('trace_numbered')} | {r.get('trace_calls')} / "
                      f"{r.get('program_calls')} | {r.get('aborts_recorded')} | {r.get('compare_classes')} |")
        md += ["", "The threads take one global turn order, identical on every rank, and wait for "
               "each collective before passing the turn (NCCL communicators used concurrently in "
               "different orders can deadlock by themselves). The CPU tests (runtime.stress_*) "
               "cover the free-running and fork/signal/exit cases against the stand-in.", ""]
        self.summary["steps"]["stress"] = res
        self.md += md

    # ------------------------------------------------------------ finish
    def verdicts(self):
        """One line per step for the top of the report and the console."""
        st, out = self.summary["steps"], []
        n = st.get("native_semantics")
        if n:
            out.append(f"native semantics: {'PASS' if n['pass'] else 'FAIL'} ({n['rows']}/{n['expected_rows']} rank rows); "
                       f"trace agrees: {'yes' if n['trace_agrees'] else 'NO'} (source: {n['trace_source']})")
        sp = st.get("split")
        if sp:
            out.append(f"split of a non-blocking parent: {'PASS' if sp['pass'] else 'FAIL'} "
                       f"({sp['rows']}/{sp['expected_rows']} rank rows match NCCL 2.28.3's behavior)")
        t = st.get("completion_timing")
        if t:
            out.append("completion: " + "; ".join(
                f"{k}: ready after GroupEnd {v['ready_after_group_end']}/{v['rank_cycles']}, "
                f"host {f3(v['host_median_us'])} us vs CUDA {f3(v['cuda_median_us'])} us"
                + (f", lockstep saw completion after GroupEnd {v['ls_completion_after_group_end']}"
                   if v.get("ls_completion_after_group_end") else "") for k, v in t.items()))
        m = st.get("failure_matrix")
        if m:
            ok = sum(1 for v in m.values() if v == "PASS")
            out.append(f"failure matrix: {ok}/{len(m)} PASS (" + ", ".join(
                f"{os.path.splitext(os.path.basename(k))[0]} {v}" for k, v in m.items()) + ")")
        tq = st.get("torch")
        if tq:
            c = tq.get("cost_us", {})
            nb, de, ls = c.get("A/plain/8B"), c.get("A/detail/8B"), c.get("B/plain/8B")
            out.append(f"pytorch: {len(tq['matrix'])} runs; 8 B all_reduce DETAIL/neither "
                       f"{f3(de / nb) if nb and de else 'n/a'}, lockstep/neither {f3(ls / nb) if nb and ls else 'n/a'}")
        b = st.get("bench")
        if b:
            x8, xl = b.get("8", {}), b.get(str(256 << 20), {})
            out.append(f"bench: 8 B in-process {f3(x8.get('in_process_ratio'))} (target <= 1.03), cross-process "
                       f"{f3(x8.get('cross_process_ratio'))}; 256 MiB in-process {f3(xl.get('in_process_ratio'))} "
                       f"(target <= 1.005), cross-process {f3(xl.get('cross_process_ratio'))}")
        o = st.get("online")
        if o:
            lat = o.get("latency_ms", {})
            out.append("online: latency ms " + ", ".join(
                f"{k} {f3(v) if v is not None else 'not detected'}" for k, v in lat.items())
                + "; 8 B on/none " + f3(o.get("bench", {}).get("8", {}).get("on_vs_plain"))
                + ", 256 MiB on/off " + f3(o.get("bench", {}).get(str(256 << 20), {}).get("on_vs_off"))
                + f" ({o.get('bench_rounds', 0)} rounds)"
                + "; in one process: 8 B on/off "
                + f3(o.get("inproc", {}).get("result", {}).get("lockstep/8", {}).get("on_vs_off"))
                + " on/none "
                + f3(o.get("inproc", {}).get("result", {}).get("lockstep/8", {}).get("on_vs_none"))
                + ", 256 MiB on/off "
                + f3(o.get("inproc", {}).get("result", {}).get(f"lockstep/{256 << 20}", {}).get("on_vs_off")))
        ab = st.get("ab")
        if ab:
            for lab, d in ab.get("labels", {}).items():
                if lab in ("plain", "thread", "map", "pin"):
                    continue
                out.append(f"host cost in one process ({lab}, {d['processes']} processes): interposed/own-before-start "
                           f"{f3(d.get('B/A0/allreduce_sync'))} (target <= 1.15), own after/before start "
                           f"{f3(d.get('A/A0/allreduce_sync'))} (<= 1.03), group interval "
                           f"{f3(d.get('B/A0/group_host'))} (<= 1.3)")
        sx = st.get("stress")
        if sx:
            out.append("stress: " + ", ".join(f"{k} {'PASS' if v.get('pass') else 'FAIL'}"
                                             for k, v in sx.items()))
        return out

    def finish(self):
        head = [f"# GPU suite results: {self.summary['date']}, {self.summary['machine']}, "
                f"{self.n} ranks", "",
                "Produced by `gpu_tests/run_all.sh` (one command; see gpu_tests/README.md). "
                "Raw data beside this file: native_semantics.csv, completion_timing.csv, "
                "failure_matrix.json, torch.json, bench_allreduce.csv, summary.json, logs.tar.gz.", "",
                f"lockstep available: {json.dumps(self.summary['lockstep'])}", ""]
        self.summary["verdicts"] = self.verdicts()
        head += ["## Summary", ""] + [f"- {v}" for v in self.summary["verdicts"]] + [""]
        for n in self.summary["notes"]:
            head.append(f"- note: {n}")
        env = self.summary.get("env", {})
        if env:
            head += ["", "Machine: " + "; ".join(f"{k}: {v}" for k, v in env.items()), ""]
        name = f"{self.summary['date']}-{self.summary['machine']}.md"
        with open(os.path.join(self.out, name), "w") as f:
            f.write("\n".join(head + [""] + self.md) + "\n")
        self.summary["elapsed_s"] = round(time.monotonic() - self.t0, 1)
        with open(os.path.join(self.out, "summary.json"), "w") as f:
            json.dump(self.summary, f, indent=1, default=str)
        with tarfile.open(os.path.join(self.out, "logs.tar.gz"), "w:gz") as tf:
            for sub in ("logs", "json", "native/calls.csv"):
                p = os.path.join(self.work, sub)
                if os.path.exists(p):
                    tf.add(p, arcname=sub, filter=lambda ti: ti if ti.size < (8 << 20) else None)
        print("\n".join(self.md), flush=True)
        print("== summary\n" + "\n".join(self.summary["verdicts"]), flush=True)
        print(f"suite done in {self.summary['elapsed_s']} s; results in {self.out}", flush=True)

    def machine_env(self):
        env = {}
        for name, argv in (("gpus", ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]),
                           ("nccl", ["sh", "-c", "ls /usr/lib/x86_64-linux-gnu/libnccl.so.* 2>/dev/null | tr '\\n' ' '"]),
                           ("torch", ["python3", "-c", "import torch;print(torch.__version__, torch.cuda.nccl.version())"])):
            rc, lines, _ = self.run(f"env-{name}", argv, 30)
            env[name] = " / ".join(ln for _, ln in lines if ln.strip())[:200]
        env["source"] = self.source_tree()
        self.summary["env"] = env

    def source_tree(self):
        """The git tree id of the files this run was built from, as a commit of them would
        record it (a scratch index, so the checkout is not touched). The device copy carries
        the working tree but not always the history that goes with it, so HEAD can name an
        older commit; the tree id names the right one: `git log --format='%h %T' | grep ID`."""
        idx = os.path.join(self.work, "source.index")
        env = dict(os.environ, GIT_INDEX_FILE=idx)
        try:
            add = subprocess.run(["git", "-C", self.root, "add", "-A", "."], env=env,
                                 capture_output=True, timeout=120)
            tree = subprocess.run(["git", "-C", self.root, "write-tree"], env=env,
                                  capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as e:
            return f"unknown ({e})"
        if add.returncode or tree.returncode:
            return "unknown (not a git checkout?)"
        return f"tree {tree.stdout.strip()} (git log --format='%h %T' | grep it names the commit)"



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nranks", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--lockstep", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--budget", type=float, default=480)
    ap.add_argument("--date", default=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"))
    ap.add_argument("--machine", default=None)
    ap.add_argument("--steps", default="native,split,timing,matrix,torch,bench,online,stress")
    # not in the default list: drivercost (the driver calls' own cost, no lockstep involved),
    # ab (the host cost per call inside one process)
    a = ap.parse_args()
    a.machine = a.machine or f"h200x{a.nranks}"
    # mpirun forwards it with -x, so it must exist; fixtures wait this long at the end.
    os.environ.setdefault("FIXTURE_TIMEOUT_S", os.environ.get("GT_FIXTURE_TIMEOUT", "10"))
    s = Suite(a)
    s.machine_env()
    s.probe()
    steps = a.steps.split(",")
    for st in ("native", "split", "timing", "matrix", "torch", "bench", "online", "stress", "drivercost", "ab"):
        if st not in steps:
            continue
        if s.left() < 20:
            s.summary["notes"].append(f"step {st} skipped: time budget spent")
            s.md.append(f"## step {st}: SKIPPED (time budget spent)\n")
            continue
        print(f"== {st}", flush=True)
        try:
            getattr(s, "step_" + st)()
        except Exception as e:  # one broken step must not cost the others' results
            import traceback
            traceback.print_exc()
            s.summary["notes"].append(f"step {st} crashed: {type(e).__name__}: {e}")
            s.md.append(f"## step {st}: CRASHED ({type(e).__name__}: {e})\n")
    s.finish()
    # 1 when any verdict failed, so a caller sees it without reading the report
    return 1 if any("FAIL" in v or ": NO" in v for v in s.summary["verdicts"]) else 0


if __name__ == "__main__":
    sys.exit(main())

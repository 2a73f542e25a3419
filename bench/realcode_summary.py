#!/usr/bin/env python3
"""realcode_summary.py — summarize bench/realcode.sh's per-TU outputs (OUT/PKG/N.{json,err,rc}):
TUs analyzed, TUs that did not parse cleanly grouped by first-error reason, findings by rule,
time, crashes (signal exits) and hangs (timeouts). Prints markdown for bench/RESULTS.md and
writes OUT/findings.tsv (every finding, for the hand review).
Usage: realcode_summary.py OUT PKG..."""
import json
import os
import re
import sys
from collections import Counter

RULES = ["rank-divergent-collective", "unbalanced-group", "rank-dependent-argument",
         "ungrouped-p2p"]


def reason(msg):
    """Group a clang error into a reason class: the first error of a TU is its cause."""
    m = re.search(r"'([^']+)' file not found", msg)
    if m:
        return "missing header", m.group(1)
    m = re.search(r"error: (.*)", msg)
    text = m.group(1) if m else msg
    first = re.search(r"'([^']*)'", text)
    text = re.sub(r"'[^']*'", "'X'", text)
    text = re.sub(r" \(aka 'X'\)", "", text)
    text = text.split(";")[0][:70]
    return text, (first.group(1)[:40] if first else "")


def main():
    out, pkgs = sys.argv[1], sys.argv[2:]
    rows, reasons_md = [], []
    tsv = open(os.path.join(out, "findings.tsv"), "w")
    for pkg in pkgs:
        d = os.path.join(out, pkg)
        if not os.path.isdir(d):
            continue
        n = ok = bad = crash = hang = inerr = 0
        rules = Counter()
        reasons = Counter()
        examples = {}
        times = []
        for name in sorted(os.listdir(d)):
            if not name.endswith(".rc"):
                continue
            base = os.path.join(d, name[:-3])
            f, rc, t = open(base + ".rc").read().rstrip("\n").split("\t")
            rc, t = int(rc), float(t)
            n += 1
            times.append(t)
            if rc in (124, 137):
                hang += 1
                reasons["timeout (hang?)"] += 1
                continue
            if rc > 128:
                crash += 1
                reasons["crash: signal %d" % (rc - 128)] += 1
                continue
            if rc not in (0, 1):
                inerr += 1
                err = open(base + ".err").read().strip().splitlines()
                reasons["lint exit %d: %s" % (rc, err[0][:80] if err else "")] += 1
                continue
            try:
                doc = json.load(open(base + ".json"))
            except ValueError as e:
                inerr += 1
                reasons["bad json: %s" % e] += 1
                continue
            for tu in doc.get("tus", []):
                if tu.get("ok"):
                    ok += 1
                else:
                    bad += 1
                    errs = [e for e in tu.get("errors", []) if "too many errors" not in e]
                    key, ex = reason(errs[0]) if errs else ("errors (none listed)", "")
                    reasons[key] += 1
                    examples.setdefault(key, Counter())[ex] += 1
            for fd in doc.get("findings", []):
                rules[fd["rule"]] += 1
                tsv.write("\t".join([pkg, fd["rule"], "%s:%s" % (fd["file"], fd["line"]),
                                     fd.get("function", ""), fd["message"]]) + "\n")
        wall = open(os.path.join(d, "wall")).read().strip() if os.path.exists(
            os.path.join(d, "wall")) else "?"
        times.sort()
        med = times[len(times) // 2] if times else 0
        rows.append("| %s | %d | %d | %d | %s | %d | %d | %d | %s s (median %.1f s, max %.1f s) |" % (
            pkg, n, ok, bad, " / ".join(str(rules[r]) for r in RULES), inerr, crash, hang,
            wall, med, times[-1] if times else 0))
        if reasons:
            reasons_md.append("- **%s**: " % pkg + "; ".join(
                "%s: %d%s" % (r, c, " (e.g. %s)" % ", ".join(
                    e for e, _ in examples[r].most_common(3)) if r in examples else "")
                for r, c in reasons.most_common(8)))
    print("| package | TUs | parsed cleanly | with errors | findings (rdc / ug / rda / p2p) "
          "| lint exit 2 | crashes | hangs | wall time |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print("\nTUs with errors, by first error (analysis continued on them):\n")
    print("\n".join(reasons_md))


if __name__ == "__main__":
    main()

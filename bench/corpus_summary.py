#!/usr/bin/env python3
"""corpus_summary.py — summarize bench/corpus.sh's outputs (OUT/SET/lint.{json,err,rc}, one lint
per set; the debian set's per TU under OUT/debian/out/PKG/N.{json,err,rc}): TUs, how many parsed cleanly, findings by rule, lint
exits other than 0/1, crashes and hangs. Prints markdown for bench/RESULTS.md and writes
OUT/findings.tsv: one line per distinct finding (a header's finding seen from several TUs once),
sorted. With a review (bench/corpus_review.tsv: set, location, rule, verdict, construct, note;
locations relative to CORPUS_DIR or to the debian sources) it joins each finding to its verdict
by (location, rule), prints the counts by verdict and construct, and lists the findings that
have no verdict (to review) and the verdicts whose finding is gone.
Usage: corpus_summary.py OUT SET...   (env CORPUS_DIR, default /work/corpus)"""
import json
import os
import sys
from collections import Counter


def tu_dirs(out, sets):
    for s in sets:
        if s == "debian":
            base = os.path.join(out, "debian", "out")
            for pkg in sorted(os.listdir(base)) if os.path.isdir(base) else []:
                if os.path.isdir(os.path.join(base, pkg)):
                    yield "debian/" + pkg, os.path.join(base, pkg)
        else:
            yield s, os.path.join(out, s)


def rel(path, out):
    for p in (os.environ.get("CORPUS_DIR", "/work/corpus"), os.path.join(out, "debian", "src")):
        p = os.path.realpath(p) + "/"
        if path.startswith(p):
            return path[len(p):]
    return path


def review(out, sets, seen):
    """Join the findings with bench/corpus_review.tsv; print the verdict tables."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_review.tsv")
    if not os.path.exists(path):
        return
    # a 7th column, where present, is text the finding's message must contain: a later
    # finding at the same place and rule with another message (another cause) gets its own row
    verdicts, refined, used = {}, {}, set()
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        cols = line.rstrip("\n").split("\t")
        if len(cols) > 6 and cols[6]:
            refined.setdefault((cols[1], cols[2]), []).append(cols)
        else:
            verdicts[(cols[1], cols[2])] = cols
    found = {}
    for k, (name, fd) in seen.items():
        found.setdefault((rel(fd["file"], out) + ":%s" % fd["line"], fd["rule"]), (name, fd))
    by_set, by_construct, missing = {}, Counter(), []
    for k, (name, fd) in sorted(found.items()):
        v = next((r for r in refined.get(k, []) if r[6] in fd["message"]), None)
        if v:
            used.add((k, v[6]))
        else:
            v = verdicts.get(k)
            if v:
                used.add((k, None))
        if not v:
            missing.append("%s %s %s" % (k[0], k[1], fd["message"][:100]))
            continue
        by_set.setdefault(name, Counter())[v[3]] += 1
        by_construct[(v[3], v[4])] += 1
    print("\n| set | true | error-path | false | unreviewed |")
    print("|---|---|---|---|---|")
    tot = Counter()
    for name in sorted(by_set):
        c = by_set[name]
        tot.update(c)
        print("| %s | %d | %d | %d | |" % (name, c["true"], c["error-path"], c["false"]))
    print("| **all** | %d | %d | %d | %d |" % (tot["true"], tot["error-path"], tot["false"], len(missing)))
    print("\n| verdict | construct | findings |")
    print("|---|---|---|")
    for (v, con), n in sorted(by_construct.items(), key=lambda x: (x[0][0], -x[1])):
        print("| %s | %s | %d |" % (v, con, n))
    gone = sorted([(k, verdicts[k][3]) for k in verdicts if (k, None) not in used] +
                  [(k, r[3] + ", message with '%s'" % r[6]) for k in refined for r in refined[k] if (k, r[6]) not in used])
    gone = [g for g in gone if any(v[0].split("/")[0] in sets for v in [verdicts.get(g[0])] + refined.get(g[0], []) if v)]
    if missing:
        print("\nfindings without a verdict (%d):" % len(missing))
        print("\n".join("  " + m for m in missing))
    if gone:
        print("\nverdicts whose finding is gone (%d):" % len(gone))
        print("\n".join("  %s %s (%s)" % (k[0], k[1], v) for k, v in gone))


def key(fd):
    return (fd["file"], int(fd["line"]), fd["rule"], fd["message"])


def main():
    out, sets = sys.argv[1], sys.argv[2:]
    rows, seen = [], {}
    for name, d in tu_dirs(out, sets):
        if not os.path.isdir(d):
            continue
        n = ok = bad = crash = hang = other = 0
        rules, paths = Counter(), Counter()
        distinct = set()
        for f in sorted(os.listdir(d)):
            if not f.endswith(".rc") or f == "wall":
                continue
            base = os.path.join(d, f[:-3])
            _, rc, _ = open(base + ".rc").read().rstrip("\n").split("\t")
            rc = int(rc)
            # lint.rc: one lint over the set's database, its TUs listed in `tus`
            n += sum(1 for _ in open(os.path.join(d, "tus"))) if f == "lint.rc" else 1
            if rc in (124, 137):
                hang += 1
                continue
            if rc > 128:
                crash += 1
                continue
            try:
                doc = json.load(open(base + ".json"))
            except ValueError:
                other += 1
                continue
            if rc not in (0, 1):
                other += 1
            for tu in doc.get("tus", []):
                if tu.get("ok"):
                    ok += 1
                else:
                    bad += 1
            for fd in doc.get("findings", []):
                k = key(fd)
                if k in distinct:
                    continue
                distinct.add(k)
                rules[fd["rule"]] += 1
                paths[fd.get("path", "normal")] += 1
                seen.setdefault(k, (name, fd))
        rows.append("| %s | %d | %d | %d | %d | %s | %d | %d | %d |" % (
            name, n, ok, bad, len(distinct),
            ", ".join("%s %d" % (r, c) for r, c in sorted(rules.items())) or "-",
            other, crash, hang))
    print("| set | TUs | parsed cleanly | with errors | findings (distinct) | by rule "
          "| other exits | crashes | hangs |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    with open(os.path.join(out, "findings.tsv"), "w") as tsv:
        for k in sorted(seen, key=lambda k: (seen[k][0], k)):
            name, fd = seen[k]
            tsv.write("\t".join([name, "%s:%s" % (fd["file"], fd["line"]), fd["rule"],
                                 fd.get("path", "normal"), fd.get("function", ""),
                                 fd["message"]]) + "\n")
    review(out, sets, seen)


if __name__ == "__main__":
    main()

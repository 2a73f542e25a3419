#!/usr/bin/env python3
"""tests/analyzer/errpath_test.py — the error-path tag in lint's JSON and SARIF output.

Lints tests/analyzer/inputs/errpath.c: `pair` has two CHECK returns inside one group (one
finding at line 8, tagged, with a note at the second return at line 9), `maybe` a normal-path
return inside a group (line 15, not tagged). Checks JSON's "path", SARIF's level and
properties.path, and that --error-paths=hide drops exactly the tagged finding from both.
usage: errpath_test.py LOCKSTEP INPUT -- FLAGS...   (exit 0 ok, 1 mismatch)
"""
import json
import subprocess
import sys


def lint(lockstep, args):
    p = subprocess.run([lockstep, "lint", *args], capture_output=True, text=True, timeout=120)
    if p.returncode != 1:
        sys.exit(f"FAIL: lint {' '.join(args)} exited {p.returncode}, wanted 1\n{p.stderr}")
    return json.loads(p.stdout), p.stderr


def main(argv):
    lockstep, src, flags = argv[1], argv[2], argv[4:]
    bad = []
    doc, _ = lint(lockstep, ["--format=json", src, "--", *flags])
    got = {f["line"]: f for f in doc["findings"] if f["rule"] == "unbalanced-group"}
    if sorted(got) != [8, 15] or len(doc["findings"]) != 2:
        bad.append(f"json: findings at {sorted(got)}, wanted lines 8 and 15")
    else:
        if got[8]["path"] != "error" or got[15]["path"] != "normal":
            bad.append(f"json: path {got[8]['path']!r} at 8 (want 'error'), {got[15]['path']!r} at 15 (want 'normal')")
        more = [n["line"] for n in got[8]["notes"] if n["message"].startswith("another return inside the same group")]
        if more != [9]:
            bad.append(f"json: the scope's other returns noted at {more}, wanted [9]")
        if any(n["message"].startswith("error path") for n in got[15]["notes"]):
            bad.append("json: the normal-path finding carries an error-path note")
    sarif, _ = lint(lockstep, ["--format=sarif", src, "--", *flags])
    res = {r["locations"][0]["physicalLocation"]["region"]["startLine"]: r for r in sarif["runs"][0]["results"]}
    for line, level, path in ((8, "note", "error"), (15, "warning", "normal")):
        r = res.get(line)
        if not r or r.get("level") != level or r.get("properties", {}).get("path") != path:
            bad.append(f"sarif: line {line}: level {r and r.get('level')!r}, properties {r and r.get('properties')!r}; "
                       f"wanted {level!r} and path {path!r}")
    doc, err = lint(lockstep, ["--format=json", "--error-paths=hide", src, "--", *flags])
    if [f["line"] for f in doc["findings"]] != [15]:
        bad.append(f"hide: json findings at {[f['line'] for f in doc['findings']]}, wanted [15]")
    if "1 error-path finding hidden" not in err:
        bad.append(f"hide: no count of the hidden finding on stderr: {err!r}")
    sarif, _ = lint(lockstep, ["--format=sarif", "--error-paths=hide", src, "--", *flags])
    lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in sarif["runs"][0]["results"]]
    if lines != [15]:
        bad.append(f"hide: sarif results at {lines}, wanted [15]")
    for b in bad:
        print("FAIL:", b)
    print("ok" if not bad else f"{len(bad)} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

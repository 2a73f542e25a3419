#!/usr/bin/env python3
"""tests/split/check_split_lint.py — nonblocking.parent_settles_child in the rules drives lint.
With the shipped rules, lint_cases.c has nonblocking-not-ready in used_at_once, child_polled and
blocking_child, with the note at the split naming the parent to poll; with the key set to false
(the old model: the child is its own non-blocking communicator, done when the split returns
ncclSuccess), only parent_polled and parent_settled are flagged, since polling the parent no
longer counts;
a non-boolean value is a rules error (exit 2).
usage: check_split_lint.py LOCKSTEP REPO_ROOT CUDA_INCLUDE   (exit 0 ok, 1 failed)
"""
import json
import os
import subprocess
import sys
import tempfile


def lint(ls, args, cflags):
    p = subprocess.run([ls, "lint", "--format=json"] + args + ["--"] + cflags,
                       capture_output=True, text=True, timeout=120)
    return p.returncode, (json.loads(p.stdout)["findings"] if p.returncode in (0, 1) else p.stderr)


def main(argv):
    ls, root, cuda = argv[1], argv[2], argv[3]
    src = os.path.join(root, "tests", "split", "lint_cases.c")
    cflags = ["-I" + cuda]
    errors = []
    with open(os.path.join(root, "rules", "nccl.json"), encoding="utf-8") as fh:
        rules = json.load(fh)
    if rules["nonblocking"].get("parent_settles_child") is not True:
        errors.append("rules/nccl.json: nonblocking.parent_settles_child is not true")

    def funcs(findings):
        return sorted(f["function"] for f in findings if f["rule"] == "nonblocking-not-ready")

    rc, f = lint(ls, [src], cflags)
    if funcs(f) != ["blocking_child", "child_polled", "used_at_once"]:
        errors.append(f"shipped rules: flagged {funcs(f)}")
    for x in f:
        if x["function"] == "used_at_once":
            if "ncclCommGetAsyncError('p')" not in x["message"] or not x["notes"] or \
                    "polling 'c' does not help" not in x["notes"][0]["message"]:
                errors.append(f"used_at_once: message/notes do not name the parent: {x}")
            if len(x["sites"]) != 2:
                errors.append(f"used_at_once: sites {x['sites']}")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "nccl.json")
        off = dict(rules, nonblocking=dict(rules["nonblocking"], parent_settles_child=False))
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(off, fh)
        rc, f = lint(ls, ["--rules", path, src], cflags)
        if rc not in (0, 1) or funcs(f) != ["parent_polled", "parent_settled"]:
            errors.append(f"parent_settles_child false: rc {rc}, flagged {funcs(f) if rc in (0, 1) else f}")
        bad = dict(rules, nonblocking=dict(rules["nonblocking"], parent_settles_child="yes"))
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(bad, fh)
        rc, err = lint(ls, ["--rules", path, src], cflags)
        if rc != 2 or "parent_settles_child" not in str(err):
            errors.append(f"a non-boolean parent_settles_child: rc {rc}, {err}")
    for e in errors:
        print("FAIL:", e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

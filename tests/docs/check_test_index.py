#!/usr/bin/env python3
"""tests/docs/check_test_index.py — the tests of a lint rule or a compare class are found by
its name, as tests/README.md promises: every rule in analyzer/checks/checks.def has a test
labelled rule:ID (`ctest -L rule:ID`), every class in runtime/fingerprint.h's LS_CLASSES one
labelled class:NAME (`ctest -L class:NAME`), and no such label names a rule or class that
does not exist. The labels come from ls_test (tests/CMakeLists.txt): rule:ID from the
expected-warning annotations a --verify test checks, class:NAME from its CLASSES.
usage: check_test_index.py CTEST BUILD_DIR SOURCE_DIR [--partial]
  --partial  this build leaves tests out (no analyzer, no MPI, a sanitizer): a rule or class
             without a test is then reported as a skip (77), not a failure
Exit 0 ok, 1 a check failed, 2 bad usage, 77 skipped.
"""
import json
import os
import re
import subprocess
import sys


def rules(src):
    with open(os.path.join(src, "analyzer", "checks", "checks.def"), encoding="utf-8") as f:
        return re.findall(r'^LS_CHECK\(\w+, "([a-z0-9-]+)"', f.read(), re.M)


def classes(src):
    with open(os.path.join(src, "runtime", "fingerprint.h"), encoding="utf-8") as f:
        text = f.read()
    block = text[text.index("#define LS_CLASSES(X)"):text.index("enum ls_class")]
    return re.findall(r'X\([A-Z_]+, "([a-z-]+)"\)', block)


def main():
    args = [a for a in sys.argv[1:] if a != "--partial"]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    ctest, build, src = args
    partial = "--partial" in sys.argv
    known = {"rule": rules(src), "class": classes(src)}
    if len(known["rule"]) < 10 or len(known["class"]) < 10:
        print(f"check_test_index: the tables look wrong: {known}", file=sys.stderr)
        return 1
    out = subprocess.run([ctest, "--test-dir", build, "--show-only=json-v1"], check=True,
                         stdout=subprocess.PIPE).stdout
    tested = {"rule": {}, "class": {}}
    errors = []
    for t in json.loads(out)["tests"]:
        labels = next((p["value"] for p in t.get("properties", []) if p["name"] == "LABELS"), [])
        for label in labels:
            kind, _, name = label.partition(":")
            if kind not in tested:
                continue
            if name not in known[kind]:
                errors.append(f"{t['name']}: label {label} names no {kind} "
                              f"({'checks.def' if kind == 'rule' else 'LS_CLASSES'})")
            tested[kind].setdefault(name, []).append(t["name"])
    missing = [f"{kind} {name} has no test labelled {kind}:{name}"
               for kind in ("rule", "class") for name in known[kind] if name not in tested[kind]]
    with open(os.path.join(src, "tests", "README.md"), encoding="utf-8") as f:
        readme = f.read()
    for how in ("ctest -L rule:", "ctest -L class:"):
        if how not in readme:
            errors.append(f"tests/README.md: does not say `{how}...`")
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        return 1
    if missing:
        for m in missing:
            print(m, file=sys.stderr)
        if partial:
            print("SKIP: this build registers only part of the tests (see --partial)")
            return 77
        return 1
    print(f"check_test_index: {len(known['rule'])} rules and {len(known['class'])} classes, "
          f"each with its tests ({sum(map(len, tested['rule'].values()))} rule and "
          f"{sum(map(len, tested['class'].values()))} class labels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

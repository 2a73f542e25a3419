#!/usr/bin/env python3
"""tests/fingerprint/check_classes.py — the divergence classes the docs and fixtures name are
the ones runtime/fingerprint.h defines (LS_CLASSES), and runtime/tools/README.md and
`lockstep compare --help` (runtime/tools/cmd_compare.c's usage) name each.

A class is "named" where a text says which class a divergence is: a `...-mismatch` in
backticks, a `divergence: CLASS on` line, a `"class": "CLASS"` in JSON, a fixture's
`// RUNTIME: CLASS seq=` line.
usage: check_classes.py SOURCE_DIR   (exit 0 ok, 1 a check failed, 2 bad usage)
"""
import os
import re
import sys

NAMED = [re.compile(r"`([a-z]+(?:-[a-z]+)*-mismatch)`"),
         re.compile(r"divergence: ([a-z][a-z-]*) on"),
         re.compile(r'"class": "([a-z][a-z-]*)"'),
         re.compile(r"^// RUNTIME: ([a-z][a-z-]*) seq=", re.M)]
DOCS = ("README.md", "runtime/README.md", "runtime/tools/README.md", "runtime/mpi/README.md",
        "fixtures/README.md", "gpu_tests/README.md")


def classes(src):
    """The names in LS_CLASSES' X(ENUM, "name") lines."""
    with open(os.path.join(src, "runtime", "fingerprint.h"), encoding="utf-8") as f:
        text = f.read()
    block = text[text.index("#define LS_CLASSES(X)"):text.index("enum ls_class")]
    return re.findall(r'X\([A-Z_]+, "([a-z-]+)"\)', block)


def compare_help(src):
    """The class names `lockstep compare --help` lists, from cmd_compare.c's usage text (its
    "op-, count-, ... peer-mismatch" shorthand expanded)."""
    with open(os.path.join(src, "runtime", "tools", "cmd_compare.c"), encoding="utf-8") as f:
        text = f.read()
    body = text[text.index("static void usage("):]
    body = body[:body.index("\n}")]
    usage = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', body)).replace("\\n", " ")
    names = set(re.findall(r"[a-z]+(?:-[a-z]+)*", usage))
    names |= {p + "-mismatch" for p in re.findall(r"\b([a-z]+)-,", usage)}
    return names


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    src = sys.argv[1]
    known = classes(src)
    if len(known) < 10 or len(set(known)) != len(known):
        print(f"check_classes: LS_CLASSES looks wrong: {known}", file=sys.stderr)
        return 1
    errors = []
    paths = [os.path.join(src, d) for d in DOCS]
    for sub in ("fixtures/nccl", "fixtures/mpi", "fixtures/clean", "fixtures/examples"):
        folder = os.path.join(src, sub)
        paths += [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if n.endswith(".c")]
    seen = 0
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for pat in NAMED:
            for m in pat.finditer(text):
                seen += 1
                if m.group(1) not in known:
                    line = text.count("\n", 0, m.start()) + 1
                    errors.append(f"{os.path.relpath(path, src)}:{line}: names the class '{m.group(1)}', "
                                  f"which runtime/fingerprint.h does not define")
    with open(os.path.join(src, "runtime", "tools", "README.md"), encoding="utf-8") as f:
        tools = f.read()
    for name in known:
        if f"`{name}`" not in tools:
            errors.append(f"runtime/tools/README.md: does not describe the class `{name}`")
    for name in known:
        if name not in compare_help(src):
            errors.append(f"runtime/tools/cmd_compare.c: `lockstep compare --help` does not name the class {name}")
    for e in errors:
        print(e, file=sys.stderr)
    if not errors:
        print(f"check_classes: {len(known)} classes, {seen} names in the docs and fixtures, all defined")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

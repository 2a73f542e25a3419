#!/usr/bin/env python3
"""tests/tools/help_options.py — every option a trace tool's --help names is one it accepts:
`lockstep compare`, `trace export` and `confirm` are given each option of their usage lines and
option tables (each value of a `--opt=a|b`, a placeholder value otherwise) and must not answer
"unknown"; a made-up option must. `lockstep --help`'s commands each answer their own --help,
and `lockstep --version` works.
usage: help_options.py LOCKSTEP   (exit 0 ok, 1 a check failed, 2 bad usage)
"""
import re
import subprocess
import sys

COMMANDS = (["compare"], ["trace", "export"], ["confirm"])
OPTION = re.compile(r"(?<![\w`-])(-o|--[a-z][a-z-]*)(?:=([a-z]+(?:\|[a-z]+)*)|=[A-Z]+)?")
UNKNOWN = re.compile(r"unknown (option|argument|format|action|command)")


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def named_options(help_text):
    """Options of the usage lines (up to the first blank line) and of the option table
    (lines that start with an option): not those the prose mentions in passing."""
    lines = help_text.splitlines()
    usage = []
    for line in lines:
        if not line.strip():
            break
        usage.append(line)
    table = [line for line in lines[len(usage):] if re.match(r"^\s+(-o|--[a-z])", line)]
    found = []
    for line in usage + table:
        for m in OPTION.finditer(line):
            if m.group(1) in ("-h", "--help"):
                continue
            variants = [f"{m.group(1)}={v}" for v in m.group(2).split("|")] if m.group(2) else [m.group(1)]
            found += [v for v in variants if v not in found]
    return found


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    ls = sys.argv[1]
    errors = []
    for cmd in COMMANDS:
        rc, out, err = run([ls, *cmd, "--help"])
        if rc != 0 or not out.startswith("usage: lockstep " + cmd[0]):
            errors.append(f"{' '.join(cmd)} --help: exit {rc}, {out[:80]!r}")
            continue
        opts = named_options(out)
        if not opts:
            errors.append(f"{' '.join(cmd)} --help names no option")
        for opt in opts:
            args = [opt] if "=" in opt else [opt, "1"]
            rc, _, err = run([ls, *cmd, *args])
            if UNKNOWN.search(err):
                errors.append(f"{' '.join(cmd)} --help names {opt}, which it rejects: {err.strip()[:200]}")
        rc, _, err = run([ls, *cmd, "--no-such-option"])
        if rc != 2 or not UNKNOWN.search(err):
            errors.append(f"{' '.join(cmd)} does not reject a made-up option (exit {rc}): {err[:200]!r}")
        print(f"{' '.join(cmd)}: {', '.join(opts)}")

    rc, out, _ = run([ls, "--help"])
    names = re.findall(r"^  ([a-z]+)  ", out, re.M)
    if rc != 0 or len(names) < 5:
        errors.append(f"lockstep --help: exit {rc}, commands {names}")
    for name in names:
        rc, sub, _ = run([ls, name, "--help"])
        if rc != 0 or "usage: lockstep " + name not in sub:
            errors.append(f"lockstep --help lists '{name}', whose --help exits {rc}: {sub[:80]!r}")
    rc, out, _ = run([ls, "--version"])
    if rc != 0 or not out.startswith("lockstep "):
        errors.append(f"lockstep --version: exit {rc}, {out!r}")
    for e in errors:
        print("FAIL: " + e, file=sys.stderr)
    if not errors:
        print(f"help_options: the options of {len(COMMANDS)} --help texts accepted; commands {', '.join(names)}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

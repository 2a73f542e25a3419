#!/usr/bin/env python3
"""cdb_damaged.py LOCKSTEP INPUTS_DIR WORKDIR — `lint -p` on damaged compile_commands.json files.

Each case is a database text with a marker (§) where the error must point; the marker is
removed and its offset gives the expected `compile_commands.json:LINE:COL: error: ` prefix.
Every case must exit 2, print nothing on stdout (no analysis of a partial database), show
none of libclang's raw "LIBCLANG TOOLING ERROR" text, and name the problem as expected.
"""
import json
import os
import re
import subprocess
import sys

lockstep, inputs, work = sys.argv[1:]
inputs = os.path.abspath(inputs)
os.makedirs(work, exist_ok=True)


def entry(name):
    return ('{"directory": "%s", "file": "%s", "arguments": ["cc", "-c", "-I/usr/local/cuda/include", "%s"]}'
            % (inputs, name, name))


five = ["cdb_a.c", "cdb_b.c", "clean.c", "flow.c", "nested_sides.c"]
W = '"directory": "/w"'
CASES = [
    # the three: cut after the first of five entries; malformed; cut inside the only entry
    ("cut_after_first", "[\n" + entry(five[0]) + ",\n§", "the compilation database ends inside its JSON"),
    ("malformed_comma", '[{%s, "file": "a.c", "command": "cc a.c"} §{%s, "file": "b.c", "command": "cc b.c"}]' % (W, W),
     "invalid JSON in the compilation database"),
    ("cut_inside_only", '[\n {%s,\n  "file": "a.c",\n  "comm§' % W, "the compilation database ends inside its JSON"),
    ("cut_inside_value", '[{%s, "file": "a.c", "command": "cc -c a§' % W, "the compilation database ends inside its JSON"),
    ("malformed_value", '[{%s, "file": §a.c, "command": "cc a.c"}]' % W, "invalid JSON in the compilation database"),
    ("trailing_comma", '[{%s, "file": "a.c", "command": "cc a.c"},§]' % W, "invalid JSON in the compilation database"),
    ("empty_file", "§", "the compilation database is empty"),
    ("empty_array", "§[]\n", "the compilation database has no entries"),
    ("object", '§{%s, "file": "a.c", "command": "cc a.c"}' % W,
     "the compilation database must be a JSON array of entries, not an object"),
    ("not_object", "[§1]", "entry 1: must be an object with .*, not a number"),
    ("no_file", '[§{%s, "command": "cc a.c"}]' % W, 'entry 1: no "file"'),
    ("no_directory", '[§{"file": "a.c", "command": "cc a.c"}]', 'entry 1: no "directory"'),
    ("no_command", '[§{%s, "file": "a.c"}]' % W, r'entry 1: no "command" \(a string\) or "arguments"'),
    ("file_number", '[{%s, "file": §5, "command": "cc a.c"}]' % W, 'entry 1: "file" must be a non-empty string, not a number'),
    ("directory_empty", '[{"directory": §"", "file": "a.c", "command": "cc a.c"}]',
     'entry 1: "directory" must be a non-empty string, not ""'),
    ("command_array", '[{%s, "file": "a.c", "command": §["cc"]}]' % W,
     'entry 1: "command" must be a non-empty string, not an array'),
    ("arguments_string", '[{%s, "file": "a.c", "arguments": §"cc a.c"}]' % W,
     'entry 1: "arguments" must be a non-empty array of strings, not a string'),
    ("arguments_empty", '[{%s, "file": "a.c", "arguments": §[]}]' % W,
     r'entry 1: "arguments" must be a non-empty array of strings, not \[\]'),
    ("arguments_element", '[{%s, "file": "a.c", "arguments": ["cc", §1, "a.c"]}]' % W,
     r'entry 1: "arguments"\[1\] must be a string, not a number'),
    ("output_bool", '[{%s, "file": "a.c", "command": "cc a.c", "output": §true}]' % W,
     'entry 1: "output" must be a non-empty string, not a boolean'),
    ("unknown_key", '[{%s, "file": "a.c", "command": "cc a.c", §"bogus": 1}]' % W, 'entry 1: unknown key "bogus"'),
    ("unknown_key_control", '[{%s, "file": "a.c", "command": "cc a.c", §"bo\ngus": 1}]' % W,
     r'entry 1: unknown key "bo\\x0agus"'),
    ("duplicate_key", '[{%s, "file": "a.c", §"file": "b.c", "command": "cc a.c"}]' % W, 'entry 1: "file" given twice'),
    ("second_entry", '[\n  {%s, "file": "a.c", "command": "cc a.c"},\n  §{%s}\n]' % (W, W), 'entry 2: no "file"'),
    ("nul_byte", '[{%s, "file": "a.c", "command": "cc a.c"}]§\0' % W, "a NUL byte in the compilation database"),
]


def where(text, off):
    line = text.count("\n", 0, off) + 1
    return line, off - (text.rfind("\n", 0, off) + 1) + 1


fail = 0
for name, marked, msg in CASES:
    off = marked.index("§")
    text = marked.replace("§", "", 1)
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    db = os.path.join(d, "compile_commands.json")
    with open(db, "w", newline="") as fh:
        fh.write(text)
    line, col = where(text, off)
    want = re.compile(r"^%s:%d:%d: error: %s" % (re.escape(db), line, col, msg), re.M)
    p = subprocess.run([lockstep, "lint", "-p", d], capture_output=True, text=True, timeout=60)
    bad = []
    if p.returncode != 2:
        bad.append("exit %d, wanted 2" % p.returncode)
    if p.stdout:
        bad.append("printed on stdout (an analysis ran)")
    if "LIBCLANG" in p.stderr:
        bad.append("libclang's raw error text")
    if not want.search(p.stderr):
        bad.append("no line matching /%s/" % want.pattern)
    if bad:
        print("FAIL %s: %s\n--- stderr\n%s" % (name, "; ".join(bad), p.stderr))
        fail = 1
    else:
        print("ok %s: %s" % (name, p.stderr.splitlines()[0]))

# the second entry's problems are all reported, each at its own place
p = subprocess.run([lockstep, "lint", "-p", os.path.join(work, "second_entry")], capture_output=True, text=True)
if not re.search(r":3:3: error: entry 2: no \"command\"", p.stderr):
    print("FAIL second_entry: the missing command is not reported too\n" + p.stderr)
    fail = 1

# no database at all
p = subprocess.run([lockstep, "lint", "-p", os.path.join(work, "nonexistent")], capture_output=True, text=True)
if p.returncode != 2 or not re.search(r"nonexistent/compile_commands\.json: error: cannot load the compilation "
                                      r"database: No such file or directory", p.stderr):
    print("FAIL missing database: exit %d\n%s" % (p.returncode, p.stderr))
    fail = 1
else:
    print("ok missing database")

# the undamaged five-entry database the first case was cut from is analyzed whole
d = os.path.join(work, "whole")
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "compile_commands.json"), "w") as fh:
    fh.write("[\n" + ",\n".join(entry(n) for n in five) + "\n]\n")
p = subprocess.run([lockstep, "lint", "-p", d, "--format=json"], capture_output=True, text=True, timeout=120)
try:
    tus = json.loads(p.stdout)["tus"]
except (ValueError, KeyError):
    tus = []
if p.returncode != 1 or len(tus) != 5 or not all(t["ok"] for t in tus):
    print("FAIL whole database: exit %d, %d TUs\n%s" % (p.returncode, len(tus), p.stderr))
    fail = 1
else:
    print("ok whole database: 5 TUs, exit 1")
sys.exit(fail)

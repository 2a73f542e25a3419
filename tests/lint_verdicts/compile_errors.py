#!/usr/bin/env python3
"""compile_errors.py LOCKSTEP SRCDIR WORKDIR — a TU with compile errors fails the run.

inputs/missing_header.c has a real finding and two compile errors (its project header is not
on the include path). In every format lint reports the finding, then exits 2: text says the
analysis is incomplete, JSON's tu has "ok": false, SARIF has executionSuccessful false and an
error notification. --allow-errors gives the old verdict (exit 1 for the finding); a TU that
yields nothing, and an entry libclang cannot parse at all, fail even then.
"""
import json
import os
import subprocess
import sys

lockstep, src, work = sys.argv[1:]
src = os.path.abspath(src)
os.makedirs(work, exist_ok=True)
inp = os.path.join(src, "tests/lint_verdicts/inputs")
broken = os.path.join(inp, "missing_header.c")
clean = os.path.join(src, "tests/analyzer/inputs/clean.c")
garbage = os.path.join(src, "tests/analyzer/inputs/garbage.c")
cuda = ["--", "-I/usr/local/cuda/include"]
fails = []


def lint(*args):
    return subprocess.run([lockstep, "lint", *args], capture_output=True, text=True, timeout=120)


def check(name, cond, p):
    if cond:
        print("ok", name)
    else:
        fails.append(name)
        print("FAIL %s: exit %d\n--- stdout\n%s--- stderr\n%s" % (name, p.returncode, p.stdout[:3000], p.stderr))


FINDING = "missing_header.c:12:5: warning: collective 'ncclAllReduce'"
INCOMPLETE = "missing_header.c: error: 2 compile errors, the analysis is incomplete"

p = lint(broken, *cuda)
check("text: finding reported, exit 2", p.returncode == 2 and FINDING in p.stdout and INCOMPLETE in p.stderr
      and "'project_config.h' file not found" in p.stderr
      and p.stderr.rstrip().splitlines()[-1].startswith("lockstep lint: error: 1 of 1 TU did not compile"), p)

p = lint("--format=json", broken, *cuda)
doc = json.loads(p.stdout) if p.stdout.startswith("{") else {}
tus = doc.get("tus", [])
check("json: ok false, finding, exit 2", p.returncode == 2 and len(doc.get("findings", [])) == 1 and len(tus) == 1
      and tus[0]["ok"] is False and any("file not found" in e for e in tus[0]["errors"]), p)

p = lint("--format=sarif", broken, *cuda)
doc = json.loads(p.stdout) if p.stdout.startswith("{") else {"runs": [{}]}
run = doc["runs"][0]
inv = run.get("invocations", [{}])[0]
notes = inv.get("toolExecutionNotifications", [])
check("sarif: executionSuccessful false, error notification, exit 2",
      p.returncode == 2 and len(run.get("results", [])) == 1 and inv.get("executionSuccessful") is False
      and inv.get("exitCode") == 2 and len(notes) == 1 and notes[0]["level"] == "error"
      and "2 compile errors" in notes[0]["message"]["text"]
      and notes[0]["descriptor"]["id"] == run["tool"]["driver"]["notifications"][0]["id"], p)

# one broken TU among clean ones fails the run, also with parallel parses
for extra in ([], ["-j", "2"]):
    p = lint(*extra, clean, broken, *cuda)
    check("two TUs %s: exit 2, 1 of 2" % extra, p.returncode == 2 and FINDING in p.stdout
          and "1 of 2 TUs did not compile" in p.stderr, p)

# --allow-errors: today's verdict, said as a warning
p = lint("--allow-errors", broken, *cuda)
check("--allow-errors text: exit 1", p.returncode == 1 and FINDING in p.stdout
      and "missing_header.c: 2 errors, analysis may be incomplete" in p.stderr and "did not compile" not in p.stderr, p)
p = lint("--allow-errors", "--format=sarif", broken, *cuda)
doc = json.loads(p.stdout) if p.stdout.startswith("{") else {"runs": [{}]}
inv = doc["runs"][0].get("invocations", [{}])[0]
notes = inv.get("toolExecutionNotifications", [])
check("--allow-errors sarif: executionSuccessful true, warning notification, exit 1",
      p.returncode == 1 and inv.get("executionSuccessful") is True and inv.get("exitCode") == 1
      and len(notes) == 1 and notes[0]["level"] == "warning", p)
p = lint("--allow-errors", "--format=json", broken, *cuda)
doc = json.loads(p.stdout) if p.stdout.startswith("{") else {}
check("--allow-errors json: exit 1, still ok false", p.returncode == 1
      and [t["ok"] for t in doc.get("tus", [])] == [False], p)

# --verify: the annotations match, but the analysis is incomplete
p = lint("--verify", broken, *cuda)
check("--verify: exit 2", p.returncode == 2 and "verified (1 expected warning)" in p.stderr, p)
p = lint("--verify", "--allow-errors", broken, *cuda)
check("--verify --allow-errors: exit 0", p.returncode == 0, p)

# nothing could be read of it: fails even with --allow-errors
p = lint("--allow-errors", garbage)
check("garbage with --allow-errors: exit 2", p.returncode == 2 and "cannot be parsed" in p.stderr, p)

# an entry libclang cannot parse at all (its source is missing) is named in JSON and SARIF too
d = os.path.join(work, "db")
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "compile_commands.json"), "w") as fh:
    json.dump([{"directory": inp, "file": "not_generated_yet.c", "arguments": ["cc", "-c", "not_generated_yet.c"]},
               {"directory": os.path.dirname(clean), "file": clean,
                "arguments": ["cc", "-c", "-I/usr/local/cuda/include", clean]}], fh)
p = lint("-p", d, "--format=json", "--allow-errors")
doc = json.loads(p.stdout) if p.stdout.startswith("{") else {}
got = sorted((os.path.basename(t["file"]), t["ok"]) for t in doc.get("tus", []))
check("unparsable entry in json: ok false, exit 2", p.returncode == 2
      and got == [("clean.c", True), ("not_generated_yet.c", False)], p)
p = lint("-p", d, "--format=sarif")
doc = json.loads(p.stdout) if p.stdout.startswith("{") else {"runs": [{}]}
inv = doc["runs"][0].get("invocations", [{}])[0]
notes = inv.get("toolExecutionNotifications", [])
check("unparsable entry in sarif: error notification, exit 2", p.returncode == 2
      and inv.get("executionSuccessful") is False and len(notes) == 1 and notes[0]["level"] == "error"
      and "not_generated_yet.c" in notes[0]["message"]["text"], p)
sys.exit(1 if fails else 0)

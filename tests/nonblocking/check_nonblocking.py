#!/usr/bin/env python3
"""tests/nonblocking/check_nonblocking.py — lint's non-blocking checks come from the rules and
say where and why.

1. With the shipped rules, the JSON of nccl/nonblocking_init_unpolled.c has one
   nonblocking-not-ready finding at the AllReduce, a note at the creation and both calls as
   sites; poll_without_error_check.c's findings carry notes at the comparison and at what follows.
2. The same check driven by edited copies of rules/nccl.json, on two splits (blocking = 0 and
   blocking = 1) each followed by an AllReduce: the shipped rules flag the first AllReduce, with
   `nonblocking.value` 1 only the second, without the `nonblocking` key neither.
3. `--enable=nonblocking-not-ready,poll-without-error-check` accepts the new ids.
usage: check_nonblocking.py LOCKSTEP REPO_ROOT CUDA_INCLUDE [-I...]   (exit 0 ok, 1 failed)
"""
import json
import os
import subprocess
import sys
import tempfile


def lint(ls, args, cflags):
    p = subprocess.run([ls, "lint", "--format=json"] + args + ["--"] + cflags,
                       capture_output=True, text=True, timeout=120)
    if p.returncode not in (0, 1):
        raise SystemExit(f"lint failed ({p.returncode}): {p.stderr}")
    return json.loads(p.stdout)["findings"]


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    ls, root, cuda = argv[1], argv[2], argv[3]
    cflags = ["-I" + cuda] + argv[4:]
    fx = lambda rel: os.path.join(root, "fixtures", rel)
    errors = []

    def want(cond, what):
        if not cond:
            errors.append(what)

    # 1. shipped rules
    f = lint(ls, [fx("nccl/nonblocking_init_unpolled.c")], cflags)
    nr = [x for x in f if x["rule"] == "nonblocking-not-ready"]
    want(len(nr) == 1, f"init_unpolled: want 1 nonblocking-not-ready, got {len(nr)}")
    if nr:
        x = nr[0]
        want(x["line"] == 30, f"init_unpolled: finding at line {x['line']}, want 30 (the AllReduce)")
        want([n["line"] for n in x["notes"]] == [27], f"init_unpolled: notes {x['notes']}, want one at 27")
        want("blocking" in x["notes"][0]["message"] if x["notes"] else False,
             "init_unpolled: the note names the config field")
        want(sorted(s["callee"] for s in x["sites"]) == ["ncclAllReduce", "ncclCommInitRankConfig"],
             f"init_unpolled: sites {x['sites']}")
    f = lint(ls, [fx("nccl/poll_without_error_check.c")], cflags)
    pw = sorted((x for x in f if x["rule"] == "poll-without-error-check"), key=lambda x: x["line"])
    want([x["line"] for x in pw] == [16, 40], f"poll: findings at {[x['line'] for x in pw]}, want 16, 40")
    if len(pw) == 2:
        want([n["line"] for n in pw[0]["notes"]] == [18, 21], f"poll: helper notes {pw[0]['notes']}")
        want([n["line"] for n in pw[1]["notes"]] == [41, 42], f"poll: main notes {pw[1]['notes']}")
        want(all("ncclSuccess" in x["message"] for x in pw), "poll: the message names the success value")

    # 2. the rules drive it: two splits, one with blocking = 0 and one with blocking = 1
    src = """#include <nccl.h>
void f(ncclComm_t parent, float *b, cudaStream_t s, int rank) {
  ncclComm_t c0, c1;
  ncclConfig_t k0 = NCCL_CONFIG_INITIALIZER, k1 = NCCL_CONFIG_INITIALIZER;
  k0.blocking = 0;
  k1.blocking = 1;
  ncclCommSplit(parent, 0, rank, &c0, &k0);
  ncclCommSplit(parent, 0, rank, &c1, &k1);
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c0, s);
  ncclAllReduce(b, b, 1, ncclFloat, ncclSum, c1, s);
}
"""
    with open(os.path.join(root, "rules", "nccl.json"), encoding="utf-8") as fh:
        rules = json.load(fh)
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "two_splits.c")
        with open(prog, "w", encoding="utf-8") as fh:
            fh.write(src)
        variants = {
            "shipped": (rules, [9]),
            "value 1": (dict(rules, nonblocking=dict(rules["nonblocking"], value=1)), [10]),
            "no nonblocking key": ({k: v for k, v in rules.items() if k != "nonblocking"}, []),
        }
        for name, (table, lines) in variants.items():
            path = os.path.join(tmp, "nccl.json")
            with open(path, "w", encoding="utf-8") as fh:
                json.dump(table, fh)
            f = lint(ls, ["--rules", path, prog], cflags)
            got = [x["line"] for x in f if x["rule"] == "nonblocking-not-ready"]
            want(got == lines, f"rules '{name}': nonblocking-not-ready at {got}, want {lines}")

    # 3. the ids are known to rule selection
    f = lint(ls, ["--enable=nonblocking-not-ready,poll-without-error-check",
                  fx("nccl/poll_without_error_check.c")], cflags)
    want(sorted({x["rule"] for x in f}) == ["nonblocking-not-ready", "poll-without-error-check"] or
         sorted({x["rule"] for x in f}) == ["poll-without-error-check"],
         f"--enable: rules {sorted({x['rule'] for x in f})}")

    for e in errors:
        print("FAIL: " + e)
    print(f"{len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

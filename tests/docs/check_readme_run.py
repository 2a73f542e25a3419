#!/usr/bin/env python3
"""check_readme_run.py — the README's "A divergent run, start to finish" must be what the tools print.

The section pastes a real chain: `lockstep run ... -- mpirun -np 4 op_mismatch` (the online
reports, then `echo $?`), `lockstep compare`, `lockstep lint --format=json` and `lockstep
confirm`. This parses the section's fenced blocks (commands and their output, with README line
numbers), runs the same commands against the build (README paths replaced: build/lockstep,
build/tests/mpi/op_mismatch, mpirun, /tmp/t, /tmp/lint.json, and lint's `$(mpicc ...)` include
flags by CMake's), and checks the README's text as the expectation:
  1. the run's exit status is the README's `echo $?` value;
  2. every `lockstep:` line of the run has the shape of the README's line for the same rank,
     and `lockstep run`'s own lines after the job (`lockstep run: ...`, the first divergence)
     are the README's, the trace directory and the number of reports aside;
  3. `lockstep compare` prints the README's lines; 4. so does `lockstep confirm`.
What is normalized, because it legitimately varies between runs or builds, and nothing else:
  - the 16-hex-digit communicator id (`336d910333189ce8`, `0x...`) -> `<comm>`;
  - the module offsets of call sites in run lines (`op_mismatch+0x1120`) -> `+0x<off>`, after
    checking that each MPI call has one offset in all lines (compare resolves them to lines);
  - in run lines, the peer a rank names: ranks report on their own ticks and compare with
    the other ranks in turn, so the rank that issued the odd call (the one the README's other
    lines all name, rank 1) names whichever other rank's call it read first; it must be one of
    the README's other ranks, and every other rank must name the odd rank -> `<peer>`;
  - the run lines' order, and which ranks print one: under --policy exit the first report
    `_exit`s its rank with 86 and mpirun then kills the rest, so only one line is guaranteed
    (runtime/preload/online/check.c report() -> ls_apply_policy); at most one per rank (a rank
    reports once per communicator), each for a rank the README has a line for;
  - lines of the run's output not starting with `lockstep:` (Open MPI's banners, which
    Open MPI 4.1 sometimes fails to print);
  - compare: an `incomplete` divergence over more than 2 ranks names two of its ranks in
    trace-file order (host.pid names), not rank order -> `rank <r>`, checked distinct and
    among those its note lists (every rank, sorted; compared as is); and the divergences after
    the first are sorted by the time of their calls (rank 1's MPI_Reduce and the others'
    MPI_Allreduce race from the barrier), so they are matched in any order; the first one
    and the summary line are compared in place;
  - absolute paths under the source root, should the tools print them -> relative.
Passes leave nothing behind: the scratch dir is removed (a failing run keeps it).
usage: check_readme_run.py LOCKSTEP README OP_MISMATCH_BIN MPIEXEC SCRATCH_DIR [-I...]  (from the source root)
"""
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

SECTION = "### A divergent run, start to finish"
RUN_BOUND_S = 40  # the whole mpirun; the README's run ends in ~1 s, its watchdog at 3 s
COMM_HEX = re.compile(r"\b(0x)?[0-9a-f]{16}\b")
RANK_LINE = re.compile(r"^lockstep: rank (\d+): seq \d+ (\S+) on comm \S+ differs from rank (\d+) \(")
OFFSET = re.compile(r"(MPI_\w+)\([^)]*\) at [\w.-]+\+0x([0-9a-f]+)")
MANY = re.compile(r"^  note: (\d+) ranks \((\d+(?:, \d+)*)\): ")
HEAD_RANKS = re.compile(r": rank (\d+) .* vs rank (\d+) ")


class Fail(Exception):
    pass


def readme_steps(path):
    """[(lineno, command, [(lineno, output line)])] from the section's fenced blocks."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    try:
        start = lines.index(SECTION)
    except ValueError:
        raise Fail(f"{path}: no section '{SECTION}'")
    steps, fenced = [], False
    i = start + 1
    while i < len(lines) and not lines[i].startswith("#"):
        line = lines[i]
        if line.startswith("```"):
            fenced = not fenced
        elif fenced and line.startswith("$ "):
            no, cmd = i + 1, line[2:]
            while cmd.endswith("\\"):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].strip()
            steps.append((no, cmd, []))
        elif fenced and steps:
            steps[-1][2].append((i + 1, line))
        i += 1
    return steps


def norm_path(s, root):
    return s.replace(root + os.sep, "")


def norm_comm(s):
    return COMM_HEX.sub(lambda m: (m.group(1) or "") + "<comm>", s)


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                with open(f"/proc/{p}/task/{t}/children") as f:
                    kids = [int(x) for x in f.read().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def run_bounded(argv, cwd):
    """(exit status, stdout+stderr) of the run; killed with everything under it past the bound."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=RUN_BOUND_S)
    except subprocess.TimeoutExpired:
        for pid in [p.pid] + descendants(p.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        out, _ = p.communicate()
        raise Fail(f"the run did not end within {RUN_BOUND_S} s:\n{out.decode(errors='replace')[-3000:]}")
    return p.returncode, out.decode(errors="replace")


def argv_of(no, cmd, subst, readme):
    """The README command with its paths replaced; (argv, stdout file or None)."""
    out = None
    if " > " in cmd:
        cmd, out = cmd.split(" > ", 1)
        out = subst.get(out.strip())
        if out is None:
            raise Fail(f"{readme}:{no}: cannot map the redirect of `{cmd}`")
    if "$(" in cmd:  # lint's `-- $(mpicc --showme:incdirs | ...)`: CMake's flags instead
        cmd = cmd[:cmd.index("$(")]
        if not cmd.rstrip().endswith(" --"):
            raise Fail(f"{readme}:{no}: `$(...)` expected only after `--`")
        return [subst.get(t, t) for t in shlex.split(cmd)] + subst["<mpi-flags>"], out
    return [subst.get(t, t) for t in shlex.split(cmd)], out


RUN_TAIL = ("lockstep run: ", "divergence: ", "  note: ")
REPORTS = re.compile(r"\(\d+ divergence reports? and \d+ hangs?")


def check_run_tail(got, want, readme, tdir):
    """`lockstep run`'s own lines after the job: its summary and the first divergence, as the
    README has them (the trace directory and the count of reports, which varies, aside)."""
    def norm(line):
        return norm_comm(REPORTS.sub("(N reports", line.replace(tdir, "/tmp/t")))
    mine = [norm(l) for l in got if l.startswith(RUN_TAIL)]
    for no, line in want:
        if norm(line) not in mine:
            raise Fail(f"{readme}:{no}: the README says `{line}`; `lockstep run` printed: {mine}")


def check_run_lines(got, want, readme, tdir="/tmp/t"):
    """Check 2: the run's `lockstep:` lines against the README's rank lines (see the header)."""
    tail = [(no, line) for no, line in want if line.startswith(RUN_TAIL)]
    want = [(no, line) for no, line in want if not line.startswith(RUN_TAIL)]
    check_run_tail([norm_path(l.replace(tdir, "/tmp/t"), os.getcwd()) for l in got], tail, readme, tdir)
    ref = {}
    for no, line in want:
        m = RANK_LINE.match(line)
        if not m:
            raise Fail(f"{readme}:{no}: a run output line that is not a rank report: {line}")
        ref[int(m.group(1))] = (no, line, int(m.group(3)))
    peers = [peer for _, _, peer in ref.values()]
    odd = max(set(peers), key=peers.count)  # the rank the others all name
    if odd not in ref:
        raise Fail(f"{readme}:{min(n for n, _, _ in ref.values())}: the README's lines name rank {odd}, which has no line")

    def shape(line, peer):
        line = norm_comm(line)
        line = OFFSET.sub(lambda m: m.group(0)[:m.start(2) - m.start(0)] + "<off>", line)
        return line.replace(f"from rank {peer} (", "from rank <peer> (").replace(
            f" on rank {peer}", " on rank <peer>")

    mine = [l for l in got if l.startswith("lockstep:")]
    if not mine:
        raise Fail(f"{readme}:{min(n for n, _, _ in ref.values())}: the run printed no `lockstep:` line")
    seen, offs = set(), {}
    for line in mine:
        m = RANK_LINE.match(line)
        if not m or int(m.group(1)) not in ref:
            raise Fail(f"{readme}:{min(n for n, _, _ in ref.values())}: the run printed a `lockstep:` line unlike "
                       f"the README's rank reports: {line}")
        rank, peer = int(m.group(1)), int(m.group(3))
        no, wline, wpeer = ref[rank]
        if rank in seen:
            raise Fail(f"{readme}:{no}: rank {rank} reported twice: {line}")
        seen.add(rank)
        ok_peers = [r for r in ref if r != odd] if rank == odd else [odd]
        if peer not in ok_peers:
            raise Fail(f"{readme}:{no}: rank {rank} names rank {peer}, expected one of {ok_peers}: {line}")
        if shape(line, peer) != shape(wline, wpeer):
            raise Fail(f"{readme}:{no}: the README says `{wline}`, the run printed `{line}`")
        for api, off in OFFSET.findall(line):
            offs.setdefault(api, set()).add(off)
    for api, s in offs.items():
        if len(s) != 1:
            raise Fail(f"{readme}: {api} is reported at several offsets: {sorted(s)}")
    return sorted(seen)


def blocks(lines):
    """compare's output as [[divergence line, its notes...], ...] and the other lines; items
    are (README line number or 0, normalized text, text as printed)."""
    out, rest = [], []
    for item in lines:
        if item[1].startswith("divergence: "):
            out.append([item])
        elif item[1].startswith("  ") and out:
            out[-1].append(item)
        else:
            rest.append(item)
    return out, rest


def norm_many(block):
    """An incomplete divergence over >2 ranks: the two ranks its first line names are in
    trace-file order; its note lists every rank, sorted, and is compared as it is."""
    m = MANY.match(block[1][1]) if len(block) > 1 and " incomplete " in block[0][1] else None
    h = HEAD_RANKS.search(block[0][1]) if m else None
    if not h:
        return block
    a, b = h.group(1), h.group(2)
    if a == b:
        raise Fail(f"the incomplete divergence names rank {a} twice: {block[0][1]}")
    listed = m.group(2).split(", ")
    if a not in listed or b not in listed:
        raise Fail(f"the incomplete divergence names ranks {a} and {b}, its note lists {listed}")
    head = re.sub(rf": rank {a} (.*) vs rank {b} ", r": rank <r> \1 vs rank <r> ", block[0][1], count=1)
    return [(block[0][0], head, block[0][2])] + block[1:]


def check_compare(got, want, readme):
    """Check 3: compare's lines; the first divergence and the rest in place, later divergences in any order."""
    gb, grest = blocks([(0, norm_comm(l), l) for l in got])
    wb, wrest = blocks([(n, norm_comm(l), l) for n, l in want])
    gb, wb = [norm_many(b) for b in gb], [norm_many(b) for b in wb]
    if not wb:
        raise Fail(f"{readme}: the compare block lists no divergence")
    if len(gb) != len(wb):
        raise Fail(f"{readme}:{wb[0][0][0]}: the README lists {len(wb)} divergences, compare printed {len(gb)}:\n"
                   + "\n".join(got))
    free = list(range(1, len(gb)))
    for i, w in enumerate(wb):
        if i == 0:
            g = gb[0]
        else:
            heads = [j for j in free if gb[j][0][1] == w[0][1]]
            if not heads:
                raise Fail(f"{readme}:{w[0][0]}: compare printed no divergence `{w[0][2]}` (its others: "
                           + "; ".join(f"`{gb[j][0][2]}`" for j in free) + ")")
            g = gb[heads[0]]
            free.remove(heads[0])
        for k, (no, line, orig) in enumerate(w):
            if k >= len(g) or g[k][1] != line:
                have = g[k][2] if k < len(g) else "(nothing)"
                raise Fail(f"{readme}:{no}: the README says `{orig}`, compare printed `{have}`")
        if len(g) > len(w):
            raise Fail(f"{readme}:{w[-1][0]}: compare printed a further line `{g[len(w)][2]}`")
    check_lines([l for _, _, l in grest], [(n, l) for n, _, l in wrest], readme, "compare")


def check_lines(got, want, readme, tool):
    for k, (no, line) in enumerate(want):
        have = got[k] if k < len(got) else "(nothing)"
        if norm_comm(have) != norm_comm(line):
            raise Fail(f"{readme}:{no}: the README says `{line}`, {tool} printed `{have}`")
    if len(got) > len(want):
        raise Fail(f"{readme}:{want[-1][0] if want else 0}: {tool} printed a further line `{got[len(want)]}`")


def main(argv):
    if len(argv) < 6:
        print(__doc__)
        return 2
    lockstep, readme, binary, mpiexec, scratch = argv[1:6]
    root = os.getcwd()
    readme = os.path.relpath(readme)  # messages name README.md:LINE
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    subst = {"build/lockstep": lockstep, "build/tests/mpi/op_mismatch": binary, "mpirun": mpiexec,
             "/tmp/t": os.path.join(scratch, "traces"), "/tmp/lint.json": os.path.join(scratch, "lint.json"),
             "<mpi-flags>": argv[6:]}
    steps = readme_steps(readme)
    cmds = [c.split()[1] if c.startswith("build/lockstep ") else c.split()[0] for _, c, _ in steps]
    if cmds != ["run", "echo", "compare", "lint", "confirm"]:
        raise Fail(f"{readme}: the section's commands are {cmds}; this test knows run, echo $?, compare, lint, confirm")
    t0 = time.monotonic()
    status = None
    for no, cmd, want in steps:
        if cmd == "echo $?":
            if len(want) != 1 or not want[0][1].isdigit():
                raise Fail(f"{readme}:{no}: `echo $?` must be followed by one number")
            if status != int(want[0][1]):
                raise Fail(f"{readme}:{want[0][0]}: the README says the run exits {want[0][1]}, it exited {status}")
            print(f"ok: exit status {status}")
            continue
        args, out = argv_of(no, cmd, subst, readme)
        print("$ " + shlex.join(args), flush=True)
        if args[1] == "run":
            status, text = run_bounded(args, root)
            print(text.rstrip())
            ranks = check_run_lines(text.splitlines(), want, readme, subst["/tmp/t"])
            print(f"ok: run lines of ranks {ranks} have the README's shape")
            continue
        if out:  # stdout to the file, as the README's redirect does; nothing on the terminal
            with open(out, "wb") as f:
                p = subprocess.run(args, stdout=f, stderr=subprocess.PIPE, cwd=root, timeout=120)
            err = p.stderr.decode(errors="replace")
            if p.returncode not in (0, 1) or want or err:
                raise Fail(f"{readme}:{no}: `{cmd}` exited {p.returncode}, printed: {err[-2000:]}")
            continue
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=root, timeout=120)
        text = p.stdout.decode(errors="replace")
        got = [norm_path(l, root) for l in text.splitlines()]
        print("\n".join(got))
        if args[1] == "compare":
            check_compare(got, want, readme)
        else:
            check_lines(got, want, readme, args[1])
        print(f"ok: {args[1]} prints the README's {len(want)} lines")
    shutil.rmtree(scratch, ignore_errors=True)  # passed: the 4 preallocated traces are ~34 MB
    print(f"ok: README section '{SECTION[4:]}' holds ({time.monotonic() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Fail as e:
        print(f"FAIL: {e}")
        sys.exit(1)

#!/usr/bin/env python3
"""tests/fuzz/bad_inputs.py — hand-made bad inputs through the real `lockstep` binary.

usage: bad_inputs.py LOCKSTEP WORKDIR
Every damaged trace must make `compare` and `trace export` exit 2 with
"FILE: offset N: ..." where N is the byte the damage is at (computed here from
runtime/trace_format.h's layout, not copied from the tool's output); every broken
rules file must make `lint --rules` exit 2 naming the file and line:col or the key.
A well-formed trace whose unused (free) slot holds garbage must still be accepted.
"""
import os
import struct
import subprocess
import sys

LOCKSTEP, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
failures = []

# Layout (trace_format.h), format version 1 (today's readers keep reading it): header 4096
# bytes; here 2 api entries at 4096, the module table (512 x 256 bytes) at 4208 and the
# records (128 bytes each) at 135280.
HDR = struct.Struct("<8sIIIIQQQIIQQiiiIQQ64s256s")
REC = struct.Struct("<IHHQQQiiiiiiiIQQQQQQQI4s")
API = struct.Struct("<48sHHHH")
API_OFF, MOD_OFF, REC_OFF = 4096, 4096 + 2 * 56, 4096 + 2 * 56 + 512 * 256
NO_SEQ = (1 << 64) - 1
H_VERSION, H_RECORD_SIZE, H_API_OFFSET, H_NMODULES, H_RECORDS_OFFSET, H_HOSTNAME = 8, 16, 40, 52, 64, 104
R_API, R_RANK = 4, 52


def trace(ncap=2, **hdr):
    f = dict(magic=b"LSTRACE1", version=1, header_size=4096, record_size=128, flags=2, capacity=ncap,
             nrecords=2, api_offset=API_OFF, napis=2, nmodules=0, modules_offset=MOD_OFF,
             records_offset=REC_OFF, pid=42, lrank=0, lsize=1, timeout=1000, t0r=1700000000000000000,
             t0m=1000, host=b"node0", exe=b"/bin/prog")
    f.update(hdr)
    b = bytearray(REC_OFF + ncap * 128)
    HDR.pack_into(b, 0, *f.values())
    API.pack_into(b, API_OFF, b"ncclAllReduce", 1, 1, 1, 0)
    API.pack_into(b, API_OFF + 56, b"ncclCommInitRank", 5, 1, 0, 0)
    # state api flags comm seq count dtype redop root rc depth rank size tid t_in t_out t_done pc ...
    REC.pack_into(b, REC_OFF, 2, 1, 0, 0x77, NO_SEQ, 0, -1, -1, -1, 0, 0, 0, 1, 7, 2000, 3000, 0, 0, 0, 0, 0,
                  0, b"")
    REC.pack_into(b, REC_OFF + 128, 2, 0, 0, 0x77, 0, 8, 7, 0, -1, 0, 0, 0, 1, 7, 4000, 5000, 0, 0, 0, 0, 0, 0,
                  b"")
    return b


def run(*args):
    p = subprocess.run([LOCKSTEP, *args], capture_output=True, text=True, errors="replace", timeout=60)
    return p.returncode, p.stderr


def expect_trace_bad(name, data, offset, words):
    path = os.path.join(WORK, name + ".lstrace")
    open(path, "wb").write(data)
    want = "%s: offset %d: " % (path, offset)
    for cmd in (["compare", path], ["trace", "export", "-o", os.devnull, path]):
        rc, err = run(*cmd)
        if rc != 2 or want not in err or words not in err or "Sanitizer" in err:
            failures.append("%s: `%s`: exit %d, want 2 and '%s...%s' in:\n%s" % (name, cmd[0], rc, want, words, err))


def patch(data, off, fmt, value):
    b = bytearray(data)
    struct.pack_into(fmt, b, off, value)
    return b


good = trace()
path = os.path.join(WORK, "good.lstrace")
open(path, "wb").write(good)
rc, err = run("compare", path)
if rc != 0:
    failures.append("the well-formed trace is not accepted (exit %d):\n%s" % (rc, err))

expect_trace_bad("empty", b"", 0, "empty file")
expect_trace_bad("magic", b"LSTRACE2" + bytes(good[8:]), 0, "not a lockstep trace")
expect_trace_bad("short-header", good[:1000], 1000, "truncated inside the 4096-byte header")
expect_trace_bad("version", patch(good, H_VERSION, "<I", 7), H_VERSION, "unsupported trace version 7")
expect_trace_bad("record-size", patch(good, H_RECORD_SIZE, "<I", 64), H_RECORD_SIZE, "record size 64")
expect_trace_bad("api-offset", patch(good, H_API_OFFSET, "<Q", 1 << 40), H_API_OFFSET, "api table")
expect_trace_bad("nmodules", patch(good, H_NMODULES, "<I", 600), H_NMODULES, "600 modules")
expect_trace_bad("records-offset", patch(good, H_RECORDS_OFFSET, "<Q", 100), H_RECORDS_OFFSET, "records offset 100")
expect_trace_bad("hostname", patch(good, H_HOSTNAME, "<64s", b"x" * 64), H_HOSTNAME, "hostname")
expect_trace_bad("truncated", good[:len(good) - 100], len(good) - 100, "truncated")
expect_trace_bad("api-name", patch(good, API_OFF + 56, "<48s", b"y" * 48), API_OFF + 56, "not NUL-terminated")
expect_trace_bad("api-index", patch(good, REC_OFF + 128 + R_API, "<H", 9), REC_OFF + 128 + R_API,
                 "api index 9 out of range")
expect_trace_bad("state", patch(good, REC_OFF, "<I", 5), REC_OFF, "invalid state 5")
expect_trace_bad("rank", patch(good, REC_OFF + 128 + R_RANK, "<i", 3), REC_OFF + 128 + R_RANK,
                 "rank 3 is not within a communicator of size 1")

# Regression (fuzz_trace): a free slot's fields are not validated, so nothing may
# look them up; its api index 0xffff once made compare read far past the api table.
g3 = trace(ncap=3, nrecords=3)
REC.pack_into(g3, REC_OFF + 256, 0, 0xFFFF, 0xFFFF, 0x77, 5, 1, -9, -9, -9, -9, -9, 99, -5, 0, 9, 1, 0, 0, 0, 0,
              0, 0, b"")
path = os.path.join(WORK, "free-slot-garbage.lstrace")
open(path, "wb").write(g3)
# compare says the run is incomplete (exit 3): a claimed slot was never written.
for cmd, want in ((["compare", path], 3), (["trace", "export", "--format=perfetto", "-o", os.devnull, path], 0)):
    rc, err = run(*cmd)
    if rc != want or "Sanitizer" in err:
        failures.append("free-slot-garbage: `%s` exit %d, want %d:\n%s" % (cmd[0], rc, want, err))

# Rules files through `lint --rules` (the analyzer's loader).
src = os.path.join(WORK, "ok.c")
open(src, "w").write("void f(void) {}\n")
RULES = [
    # name, text, expected "FILE<suffix>" where suffix is :line:col or ": error: key..."
    # line:col of the character where parsing stopped, counted by hand
    ("no-colon", '{\n  "functions" []\n}\n', ":2:15: error: invalid JSON"),
    ("trailing-comma", '{"functions": [1, 2,]}', ":1:21: error: invalid JSON"),
    ("bad-literal", '{"api": tru}', ":1:9: error: invalid JSON"),
    ("trailing-garbage", '{"api": "nccl"}\nxyz', ":2:1: error: invalid JSON"),
    ("empty", "", ":1:1: error: invalid JSON"),
    ("top-level", "[]\n", ": error: top level must be a JSON object"),
    ("functions-type", '{"functions": 3}', ': error: "functions" must be an array'),
    ("missing-args", '{"functions": [{"name": "f", "kind": "collective"}]}',
     ': error: functions[0]: missing required key "args"'),
    ("role-type", '{"functions": [{"name": "f", "kind": "p2p", "args": [{"name": "a"}, {"name": "b", "role": 5}]}]}',
     ': error: functions[0].args[1]: "role" must be a non-empty string'),
    ("in-place", '{"functions": [{"name": "f", "kind": "p2p", "args": [{"name": "a"}], "in_place": {"buffer": "z"}}]}',
     ': error: functions[0]: in_place.buffer names "z", which is not an argument'),
    ("received", '{"functions": [{"name": "f", "kind": "collective", "args": [{"name": "b", "role": "recvbuf"}], "received": "same"}]}',
     ': error: functions[0]: "received" must be "uniform" or "per_rank"'),
    ("source-arg", '{"rank_sources": [{"call": "g", "arg": -1, "values": []}]}',
     ': error: rank_sources[0]: "arg" must be a non-negative integer'),
    ("noreturn", '{"noreturn": ["exit", 7]}', ": error: noreturn[1]: must be a non-empty string"),
]
for name, text, suffix in RULES:
    rpath = os.path.join(WORK, "rules-%s.json" % name)
    open(rpath, "w").write(text)
    rc, err = run("lint", "--rules", rpath, src)
    if rc != 2 or (rpath + suffix) not in err or "Sanitizer" in err:
        failures.append("rules %s: exit %d, want 2 and '%s' in:\n%s" % (name, rc, rpath + suffix, err))
rc, err = run("lint", "--rules", os.path.join(WORK, "no-such.json"), src)
if rc != 2 or "no-such.json" not in err:
    failures.append("missing rules file: exit %d, want 2 naming it:\n%s" % (rc, err))

for f in failures:
    print("FAIL", f, file=sys.stderr)
print("bad inputs: %d failures" % len(failures))
sys.exit(1 if failures else 0)

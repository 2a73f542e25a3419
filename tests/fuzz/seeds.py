#!/usr/bin/env python3
"""tests/fuzz/seeds.py — seed corpora for the fuzz harnesses from real traces.

usage: seeds.py SEEDDIR [RUNDIR...]
Each RUNDIR holds the *.lstrace files of one run. Writes SEEDDIR/trace/ (each trace
trimmed to its claimed records, so the reader accepts it and the fuzzer gets small
inputs) and SEEDDIR/compare/ (the run in fuzz_compare.c's compact form). Without
RUNDIRs, writes a few hand-made compact seeds instead. Layout: runtime/trace_format.h.
"""
import glob
import os
import struct
import sys

HDR = struct.Struct("<8sIIIIQQQIIQQiiiIQQ64s256s")  # the fixed-size front of the header
REC = struct.Struct("<IHHQQQiiiiiiiIQQQQQQQI4s")
API = struct.Struct("<48sHHHH")
NAMES = ["ncclAllReduce", "ncclBroadcast", "ncclBcast", "ncclReduce", "ncclAllGather",
         "ncclReduceScatter", "ncclSend", "ncclRecv", "ncclGroupStart", "ncclGroupEnd",
         "ncclCommInitRank", "ncclCommSplit", "ncclCommDestroy", "ncclCommAbort",
         "ncclCommGetAsyncError", "MPI_Allreduce", "MPI_Bcast", "MPI_Send", "MPI_Irecv", "MPI_Wait",
         "MPI_Comm_split", "lockstep_watchdog", "unknownApi", "ncclAlltoAll"]
NO_SEQ = (1 << 64) - 1


def b8(v):
    return v & 0xFF


def compact(path, comm_ids):
    data = open(path, "rb").read()
    h = HDR.unpack_from(data, 0)
    (_, _, _, rsize, flags, cap, nrec, api_off, napis, _, _, rec_off, _, lrank, lsize) = h[:15]
    used = min(cap, nrec)
    recs = [REC.unpack_from(data, rec_off + i * rsize) for i in range(used)]  # a record's first 128 bytes
    recs = [r for r in recs if r[0] != 0][:200]
    apis = sorted({r[1] for r in recs})[:32] or [0]
    remap = {a: i for i, a in enumerate(apis)}
    out = bytearray([b8(lrank), b8(lsize), flags & 7, len(apis) - 1, 0, 0, 0])
    for a in apis:
        name, kind, fam, opc, _ = API.unpack_from(data, api_off + a * 56) if a < napis else (b"", 0, 0, 0, 0)
        name = name.split(b"\0")[0].decode(errors="replace")
        out += bytes([NAMES.index(name) if name in NAMES else NAMES.index("unknownApi"), kind % 256, fam % 256,
                      opc % 8])
    t0 = min((r[14] for r in recs), default=0)
    for r in recs:
        (state, api, rflags, comm, seq, count, dtype, redop, root, rc, depth, crank, csize, tid,
         t_in, t_out, t_done) = r[:17]
        cid = 0 if comm == 0 else comm_ids.setdefault(comm, 1 + len(comm_ids) % 7)
        out += bytes([state, remap.get(api, 0), rflags & 0x7F, cid,
                      0xFF if seq == NO_SEQ else min(seq, 23), count & 0xFF, (count >> 8) & 0xFF, b8(dtype),
                      b8(redop), b8(root), rc % 16, depth % 4, max(crank, 0) % 256,
                      (max(csize, 1) - 1) % 256, tid % 4, min((t_in - t0) // 1000, 254),
                      min(max(t_out - t_in, 0) // 1000, 254), min(max(t_done - t_out, 0) // 1000, 254)
                      if t_done else 0xFF, 0, 0])
    return bytes(out)


def trimmed(path):
    data = bytearray(open(path, "rb").read())
    h = HDR.unpack_from(data, 0)
    rsize, cap, nrec, rec_off = h[3], h[5], h[6], h[11]
    used = min(cap, nrec)
    struct.pack_into("<QQ", data, 24, used, used)  # capacity, nrecords
    return bytes(data[:rec_off + used * rsize])


def main():
    seeds, runs = sys.argv[1], sys.argv[2:]
    os.makedirs(os.path.join(seeds, "trace"), exist_ok=True)
    os.makedirs(os.path.join(seeds, "compare"), exist_ok=True)
    n = 0
    for run in runs:
        files = sorted(glob.glob(os.path.join(run, "*.lstrace")))
        if not files:
            continue
        comm_ids = {}
        parts = [compact(f, comm_ids) for f in files[:4]]
        if len(parts) == 1:
            parts.append(b"")
        n += 1
        open(os.path.join(seeds, "compare", "run%03d" % n), "wb").write(b"LSFZ".join(parts))
        for i, f in enumerate(files[:4]):
            open(os.path.join(seeds, "trace", "run%03d_%d" % (n, i)), "wb").write(trimmed(f))
    if n == 0:
        # Two ranks agreeing on an allreduce at seq 0, then disagreeing on the count at seq 1.
        rank = lambda rk, count: bytes([rk, 2, 2, 0, 0, 0, 0, 0, 1, 1, 1]) + b"".join(
            bytes([2, 0, 4, 1, s, c, 0, 7, 0, 0xFF, 0, 0, rk, 1, 0, s, 1, 1, 0, 0])
            for s, c in ((0, 8), (1, count)))
        open(os.path.join(seeds, "compare", "hand1"), "wb").write(rank(0, 8) + b"LSFZ" + rank(1, 9))
    print("fuzz seeds: %d runs of real traces" % n)


main()

"""traces.py — read what lockstep recorded, for the gpu_tests checks.

Two sources, both normalized to one record shape ({rank, api, rc, depth, seq, comm,
t_enter, t_exit, t_complete, flags, aux0}):
  - `lockstep trace export --format=json` output (the checked path). Its schema is the
    tools' to define; this reader looks for lists of call records under any key and maps
    the usual field spellings, so a renamed field shows up as a missing value, not a crash.
  - the .lstrace files themselves, per runtime/trace_format.h (fallback used only when
    the export is unavailable; the report says which source a check used).
Non-goal: validating the trace format; lockstep's own readers do that.
"""
import glob
import json
import os
import struct

RC_NAMES = {"ncclSuccess": 0, "ncclUnhandledCudaError": 1, "ncclSystemError": 2,
            "ncclInternalError": 3, "ncclInvalidArgument": 4, "ncclInvalidUsage": 5,
            "ncclRemoteError": 6, "ncclInProgress": 7}

_API = ("api", "name", "function", "call", "fn")
_RC = ("rc", "result", "ret", "return", "return_code", "status_code")
_DEPTH = ("group_depth", "depth")
_RANK = ("rank", "launcher_rank", "process_rank", "world_rank")


def _first(d, keys):
    for k in keys:
        if k in d and d[k] is not None:
            return d[k]
    return None


def _rc(v):
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return int(v)
    if isinstance(v, str):
        for name, code in RC_NAMES.items():
            if name.lower() in v.lower():
                return code
        try:
            return int(v)
        except ValueError:
            return None
    if isinstance(v, dict):
        return _rc(_first(v, ("code", "value", "rc", "name")))
    return None


def _num(d, *keys):
    v = _first(d, keys)
    if isinstance(v, dict):
        v = _first(v, ("ns", "enter_ns", "value"))
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def _norm(rec, rank):
    api = _first(rec, _API)
    if isinstance(api, dict):
        api = _first(api, ("name",))
    if not isinstance(api, str):
        return None
    r = _first(rec, ("comm_rank",))
    times = rec.get("times") if isinstance(rec.get("times"), dict) else rec
    return {
        "rank": rank, "api": api, "rc": _rc(_first(rec, _RC)),
        "depth": _num(rec, *_DEPTH), "seq": _num(rec, "seq", "sequence"),
        "comm": _first(rec, ("comm", "comm_id")), "comm_rank": r,
        "t_enter": _num(times, "t_enter_ns", "enter_ns", "t_enter", "enter"),
        "t_exit": _num(times, "t_exit_ns", "exit_ns", "t_exit", "exit"),
        "t_complete": _num(times, "t_complete_ns", "complete_ns", "completed_ns", "t_complete",
                           "complete"),
        "aux0": _first(rec, ("aux0", "async_state", "state_out")),
        "flags": _first(rec, ("flags",)),
        "site": rec.get("site") if isinstance(rec.get("site"), dict) else None,
    }


def _trace_rank(header, recs):
    """A process's rank: the launcher's (mpirun/torchrun environment), else the first
    communicator rank it recorded (calls without a communicator carry -1)."""
    r = header.get("launcher_rank") if isinstance(header, dict) else None
    if isinstance(r, int) and r >= 0:
        return r
    return next((x["comm_rank"] for x in recs if isinstance(x.get("comm_rank"), int)
                 and x["comm_rank"] >= 0), None)


def from_export(doc):
    """Records grouped by rank from an export document: {"traces":[{"header","records"}]}
    as `lockstep trace export` writes it; other shapes are searched for record lists."""
    out = {}
    if isinstance(doc, dict) and isinstance(doc.get("traces"), list):
        for t in doc["traces"]:
            recs = [n for n in (_norm(x, None) for x in t.get("records") or []) if n]
            rank = _trace_rank(t.get("header") or {}, recs)
            for n in recs:
                n["rank"] = rank
            if recs:
                out.setdefault(rank, []).extend(recs)
        return out

    def walk(node, rank):
        if isinstance(node, dict):
            here = _first(node, _RANK)
            hdr = node.get("header") if isinstance(node.get("header"), dict) else None
            if here is None and hdr:
                here = _first(hdr, _RANK)
            if isinstance(here, int) and here >= 0:
                rank = here
            for k, v in node.items():
                if k in ("apis", "modules"):
                    continue
                if isinstance(v, list) and v and all(isinstance(x, dict) for x in v) and \
                        any(_first(x, _API) is not None for x in v[:8]):
                    for x in v:
                        n = _norm(x, rank)
                        if n:
                            out.setdefault(n["rank"], []).append(n)
                elif isinstance(v, (dict, list)):
                    walk(v, rank)
        elif isinstance(node, list):
            for x in node:
                walk(x, rank)

    walk(doc, None)
    return out


_HDR = struct.Struct("<8sIIIIQQQIIQQiiiIQQ")
_REC = struct.Struct("<IHHQQQiiiiiiiIQQQQQQQ8x")


def from_raw(trace_dir):
    """Records grouped by rank straight from the .lstrace files (trace_format.h versions 1 and
    2: records stride by the header's record size, and a version-2 record begins with the
    version-1 one)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(trace_dir, "**", "*.lstrace"), recursive=True)):
        with open(path, "rb") as f:
            data = f.read()
        if len(data) < 4096 or data[:8] != b"LSTRACE1":
            continue
        h = _HDR.unpack_from(data, 0)
        (_, _ver, _hs, recsz, _fl, cap, nrec, api_off, napis, _nmod, _mod_off, rec_off,
         _pid, lrank, _lsize, _tmo, _rt, _mono) = h
        apis = []
        for i in range(napis):
            raw = data[api_off + 56 * i: api_off + 56 * i + 48]
            apis.append(raw.split(b"\0", 1)[0].decode("ascii", "replace"))
        recs = []
        for i in range(min(cap, nrec)):
            off = rec_off + i * recsz
            if off + 128 > len(data):
                break
            r = _REC.unpack_from(data, off)
            (state, api, flags, comm, seq, _cnt, _dt, _ro, _rp, rc, depth, crank, _cs, _tid,
             te, tx, tc, _pc, _st, aux0, _aux1) = r
            if state == 0:
                continue
            recs.append({
                "rank": lrank, "api": apis[api] if api < len(apis) else "?",
                "rc": rc if state == 2 else None, "depth": depth, "seq": seq, "comm": comm,
                "comm_rank": crank, "t_enter": te, "t_exit": tx if state == 2 else None,
                "t_complete": tc if flags & 0x4 else None, "aux0": aux0, "flags": flags})
        if recs:
            rank = _trace_rank({"launcher_rank": lrank}, recs)
            for x in recs:
                x["rank"] = rank
            out.setdefault(rank, []).extend(recs)
    return out


def load(path_or_doc):
    if isinstance(path_or_doc, str):
        with open(path_or_doc) as f:
            path_or_doc = json.load(f)
    return from_export(path_or_doc)

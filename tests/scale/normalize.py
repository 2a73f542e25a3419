#!/usr/bin/env python3
"""tests/scale/normalize.py — compare's output without what only a real run has: each
communicator identity becomes comm<k> (k: its creation order, from IDMAP's "HEX K" lines),
call sites, file paths and per-file names go, JSON lists whose order follows the identities
are sorted by the new names.
usage: normalize.py IDMAP text|json FILE"""
import json
import re
import sys


def main():
    idmap, fmt, path = sys.argv[1:4]
    ids = {}
    with open(idmap) as f:
        for line in f:
            hexid, k = line.split()
            ids["0x" + hexid] = f"comm{k}"
    text = open(path).read()
    for old, new in ids.items():
        text = text.replace(old, new)
    if fmt == "text":
        text = re.sub(r" at (pc 0x[0-9a-f]+|[^ ]+:[0-9]+|[^ ]+\+0x[0-9a-f]+)", "", text)
        sys.stdout.write(text)
        return 0
    doc = json.loads(text)
    doc["files"] = len(doc.get("files", []))
    doc["communicators"] = sorted(doc.get("communicators", []), key=lambda c: c["id"])
    for d in doc.get("divergences", []):
        d["sites"] = [s.get("rank") for s in d.get("sites", [])]
    json.dump(doc, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

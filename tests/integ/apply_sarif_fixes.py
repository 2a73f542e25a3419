"""apply_sarif_fixes.py SARIF DIR — applies every result's first fix (SARIF `fixes`:
replacements of deletedRegion by insertedContent, 1-based lines/columns, end exclusive) to
the files, as an editor or a code-review bot would; prints the number of fixes applied."""
import json
import os
import sys
from urllib.parse import unquote, urlparse

doc = json.load(open(sys.argv[1]))
run = doc["runs"][0]
bases = {k: urlparse(v["uri"]).path for k, v in run.get("originalUriBaseIds", {}).items()}
edits = {}
for res in run["results"]:
    for fix in res.get("fixes", [])[:1]:
        for ch in fix["artifactChanges"]:
            loc = ch["artifactLocation"]
            path = unquote(urlparse(loc["uri"]).path)
            if "uriBaseId" in loc:
                path = os.path.join(bases[loc["uriBaseId"]], path)
            for r in ch["replacements"]:
                d = r["deletedRegion"]
                edits.setdefault(path, []).append((d["startLine"], d["startColumn"], d["endLine"], d["endColumn"],
                                                   r["insertedContent"]["text"]))
n = 0
for path, es in edits.items():
    lines = open(path).read().split("\n")
    for sl, sc, el, ec, text in sorted(es, reverse=True):  # bottom-up: earlier edits keep their positions
        head = lines[sl - 1][: sc - 1]
        tail = lines[el - 1][ec - 1 :]
        lines[sl - 1 : el] = (head + text + tail).split("\n")
        n += 1
    open(path, "w").write("\n".join(lines))
print(n)

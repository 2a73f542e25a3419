"""check_sarif.py SCHEMA FILE [EXPECT...] — validates FILE against the OASIS SARIF 2.1.0
schema with the `jsonschema` package, then checks what code scanning relies on: every
result names a documented rule by id and index, has a location and a partial fingerprint.
EXPECT items: results=N, suppressed=N, related>=N (on some result), notifications=N,
level:RULE=LEVEL, state=STATE (every result's baselineState), execution=true|false (the
invocation's executionSuccessful), notification-level=LEVEL (every notification's),
version=V (tool.driver's version and semanticVersion)."""
import json
import sys

import jsonschema

schema_path, doc_path, *expect = sys.argv[1:]
schema = json.load(open(schema_path))
doc = json.load(open(doc_path))
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
errors = sorted(cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(doc), key=lambda e: list(e.path))
for e in errors[:10]:
    print("schema violation at /%s: %s" % ("/".join(map(str, e.path)), e.message))
if errors:
    sys.exit(1)
print("valid against", schema.get("id") or schema.get("$id"), "with", cls.__name__)

run = doc["runs"][0]
rules = run["tool"]["driver"]["rules"]
ids = [r["id"] for r in rules]
want_rules = {"rank-divergent-collective", "unbalanced-group", "rank-dependent-argument", "ungrouped-p2p"}
assert want_rules <= set(ids), ids
for r in rules:
    for k in ("shortDescription", "fullDescription", "help"):
        assert r[k]["text"].strip(), (r["id"], k)
    assert "Bad:" in r["help"]["text"] and "Good:" in r["help"]["text"], r["id"]
results = run["results"]
for res in results:
    assert ids[res["ruleIndex"]] == res["ruleId"], res
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] and loc["region"]["startLine"] >= 1, res
    fp = res["partialFingerprints"]["lockstepFingerprint/v1"]
    assert len(fp) == 16 and int(fp, 16) >= 0, fp
fails = []
for e in expect:
    if e.startswith("results="):
        if len(results) != int(e[8:]):
            fails.append("%s: got %d results" % (e, len(results)))
    elif e.startswith("suppressed="):
        n = sum(1 for r in results if r.get("suppressions"))
        if n != int(e[11:]):
            fails.append("%s: got %d" % (e, n))
    elif e.startswith("related>="):
        n = max([len(r.get("relatedLocations", [])) for r in results] + [0])
        if n < int(e[9:]):
            fails.append("%s: got %d" % (e, n))
    elif e.startswith("notifications="):
        n = sum(len(i.get("toolExecutionNotifications", [])) for i in run["invocations"])
        if n != int(e[14:]):
            fails.append("%s: got %d" % (e, n))
    elif e.startswith("level:"):
        rule, level = e[6:].split("=")
        got = {r["level"] for r in results if r["ruleId"] == rule}
        if got != {level}:
            fails.append("%s: got %s" % (e, got))
    elif e.startswith("state="):
        got = {r.get("baselineState") for r in results}
        if got != {e[6:]}:
            fails.append("%s: got %s" % (e, got))
    elif e.startswith("related-msg="):
        msgs = [l["message"]["text"] for r in results for l in r.get("relatedLocations", [])]
        if not any(e[12:] in m for m in msgs):
            fails.append("%s: not among %s" % (e, msgs))
    elif e.startswith("execution="):
        got = [i["executionSuccessful"] for i in run["invocations"]]
        if got != [e[10:] == "true"]:
            fails.append("%s: got %s" % (e, got))
    elif e.startswith("notification-level="):
        got = {n["level"] for i in run["invocations"] for n in i.get("toolExecutionNotifications", [])}
        if got != {e[19:]}:
            fails.append("%s: got %s" % (e, got))
    elif e.startswith("version="):
        drv = run["tool"]["driver"]
        got = (drv.get("version"), drv.get("semanticVersion"))
        if got != (e[8:], e[8:]):
            fails.append("%s: got version, semanticVersion %s" % (e, got))
    else:
        fails.append("unknown expectation " + e)
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)

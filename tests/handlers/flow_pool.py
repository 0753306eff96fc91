#!/usr/bin/env python3
# A pool handler for flows: each job's result is JSON holding its payload
# and the "children" field of its line (absent: []), so a test reads what a
# parent was given from the parent's own result. A payload that starts with
# "die" fails the job for good.
import json
import sys

for line in sys.stdin:
    job = json.loads(line)
    if job.get("payload", "").startswith("die"):
        sys.stdout.write(json.dumps({"id": job["id"], "ok": False, "error": "died: " + job["payload"],
                                     "permanent": True}) + "\n")
        sys.stdout.flush()
        continue
    result = json.dumps({"payload": job.get("payload"), "children": job.get("children", [])})
    sys.stdout.write(json.dumps({"id": job["id"], "ok": True, "result": result}) + "\n")
    sys.stdout.flush()

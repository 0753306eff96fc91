#!/usr/bin/env python3
# A pool handler for the flow fault tests: for each job, one line appended
# to $FLOW_LEDGER before it answers: "<queue> <id> <children> <completed>",
# the children its line carried and how many of them completed.
import json
import os
import sys

ledger = os.environ["FLOW_LEDGER"]
for line in sys.stdin:
    job = json.loads(line)
    children = job.get("children", [])
    done = sum(1 for c in children if c.get("outcome") == "completed")
    with open(ledger, "a") as out:
        out.write("%s %s %d %d\n" % (job["queue"], job["id"], len(children), done))
    sys.stdout.write(json.dumps({"id": job["id"], "ok": True, "result": "r-" + job["id"]}) + "\n")
    sys.stdout.flush()

#!/usr/bin/env python3
# A pool handler that answers each job, then writes a second line: the next
# job would read it as its reply.
import json
import sys

for line in sys.stdin:
    job = json.loads(line)
    reply = json.dumps({"id": job["id"], "ok": True, "result": "first"})
    sys.stdout.write(reply + "\n" + reply + "\n")
    sys.stdout.flush()

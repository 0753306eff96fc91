#!/usr/bin/env python3
# A well-behaved pool handler that answers each job with its own pid and
# the number of jobs it has run, and says so on stderr; also on stderr at
# start and at stdin's end, so tests can see lines logged outside any job.
import json
import os
import sys

print(f"pool_pid: {os.getpid()} ready", file=sys.stderr, flush=True)
jobs = 0
for line in sys.stdin:
    job = json.loads(line)
    jobs += 1
    print(f"pool_pid: {os.getpid()} job {job['id']}", file=sys.stderr, flush=True)
    print(json.dumps({"id": job["id"], "ok": True, "result": f"{os.getpid()} {jobs}"}), flush=True)
print(f"pool_pid: {os.getpid()} stdin closed, exiting", file=sys.stderr, flush=True)

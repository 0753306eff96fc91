#!/usr/bin/env python3
"""An emqd pool handler in Python: upper-cases each job's payload.

emqd writes one job per line to stdin and reads one reply per line from
stdout (docs/handlers.md). A payload that is not UTF-8 arrives as
payload_b64; its answer goes back as result_b64. Logs go to stderr.
"""
import base64
import json
import sys


def reply(job):
    if "payload_b64" in job:
        data = base64.b64decode(job["payload_b64"])
        return {"ok": True, "result_b64": base64.b64encode(data.upper()).decode()}
    if job["payload"] == "":
        return {"ok": False, "error": "empty payload: nothing to upper-case", "permanent": True}
    return {"ok": True, "result": job["payload"].upper()}


for line in sys.stdin:
    job = json.loads(line)
    try:
        answer = reply(job)
    except Exception as e:  # a bug here fails this job, not the process
        print(f"echo_upper: job {job['id']}: {e!r}", file=sys.stderr, flush=True)
        answer = {"ok": False, "error": repr(e), "permanent": False}
    print(json.dumps({"id": job["id"], **answer}), flush=True)

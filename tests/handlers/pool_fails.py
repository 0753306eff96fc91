#!/usr/bin/env python3
# A pool handler that fails each job by the payload: "retry" or "permanent".
import json
import sys

for line in sys.stdin:
    job = json.loads(line)
    permanent = job.get("payload") == "permanent"
    print(json.dumps({"id": job["id"], "ok": False, "error": f"failed: {job.get('payload')}",
                      "permanent": permanent}), flush=True)

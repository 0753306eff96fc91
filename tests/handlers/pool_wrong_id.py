#!/usr/bin/env python3
# A pool handler that answers every job under another job's id.
import json
import sys

for line in sys.stdin:
    print(json.dumps({"id": "JOB_someone_else", "ok": True, "result": "x"}), flush=True)

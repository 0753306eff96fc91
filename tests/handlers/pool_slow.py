#!/usr/bin/env python3
# A pool handler that takes as many seconds as the payload says (a number),
# then answers "slept". Says on stderr when it is ready to read jobs, and
# when it gets SIGTERM, with its pid.
import json
import os
import signal
import sys
import time


def on_term(signum, frame):
    print(f"pool_slow: {os.getpid()} got SIGTERM", file=sys.stderr, flush=True)
    sys.exit(143)


signal.signal(signal.SIGTERM, on_term)
print(f"pool_slow: {os.getpid()} ready", file=sys.stderr, flush=True)
for line in sys.stdin:
    job = json.loads(line)
    time.sleep(float(job["payload"] or "0"))
    print(json.dumps({"id": job["id"], "ok": True, "result": "slept"}), flush=True)

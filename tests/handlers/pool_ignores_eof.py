#!/usr/bin/env python3
# A pool handler that answers jobs but does not exit when its stdin closes:
# the drain must kill it after kill_grace_s.
import json
import signal
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
for line in sys.stdin:
    job = json.loads(line)
    print(json.dumps({"id": job["id"], "ok": True, "result": "ok"}), flush=True)
print("pool_ignores_eof: stdin closed, staying", file=sys.stderr, flush=True)
time.sleep(60)

#!/usr/bin/env python3
# A pool handler that reports progress with progress lines: "one" at once,
# then {"step": 2} once the file <argv[1]>/after exists; answers "done" once
# <argv[1]>/go exists.
import json
import os
import sys
import time


def wait_for(name):
    while not os.path.exists(os.path.join(sys.argv[1], name)):
        time.sleep(0.01)


for line in sys.stdin:
    job = json.loads(line)
    print(json.dumps({"id": job["id"], "progress": "one"}), flush=True)
    wait_for("after")
    print(json.dumps({"id": job["id"], "progress": {"step": 2}}), flush=True)
    wait_for("go")
    print(json.dumps({"id": job["id"], "ok": True, "result": "done"}), flush=True)

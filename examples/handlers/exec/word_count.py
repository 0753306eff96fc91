#!/usr/bin/env python3
"""An exec handler in Python: counts the words of the payload.

Contract (docs/handlers.md): the payload is stdin, the result is stdout,
stderr lines are logged with the job id, exit 0 completes, 65 is permanent,
any other exit retries. EMQ_QUEUE, EMQ_JOB_ID, EMQ_ATTEMPT and
EMQ_DEADLINE_MS describe the job.
"""
import json
import os
import sys

text = sys.stdin.buffer.read().decode("utf-8", errors="replace")
attempt = int(os.environ.get("EMQ_ATTEMPT", "1"))
if "retry-me" in text and attempt < 2:
    print(f"transient failure on attempt {attempt}", file=sys.stderr)
    sys.exit(1)
words = text.split()
json.dump({"words": len(words), "longest": max(words, key=len, default="")}, sys.stdout)

#!/usr/bin/env python3
# A pool handler that answers a job with an endless line: bytes, no newline.
import sys

sys.stdin.readline()
chunk = b"x" * 65536
while True:
    sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()

#!/usr/bin/env python3
# A pool handler that dies: with "start", at once, before reading anything
# (a crash loop); otherwise on its first job, after a line on stderr.
import sys

if sys.argv[1:] == ["start"]:
    print("pool_dies: cannot start", file=sys.stderr, flush=True)
    sys.exit(3)
for line in sys.stdin:
    print("pool_dies: going down mid-job", file=sys.stderr, flush=True)
    sys.exit(3)

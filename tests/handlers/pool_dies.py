#!/usr/bin/env python3
# A pool handler that dies on its first job, after a line on stderr.
import sys

for line in sys.stdin:
    print("pool_dies: going down mid-job", file=sys.stderr, flush=True)
    sys.exit(3)

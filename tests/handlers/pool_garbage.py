#!/usr/bin/env python3
# A pool handler that answers every job with a line that is not JSON.
import sys

for line in sys.stdin:
    print("this is not json", flush=True)

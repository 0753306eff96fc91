#!/usr/bin/env python3
# A pool handler that closes its stdout on its first job and lives on.
import os
import sys
import time

sys.stdin.readline()
os.close(1)
time.sleep(60)

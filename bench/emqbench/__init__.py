"""bench/run's parts, one module per duty:

  servers    valkey-server and emqd, started and stopped by the run
  peer       BullMQ, the peer some rows are held against
  measure    rates and CPU: the programs' JSON line, /proc, interleaved samples
  session    what one run holds: the programs built, the server in use, the
             processes to end if it is interrupted
  workload   what the scenarios put on the server: the prefill, the no-op
             plugin, the server's count of its commands
  scenarios  one module per scenario: its rows and the targets they are
             held to (scenarios/__init__.py lists them in a run's order)
  report     the table, the JSON file and the versions they name

Python standard library only. What every part needs is here.
"""
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


class BenchError(Exception):
    pass


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def wait_for(what, condition, timeout, every=0.002):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise BenchError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)

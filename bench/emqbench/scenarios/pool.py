"""The pool handler (long-lived Python processes) against BullMQ's sandboxed
processor."""
import sys

from pathlib import Path
from emqbench import ROOT
from emqbench.measure import emqd_rate
from emqbench.workload import prefill


def python():
    # Debian's interpreter when there is one: a pyenv shim would add a
    # shell script's start to every pool process.
    return "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable


def scenario(s):
    jobs, bull_jobs = s.size("pool_jobs"), s.size("bull_pool_jobs")
    payload = "hello pool"
    handler = {"type": "pool", "command": [python(), str(ROOT / "examples/handlers/pool/echo_upper.py")]}
    for c in (2, 8):
        s.valkey.reset()
        prefill(s, "pool", jobs, payload=payload)
        ours = emqd_rate(s, f"pool-c{c}", "pool", jobs, c, handler)
        s.report.raw[f"pool_c{c}"] = dict(ours=ours)
        if s.peer is not None:
            bull = s.peer.worker_rate(s.valkey, "pool", bull_jobs, c, processor="upper_processor.js",
                                      payload=payload)
            s.report.raw[f"pool_c{c}"]["bullmq_sandboxed"] = bull
            s.report.row(f"pool, Python echo_upper, c={c}", ours, "jobs/s", f"BullMQ sandboxed processor, c={c}",
                         bull, target=">= 2" if c == 8 else None, met=(ours / bull >= 2) if c == 8 else None)
        else:
            s.report.row(f"pool, Python echo_upper, c={c}", ours, "jobs/s", "(no peer)", None, ratio_kind="none")

"""What the scenarios put on the server and hand emqd: the prefilled
queue, the no-op plugin, and the server's own count of its commands."""
from emqbench.measure import run_json

# The events length emqd gives a queue whose config says nothing (lib's
# kDefaultEventsLength): what the default configuration runs with.
DEFAULT_EVENTS = 10000


def noop_plugin(s):
    return {"type": "plugin", "path": str(s.lib("libemq_noop.so"))}


def prefill(s, queue, jobs, payload="x", first=0, queues=None, groups=0):
    """jobs through the optioned enqueue; groups > 0 spreads them round
    robin over that many groups."""
    qs = queues or [queue]
    args = [str(s.bin("emq_bench_enqueue")), "--url", s.valkey.url, "--jobs", str(jobs), "--depth", "64",
            "--payload", payload, "--first", str(first), "--groups", str(groups)]
    for q in qs:
        args += ["--queue", q]
    run_json(args)


def commandstats(valkey):
    """INFO commandstats as {command: (calls, usec)}."""
    out = {}
    for line in valkey.r.call("INFO", "commandstats").splitlines():
        name, _, rest = line.strip().partition(":")
        if name.startswith("cmdstat_"):
            stat = dict(kv.split("=", 1) for kv in rest.split(","))
            out[name[len("cmdstat_"):]] = (int(stat["calls"]), int(stat["usec"]))
    return out

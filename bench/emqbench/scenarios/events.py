"""Events on against off on each executor, completion to a wait's return,
and what a stream's entries cost the server's memory."""
from emqbench.measure import best_pair, emqd_rate, jobs_for_min_sample, percentile, run_json
from emqbench.servers import Valkey
from emqbench.workload import DEFAULT_EVENTS, noop_plugin, prefill


def scenario(s):
    """Events on against off (the no-op plugin, c=16, prefetch 16) on each
    executor; completion to a wait's return beside BullMQ's
    waitUntilFinished; and what 10,000 entries of a stream cost the server."""
    noop = noop_plugin(s)
    native = Valkey(s.workdir / "native-events", module=s.lib("emq.so"))
    try:
        for executor, server in (("scripted", s.valkey), ("native", native)):
            def run(events, jobs, executor=executor):
                s.valkey.reset()
                prefill(s, "ev", jobs)
                return emqd_rate(s, f"events-{executor}-{events}", "ev", jobs, 16, noop, prefetch=16,
                                 executor=executor, events=events)
            jobs = jobs_for_min_sample(s, f"events_{executor}", s.size("events_jobs"),
                                       s.on_server(server, lambda n, r=run: r(DEFAULT_EVENTS, n)),
                                       s.on_server(server, lambda n, r=run: r("off", n)))
            on, off = best_pair(s, f"events_{executor}", s.on_server(server, lambda r=run: r(DEFAULT_EVENTS, jobs)),
                                s.on_server(server, lambda r=run: r("off", jobs)))
            s.report.row(f"no-op e2e c=16, events on, {executor}", on, "jobs/s", "the same, events off", off,
                         target=">= 0.85", met=on / off >= 0.85)
    finally:
        native.stop()
    wait_rows(s)
    stream_memory_row(s)


def wait_rows(s):
    jobs = s.size("wait_jobs")
    s.valkey.reset()
    got = run_json([str(s.bin("emq_bench_wait")), "--url", s.valkey.url, "--jobs", str(jobs)])
    ours = sorted(x / 1e6 for x in got["samples_ns"])
    p50, p99 = percentile(ours, 50), percentile(ours, 99)
    b50 = b99 = None
    if s.peer is not None:
        theirs = sorted(x / 1e6 for x in s.peer.wait_latency(s.valkey, jobs))
        b50, b99 = percentile(theirs, 50), percentile(theirs, 99)
    s.report.raw["wait"] = dict(ours=[p50, p99], bullmq=[b50, b99], commands_per_wait=got["commands_per_wait"])
    peer = "BullMQ waitUntilFinished" if s.peer is not None else "(no peer)"
    kind = "lower" if s.peer is not None else "none"
    s.report.row("completion to wait's return p50", p50, "ms", peer, b50, kind, "<= 1 ms, below BullMQ",
                 p50 <= 1.0 and (b50 is None or p50 < b50))
    s.report.row("completion to wait's return p99", p99, "ms", peer, b99, kind)
    s.report.row("commands a wait sends (blocked, then woken)", got["commands_per_wait"], "commands",
                 "(no polling)", None, "none")


def stream_memory_row(s):
    """A stream of 10,000 entries as emqd writes them (pending, active,
    completed of real job ids), and MEMORY USAGE of it."""
    entries = s.size("events_entries")
    s.valkey.reset()
    s.valkey.r.call("HSET", "emq:{mem}:meta", "events", str(entries))
    prefill(s, "mem", entries // 3)
    ids = s.valkey.r.call("ZRANGE", "emq:{mem}:pending", "0", "-1")
    commands = []
    for i, job in enumerate(ids[: entries // 3 + 1]):
        for event, attempt in (("pending", "0"), ("active", "1"), ("completed", "1")):
            commands.append(["XADD", "emq:{mem}:events", "MAXLEN", "~", str(entries), "*", "event", event, "id", job,
                             "attempt", attempt])
    s.valkey.r.pipeline(commands)
    length = int(s.valkey.r.call("XLEN", "emq:{mem}:events"))
    used = int(s.valkey.r.call("MEMORY", "USAGE", "emq:{mem}:events", "SAMPLES", "0"))
    per_10k = used * 10_000 / length
    s.report.raw["stream_memory"] = dict(entries=length, bytes=used)
    s.report.row(f"server memory per 10,000 entries ({length:,} kept)", per_10k / 1024, "KiB", "(no target)", None,
                 "none")

"""The idle wake: a job enqueued into an idle queue, to the handler's entry."""
import subprocess
import time

from emqbench import BenchError, wait_for
from emqbench.measure import percentile


def scenario(s):
    jobs = s.size("latency_jobs")
    ev50, ev99 = emqd_latency(s, True, jobs)
    po50, po99 = emqd_latency(s, False, jobs)
    s.report.raw["latency"] = dict(events=[ev50, ev99], poll=[po50, po99])
    b50 = b99 = None
    if s.peer is not None:
        b50, b99 = s.peer.latency(s.valkey, jobs, s.running)
        s.report.raw["latency"]["bullmq"] = [b50, b99]
    peer = "BullMQ worker, c=1" if s.peer is not None else "(no peer)"
    kind = "lower" if s.peer is not None else "none"
    s.report.row("idle wake p50, keyspace events", ev50, "ms", peer, b50, kind, "<= 1 ms", ev50 <= 1.0)
    s.report.row("idle wake p99, keyspace events", ev99, "ms", peer, b99, kind, "<= 5 ms", ev99 <= 5.0)
    s.report.row("idle wake p50, polling only", po50, "ms", peer, b50, kind)
    s.report.row("idle wake p99, polling only", po99, "ms", peer, b99, kind)


def emqd_latency(s, events, jobs):
    s.valkey.reset("Kz" if events else "")
    out = s.workdir / f"latency-{'events' if events else 'poll'}.txt"
    if out.exists():
        out.unlink()
    plugin = {"type": "plugin", "path": str(s.lib("libemq_bench_latency.so")), "config": {"out": str(out)}}
    with s.emqd(f"latency-{events}", [dict(name="latency", concurrency=1, handler=plugin)],
                keyspace_events=events) as d:
        d.start()
        d.wait_ready()
        time.sleep(0.5)  # let the loops settle into their idle state
        subprocess.run([str(s.bin("emq_bench_latency_producer")), "--url", s.valkey.url, "--queue",
                        "latency", "--jobs", str(jobs), "--every-ms", "5"], check=True)

        def done():
            d.check_alive()
            return s.valkey.completed(["latency"]) >= jobs
        wait_for("the latency jobs", done, 60, every=0.01)
    samples = sorted(int(x) / 1e6 for x in out.read_text().split())
    if len(samples) != jobs:
        raise BenchError(f"latency plugin recorded {len(samples)} samples, not {jobs}")
    return percentile(samples, 50), percentile(samples, 99)

"""emqd's RSS idle, after the first tenth of a million jobs and after them all."""
import time

from emqbench import log, wait_for
from emqbench.measure import rss_kib
from emqbench.workload import noop_plugin, prefill


def scenario(s):
    total = s.size("memory_jobs")
    warm = total // 10
    queues = [f"mem{i}" for i in range(10)]
    s.valkey.reset()
    with s.emqd("memory", [dict(name=q, concurrency=64, handler=noop_plugin(s)) for q in queues]) as d:
        d.start()
        d.wait_ready()
        time.sleep(1.0)
        idle = rss_kib(d.proc.pid)

        def through(n):
            def done():
                d.check_alive()
                return s.valkey.completed(queues) >= n
            wait_for(f"{n} jobs through the 10 queues", done, 600, every=0.02)
            time.sleep(0.5)  # the last settles and frees
            return rss_kib(d.proc.pid)
        # Ten equal steps, RSS after each: a leak grows step after step, an
        # allocator warming up (per-thread arenas, stacks touched) stops.
        steps = []
        for k in range(10):
            prefill(s, None, warm, first=k * warm, queues=queues)
            steps.append(through((k + 1) * warm))
            log(f"memory: {(k + 1) * warm:,} jobs, RSS {steps[-1] / 1024:.2f} MiB")
        warmed, after = steps[0], steps[-1]
        peak = rss_kib(d.proc.pid, "VmHWM")
    mib = lambda k: k / 1024.0  # noqa: E731
    s.report.raw["memory"] = dict(idle_kib=idle, steps_kib=steps, peak_kib=peak, jobs=total)
    s.report.row("emqd RSS idle, 10 queues x 64 slots", mib(idle), "MiB", "(target)", None, "none", "<= 30 MiB",
                 mib(idle) <= 30)
    s.report.row(f"emqd RSS after first {warm:,} jobs", mib(warmed), "MiB", "RSS idle", mib(idle))
    s.report.row(f"emqd RSS after {total:,} jobs", mib(after), "MiB", f"RSS after {warm:,}", mib(warmed),
                 target="<= 1.05", met=after / warmed <= 1.05)

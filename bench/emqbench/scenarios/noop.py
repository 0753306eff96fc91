"""The no-op plugin end to end at c = 1, 16 and 64 against the raw library
loop, and against BullMQ's in-process no-op worker; events on, the default,
on every side (BullMQ keeps its events stream by default too)."""
from emqbench.measure import best_pair, emqd_rate, jobs_for_min_sample, run_json
from emqbench.workload import DEFAULT_EVENTS, noop_plugin, prefill


def scenario(s):
    bull_jobs = s.size("bull_noop_jobs")
    noop = noop_plugin(s)
    bull_best = 0.0
    ours_best = 0.0
    for c in (1, 16, 64):
        # prefetch = c: what docs/configuration.md advises for jobs this short.
        def ours(jobs, prefetch=c):
            s.valkey.reset()
            prefill(s, "noop", jobs)
            return emqd_rate(s, f"noop-c{c}-prefetch{prefetch}", "noop", jobs, c, noop, prefetch=prefetch)

        def ceiling(jobs):
            s.valkey.reset()
            prefill(s, "noop", jobs)
            return run_json([str(s.bin("emq_bench_raw_loop")), "--url", s.valkey.url, "--queue", "noop",
                             "--jobs", str(jobs), "--batch", str(c), "--events", str(DEFAULT_EVENTS)])["rate"]

        jobs = jobs_for_min_sample(s, f"noop_c{c}", s.size("noop_c1_jobs" if c == 1 else "noop_jobs"), ours,
                                   ceiling)
        mine, raw = best_pair(s, f"noop_c{c}", lambda: ours(jobs), lambda: ceiling(jobs))
        ours_best = max(ours_best, mine)
        s.report.row(f"no-op plugin e2e, c={c}, prefetch {c}", mine, "jobs/s", f"raw library loop, batch {c}", raw,
                     target=">= 0.8", met=mine / raw >= 0.8)
        # The default, prefetch 0, once: what a config that does not ask gets.
        plain = ours(jobs, prefetch=0)
        s.report.raw[f"noop_c{c}_prefetch0"] = plain
        s.report.row(f"no-op plugin e2e, c={c}, prefetch 0", plain, "jobs/s", f"raw library loop, batch {c}", raw)
        if s.peer is not None:
            def bullmq(n, c=c):
                return s.peer.worker_rate(s.valkey, "noop", n, c)
            bull = bullmq(jobs_for_min_sample(s, f"noop_c{c}_bullmq", bull_jobs, bullmq))
            s.report.raw[f"noop_c{c}_bullmq"] = bull
            bull_best = max(bull_best, bull)
            s.report.row(f"no-op plugin e2e, c={c}, prefetch {c}", mine, "jobs/s", f"BullMQ no-op worker, c={c}",
                         bull)
    if s.peer is not None:
        s.report.row("no-op e2e, best of c", ours_best, "jobs/s", "BullMQ no-op, best of c", bull_best,
                     target=">= 3", met=ours_best / bull_best >= 3)

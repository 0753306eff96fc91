"""emqd against the server's own ceiling: the no-op plugin end to end
beside emq_bench_raw_loop sending what emqd's claim loop sends at its best
(two connections, each with one round trip on the wire; claims of c jobs
with their two reads behind; the completes pipelined with the next claim;
the events stream with every transition), with no daemon and no handler.
On each executor, with the default configuration: events on."""
from emqbench import log
from emqbench.measure import best_pair, emqd_rate, jobs_for_min_sample, process_cpu, run_json
from emqbench.servers import Valkey
from emqbench.workload import DEFAULT_EVENTS, commandstats, noop_plugin, prefill

# Issue 53: emqd within a tenth of the server's ceiling where it is fastest.
TARGETS = {("native", 64): 0.9}
# emqd's claim loop: two channels (daemon/claim_loop.cpp, kChannels).
CHANNELS = 2


def scenario(s):
    native = Valkey(s.workdir / "ceiling-native", module=s.lib("emq.so"))
    try:
        for executor, server in (("scripted", s.valkey), ("native", native)):
            for c in (16, 64):
                s.on_server(server, lambda e=executor, c=c: rows(s, e, c))()
    finally:
        native.stop()


def rows(s, executor, c):
    name = f"ceiling_{executor}_c{c}"
    noop = noop_plugin(s)
    server_us = {"emqd": [], "ceiling": []}
    per_claim = {"emqd": [], "ceiling": []}
    # The ceiling claims as many jobs at a time as emqd's first run did on
    # average: with prefetch c a claim may take up to 2c, and emqd's took
    # 17 to 18 at c=16 and 66 to 70 at c=64, so a ceiling claiming c at a
    # time was one emqd could beat. Its first run comes before any of the
    # ceiling's (the pilots, and best_pair, run ours first).
    batch = {}

    def ours(jobs):
        s.valkey.reset()
        prefill(s, "noop", jobs)
        s.valkey.r.call("CONFIG", "RESETSTAT")
        cpu = []
        # The rate after the first completion: the ceiling's clock starts
        # connected, so emqd's start-up is left out too.
        rate = emqd_rate(s, f"{name}-emqd", "noop", jobs, c, noop, prefetch=c, executor=executor, cpu=cpu,
                         steady=True)
        server_us["emqd"].append(cpu[-1]["server"])
        per_claim["emqd"].append(jobs / claims(s, executor, jobs))
        batch.setdefault("jobs", max(1, round(per_claim["emqd"][-1])))
        return rate

    def ceiling(jobs):
        s.valkey.reset()
        prefill(s, "noop", jobs)
        before = process_cpu(s.valkey.proc.pid)[0]
        out = run_json([str(s.bin("emq_bench_raw_loop")), "--url", s.valkey.url, "--queue", "noop", "--jobs",
                        str(jobs), "--batch", str(batch["jobs"]), "--channels", str(CHANNELS), "--events",
                        str(DEFAULT_EVENTS), "--reads", "--executor", executor])
        server_us["ceiling"].append((process_cpu(s.valkey.proc.pid)[0] - before) * 1e6 / jobs)
        per_claim["ceiling"].append(jobs / out["claims"])
        return out["rate"]

    jobs = jobs_for_min_sample(s, name, s.size("noop_jobs"), ours, ceiling)
    for v in (*server_us.values(), *per_claim.values()):
        v.clear()  # the pilots'
    mine, top = best_pair(s, name, lambda: ours(jobs), lambda: ceiling(jobs))
    log(f"{name}: jobs per claim, emqd {per_claim['emqd']}, ceiling {per_claim['ceiling']} (batch {batch['jobs']}); "
        f"server µs per job, emqd {server_us['emqd']}, ceiling {server_us['ceiling']}")
    s.report.raw[f"{name}_batch"] = batch["jobs"]
    s.report.raw[f"{name}_server_us"] = server_us
    s.report.raw[f"{name}_jobs_per_claim"] = per_claim
    want = TARGETS.get((executor, c))
    s.report.row(f"no-op e2e, c={c}, prefetch {c}, {executor}, events on (default)", mine, "jobs/s",
                 "the server's ceiling: emqd's calls, no daemon", top, target=f">= {want}" if want else None,
                 met=mine / top >= want if want else None)
    # Each side's least: /proc counts in 10 ms ticks, and a sample
    # preempted by other work only takes longer.
    s.report.row(f"no-op e2e, c={c}, {executor}: server CPU per job", min(server_us["emqd"]), "µs/job",
                 "the ceiling's", min(server_us["ceiling"]), ratio_kind="lower")


def claims(s, executor, jobs):
    """The claims emqd's run sent (INFO commandstats since RESETSTAT): on
    the scripted side EVALSHA less the jobs' completes."""
    stats = commandstats(s.valkey)
    if executor == "native":
        return stats.get("emq.claim", (0, 0))[0] or 1
    return max(1, stats.get("evalsha", (0, 0))[0] - jobs)

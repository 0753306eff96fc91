"""Flows of a parent and ten children: emqd's against BullMQ's FlowProducer
running the same trees, and against the same jobs enqueued plain."""
import time

from emqbench import BenchError, log, wait_for
from emqbench.measure import best_pair, jobs_for_min_sample, process_cpu, run_json
from emqbench.servers import Valkey
from emqbench.workload import commandstats, noop_plugin, prefill

# Issue 53: emqd's flows against the flows users would pick instead.
BULLMQ_TARGET = 5.0
KIDS = 10


def scenario(s):
    """Flows of a parent and 10 children (children in one queue, parents in
    another) drained by emqd (enqueue time not counted: emqd starts on a
    filled server), on each executor: beside BullMQ's FlowProducer and
    Workers running the same trees with a no-op processor on the same
    server (the row held to a target), and beside the same jobs, the same
    ids, in the same queues, enqueued plain, with the same emqd
    configuration (what flows cost per job, printed). Then with the minimal
    exec handler: what that cost is beside a process."""
    module = s.lib("emq.so")
    native = Valkey(s.workdir / "flows-native", module=module) if module.exists() else None
    try:
        bull = bullmq_rows(s) if s.peer is not None else None
        flows_rows(s, native, bull)
    finally:
        if native is not None:
            native.stop()


def bullmq_rows(s):
    """BullMQ's flows on the run's server: (best rate, least server CPU µs
    per job), each sample at least MIN_SAMPLE_S long."""
    server_us = []

    def sample(flows):
        s.valkey.reset()
        s.peer.node(s.valkey, "flows.js", "--mode", "enqueue", "--flows", flows, "--children", KIDS)
        before = process_cpu(s.valkey.proc.pid)[0]
        out = s.peer.node(s.valkey, "flows.js", "--mode", "drain", "--flows", flows, "--children", KIDS,
                          "--concurrency", 16)
        server_us.append((process_cpu(s.valkey.proc.pid)[0] - before) * 1e6 / out["jobs"])
        log(f"flows-bullmq: {out['jobs']:,} jobs in {out['seconds']:.3f} s, {out['rate']:,.0f} jobs/s; server CPU "
            f"{server_us[-1]:.0f} µs per job")
        return out["rate"]

    flows = jobs_for_min_sample(s, "flows_bullmq", s.size("flows"), sample, per=1 + KIDS, step=1000)
    server_us.clear()  # the pilot's
    rates = [sample(flows) for _ in range(s.size("reps"))]
    s.report.raw["flows_bullmq"] = dict(flows=flows, rates=rates, server_us=server_us)
    return max(rates), min(server_us)


def flows_rows(s, native, bull):
    """The flows rows of scenario; native: a server that loads the emq
    module (None: those rows are left out), for the no-op rows once more
    with emqd on the native executor; bull: BullMQ's (rate, server µs per
    job), or None without the peer."""
    handlers = [("no-op plugin", "noop", noop_plugin(s), 16, None),
                ("minimal exec handler", "exec", {"type": "exec", "command": [str(s.bin("emq_bench_true"))]}, 8,
                 None)]
    if native is not None:
        handlers.insert(1, ("no-op plugin, native executor", "native", noop_plugin(s), 16, native))
    for label, tag, handler, c, server in handlers:
        executor = "native" if server is not None else None
        queues = [dict(name=q, concurrency=c, prefetch=c, handler=handler) for q in ("parents", "children")]
        server_us = {"flows": [], "plain": []}
        script_us = {"flows": [], "plain": []}  # commandstats: the transitions' own time per job

        def drain(name, flows, queues=queues, server_us=server_us, script_us=script_us):
            jobs = flows * (1 + KIDS)
            v = s.valkey
            v.r.call("CONFIG", "RESETSTAT")
            before = process_cpu(v.proc.pid)[0]
            with s.emqd(f"{name}-{tag}", queues, executor=executor) as d:
                t0 = d.start()

                def done():
                    d.check_alive()
                    return v.completed(["parents", "children"]) >= jobs
                wait_for(f"emqd to complete the {jobs:,} jobs of {name}", done, 300)
                seconds = time.monotonic() - t0
            server_us[name].append((process_cpu(v.proc.pid)[0] - before) * 1e6 / jobs)
            stats = commandstats(v)
            script_us[name].append(sum(usec for c, (_, usec) in stats.items()
                                       if c in ("evalsha", "eval") or c.startswith("emq.")) / jobs)
            per_job = {c: round(n / jobs, 2) for c, (n, _) in sorted(stats.items()) if n and c not in ("info", "hget")}
            left = v.r.pipeline([["ZCARD", "emq:{parents}:waiting"], ["ZCARD", "emq:{children}:outbox"]])
            counts = (v.completed(["parents"]), v.completed(["children"]))
            if counts != (flows, flows * KIDS) or any(left):
                raise BenchError(f"{name}: completed {counts} (parents, children), {left[0]} parents waiting, "
                                 f"{left[1]} children in the outbox: expected {flows}, {flows * KIDS}, 0, 0")
            log(f"{name}-{tag}: {jobs:,} jobs in {seconds:.3f} s, {jobs / seconds:,.0f} jobs/s from emqd's start; "
                f"server CPU {server_us[name][-1]:.0f} µs per job, {script_us[name][-1]:.1f} µs of it in transitions; "
                f"calls per job {per_job}")
            return jobs / seconds

        def flowed(flows, drain=drain):
            s.valkey.reset()
            out = run_json([str(s.bin("emq_bench_flow_enqueue")), "--url", s.valkey.url, "--parent-queue",
                            "parents", "--child-queue", "children", "--flows", str(flows), "--children", str(KIDS)])
            log(f"flows: {out['jobs']:,} jobs in {flows:,} flows enqueued in {out['seconds']:.3f} s (not counted)")
            return drain("flows", flows)

        def plain(flows, drain=drain):
            s.valkey.reset()
            prefill(s, "parents", flows)
            prefill(s, "children", flows * KIDS, first=flows)
            return drain("plain", flows)

        if server is not None:
            flowed = s.on_server(server, flowed)
            plain = s.on_server(server, plain)
        flows = jobs_for_min_sample(s, f"flows_{tag}", s.size("flows"), flowed, plain, per=1 + KIDS, step=1000)
        for v in (*server_us.values(), *script_us.values()):
            v.clear()  # the pilots'
        flowed_rate, plain_rate = best_pair(s, f"flows_{tag}", lambda: flowed(flows), lambda: plain(flows))
        s.report.raw[f"flows_{tag}_server_us"] = server_us
        s.report.raw[f"flows_{tag}_script_us"] = script_us
        # The count is the run's (at least 2 s a sample: the log and
        # raw.sample_counts say it); the row's name stays the same from run
        # to run, so that a check can find it.
        what = f"flows, parent + {KIDS} children, {label}, c={c} each"
        if bull is not None and tag != "exec":
            s.report.row(what, flowed_rate, "jobs/s", "BullMQ FlowProducer, the same trees, no-op, c=16 each",
                         bull[0], target=f">= {BULLMQ_TARGET:g}", met=flowed_rate / bull[0] >= BULLMQ_TARGET)
        s.report.row(what, flowed_rate, "jobs/s", "the same jobs enqueued plain", plain_rate)
        # Each side's least: /proc counts in 10 ms ticks.
        s.report.row(f"flows, {label}: server CPU per job", min(server_us["flows"]), "µs/job",
                     "the same, enqueued plain", min(server_us["plain"]), ratio_kind="lower")
        if bull is not None and tag != "exec":
            s.report.row(f"flows, {label}: server CPU per job", min(server_us["flows"]), "µs/job",
                         "BullMQ's flows, the same trees", bull[1], ratio_kind="lower")

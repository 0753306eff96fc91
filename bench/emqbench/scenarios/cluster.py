"""Routing's cost on a one-shard cluster, and three queues on three shards."""
import time

from emqbench import log, wait_for
from emqbench.measure import best_pair, emqd_rate, jobs_for_min_sample
from emqbench.servers import Valkey, form_cluster
from emqbench.workload import noop_plugin, prefill


def scenario(s):
    """Routing's cost: one queue on a one-shard cluster (every slot on one
    node, so only the router differs) against the same queue on a
    standalone server, same run. Then three queues on a three-shard
    cluster, one per shard, beside the one queue standalone."""
    noop = noop_plugin(s)
    standalone = s.valkey
    one = Valkey(s.workdir / "cluster1", cluster=True)
    three = [Valkey(s.workdir / f"cluster3-{i}", cluster=True) for i in range(3)]
    try:
        form_cluster([one])
        ranges = form_cluster(three)

        def run(jobs):
            s.valkey.reset()
            prefill(s, "noop", jobs)
            return emqd_rate(s, "noop-c16", "noop", jobs, 16, noop, prefetch=16)

        jobs = jobs_for_min_sample(s, "cluster_one_shard", s.size("cluster_jobs"), s.on_server(one, run),
                                   s.on_server(standalone, run))
        routed, plain = best_pair(s, "cluster_one_shard", lambda: s.on_server(one, run)(jobs),
                                  lambda: s.on_server(standalone, run)(jobs))
        s.report.row("no-op plugin e2e, c=16, prefetch 16, one-shard cluster", routed, "jobs/s",
                     "the same, standalone", plain, target=">= 0.9", met=routed / plain >= 0.9)

        # One queue name per shard, by the slot the server computes.
        names, owner = [], {}
        for i in range(10_000):
            q = f"shard{i}"
            slot = three[0].r.call("CLUSTER", "KEYSLOT", q)
            node = next(k for k, (a, b) in enumerate(ranges) if a <= slot <= b)
            if node not in owner.values():
                names.append(q)
                owner[q] = node
            if len(names) == 3:
                break
        spread = three_queues_rate(s, "cluster3", three, [three[owner[q]] for q in names], names, jobs, noop)
        alone = three_queues_rate(s, "standalone3", [standalone], [standalone] * 3, names, jobs, noop)
        s.report.row("no-op e2e, 3 queues x c=16 on a 3-shard cluster", spread, "jobs/s",
                     "one queue c=16 standalone", plain)
        s.report.row("no-op e2e, 3 queues x c=16 on a 3-shard cluster", spread, "jobs/s",
                     "the 3 queues on one standalone server", alone)
    finally:
        one.stop()
        for n in three:
            n.stop()


def three_queues_rate(s, name, servers, owners, names, jobs, handler):
    """One emqd running three queues (jobs each, prefilled), from its
    start until all are completed; owners[i] holds names[i]. The URL
    emq_bench_enqueue and emqd are given is servers[0]'s."""
    for n in servers:
        n.reset()

    def run():
        prefill(s, names[0], 3 * jobs, queues=names)  # spread over the three
        with s.emqd(name, [dict(name=q, concurrency=16, prefetch=16, handler=handler) for q in names]) as d:
            t0 = d.start()

            def done():
                d.check_alive()
                return sum(o.completed([q]) for o, q in zip(owners, names)) >= 3 * jobs
            wait_for(f"emqd to complete the jobs of {name}", done, 600)
            return time.monotonic() - t0

    seconds = s.on_server(servers[0], run)()
    rate = 3 * jobs / seconds
    log(f"{name}: {rate:,.0f} jobs/s over three queues")
    s.report.raw[name] = dict(jobs=3 * jobs, seconds=seconds, rate=rate)
    return rate

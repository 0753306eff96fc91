"""Fair share between groups (issue 51), on both executors in the same run:
emqd's throughput on jobs spread over 1,000 groups against the same jobs
ungrouped; claim's server time per job with 10 groups against 100,000;
and a small tenant's wait behind a 100,000-job tenant, in claims and in
ms, against the same queue without groups (the FIFO it has today)."""
from emqbench import BenchError
from emqbench.measure import best_pair, emqd_rate, run_json
from emqbench.servers import Valkey
from emqbench.workload import noop_plugin, prefill

THROUGHPUT_GROUPS = 1000
THROUGHPUT_TARGET = 0.85
COST_GROUPS = (10, 100_000)
COST_TARGET = 1.2


def scenario(s):
    module = s.lib("emq.so")
    if not module.exists():
        raise BenchError(f"{module} is missing: build the emq_module target")
    native = Valkey(s.workdir / "groups-native", module=module)
    try:
        for executor, server in (("scripted", s.valkey), ("native", native)):
            s.on_server(server, lambda e=executor: rows(s, e))()
    finally:
        native.stop()


def rows(s, executor):
    jobs = s.size("groups_jobs")

    def run(groups):
        s.valkey.reset()
        prefill(s, "fair", jobs, groups=groups)
        return emqd_rate(s, f"groups-{executor}-{groups}", "fair", jobs, 16, noop_plugin(s), executor=executor)
    grouped, plain = best_pair(s, f"groups_rate_{executor}", lambda: run(THROUGHPUT_GROUPS), lambda: run(0))
    s.report.row(f"no-op plugin, c=16, jobs in {THROUGHPUT_GROUPS:,} groups, {executor}", grouped, "jobs/s",
                 "the same jobs ungrouped", plain, target=f">= {THROUGHPUT_TARGET}",
                 met=grouped / plain >= THROUGHPUT_TARGET)

    few, many = COST_GROUPS
    # Least of each: a command preempted by other work only ever takes longer.
    many_us, few_us = best_pair(s, f"groups_claim_us_{executor}", lambda: claim_us(s, many, 2 * many),
                                lambda: claim_us(s, few, 2 * many), best=min)
    s.report.row(f"claim server time per job, {many:,} groups, {executor}", many_us, "µs",
                 f"the same, {few} groups", few_us, ratio_kind="lower", target=f"<= {COST_TARGET}",
                 met=many_us / few_us <= COST_TARGET)

    grouped_wait, fifo_wait = small_tenant_wait(s, True), small_tenant_wait(s, False)
    s.report.raw[f"groups_wait_{executor}"] = dict(grouped=grouped_wait, fifo=fifo_wait)
    for p in ("p50", "p99"):
        s.report.row(f"a small tenant's wait behind a 100,000-job tenant, {p}, claims, {executor}",
                     grouped_wait[f"claims_{p}"], "claims", "the same queue without groups (FIFO)",
                     fifo_wait[f"claims_{p}"], ratio_kind="lower")
        s.report.row(f"a small tenant's wait behind a 100,000-job tenant, {p}, ms, {executor}",
                     grouped_wait[f"ms_{p}"], "ms", "the same queue without groups (FIFO)",
                     fifo_wait[f"ms_{p}"], ratio_kind="lower")


def claim_us(s, groups, jobs):
    """emq_bench_groups --cost on a fresh server: the server's µs per job
    claimed, `jobs` jobs spread over `groups` groups (both sides the same
    jobs, so the same keyspace's size)."""
    s.valkey.reset()
    args = [str(s.bin("emq_bench_groups")), "--cost", "--url", s.valkey.url, "--groups", str(groups),
            "--jobs", str(jobs), "--measure", str(s.size("groups_cost_jobs"))]
    return run_json(args)["usec_per_job"]


def small_tenant_wait(s, grouped):
    """emq_bench_groups --wait on a fresh server: one claimer, a backlog of
    100,000 in one tenant and a small tenant's job every 500 claims."""
    s.valkey.reset()
    args = [str(s.bin("emq_bench_groups")), "--wait", "--url", s.valkey.url, "--backlog", "100000",
            "--tenants", str(s.size("groups_tenants")), "--every", "500"]
    return run_json(args + ([] if grouped else ["--no-groups"]))

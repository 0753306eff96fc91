"""Unique jobs (issue 50): the optioned enqueue with a key of its own per
job against the plain enqueue, and the server's time per complete with and
without a key, on the scripts and on the emq module, in the same run."""
from emqbench import BenchError
from emqbench.measure import best_pair, run_json
from emqbench.servers import Valkey


def enqueue_rate(s, server, unique):
    """emq_bench_enqueue at depth 64 on a fresh server: jobs/s."""
    server.reset()
    args = [str(s.bin("emq_bench_enqueue")), "--url", server.url, "--queue", "unique", "--depth", "64",
            "--jobs", str(s.size("enqueue_jobs"))]
    return run_json(args + (["--unique"] if unique else []))["rate"]


def complete_us(s, server, unique):
    """emq_bench_settle on a fresh server: the server's µs per complete."""
    server.reset()
    args = [str(s.bin("emq_bench_settle")), "--url", server.url, "--jobs", str(s.size("settle_jobs"))]
    return run_json(args + (["--unique"] if unique else []))["usec_per_complete"]


def scenario(s):
    module = s.lib("emq.so")
    if not module.exists():
        raise BenchError(f"{module} is missing: build the emq_module target")
    native = Valkey(s.workdir / "unique-native", module=module)
    try:
        for name, server in (("scripted", s.valkey), ("native", native)):
            keyed, plain = best_pair(s, f"unique_enqueue_{name}", lambda v=server: enqueue_rate(s, v, True),
                                     lambda v=server: enqueue_rate(s, v, False))
            s.report.row(f"unique enqueue ({name}, depth 64, a key per job)", keyed, "jobs/s",
                         f"plain enqueue ({name})", plain, target=">= 0.8", met=keyed / plain >= 0.8)
            # Least of each: a command preempted by other work only ever takes longer.
            keyed_us, plain_us = best_pair(s, f"unique_complete_us_{name}",
                                           lambda v=server: complete_us(s, v, True),
                                           lambda v=server: complete_us(s, v, False), best=min)
            s.report.row(f"server time per complete, a job with a key ({name})", keyed_us, "µs",
                         f"a job without ({name})", plain_us, ratio_kind="lower", target="<= +1 µs",
                         met=keyed_us - plain_us <= 1.0)
    finally:
        native.stop()

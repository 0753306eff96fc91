"""The no-op run with every connection of emqd over TLS, beside the same run
over plaintext."""
from emqbench.measure import best_pair, emqd_rate, jobs_for_min_sample
from emqbench.workload import noop_plugin, prefill


def scenario(s):
    """The no-op run at c=16 with every connection of emqd over TLS,
    beside the same run over plaintext, on the same server."""
    noop = noop_plugin(s)

    def run(tls, jobs):
        s.valkey.reset()
        prefill(s, "noop", jobs)
        return emqd_rate(s, f"noop-c16-{'tls' if tls else 'plain'}", "noop", jobs, 16, noop, prefetch=16, tls=tls)

    jobs = jobs_for_min_sample(s, "noop_c16_tls", s.size("tls_jobs"), lambda n: run(True, n), lambda n: run(False, n))
    over_tls, plain = best_pair(s, "noop_c16_tls", lambda: run(True, jobs), lambda: run(False, jobs))
    s.report.row("no-op plugin e2e, c=16, prefetch 16, over TLS", over_tls, "jobs/s", "the same over plaintext",
                 plain, target=">= 0.85", met=over_tls / plain >= 0.85)

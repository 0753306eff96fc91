"""emq search against the plain reads of the same rows."""
from emqbench import BenchError
from emqbench.measure import run_json
from emqbench.workload import prefill


def scenario(s):
    """emq search for one payload word among 50,000 pending rows (scan the
    whole set) beside the plain ZRANGE + HMGET reads of the same rows with
    nothing matched, and the server time of one bulk batch (100 retries)."""
    jobs = s.size("search_rows")
    s.valkey.reset()
    prefill(s, "search", jobs)
    got = run_json([str(s.bin("emq_bench_search")), "--url", s.valkey.url, "--queue", "search",
                    "--rounds", str(s.size("reps"))])
    if got["found"] != 1 or got["scanned"] != jobs + 1:
        raise BenchError(f"search found {got['found']} of 1 after scanning {got['scanned']} of {jobs + 1}")
    s.report.raw["search"] = got
    s.report.row(f"search a payload word, {jobs + 1:,} rows", got["search_s"] * 1000, "ms",
                 "ZRANGE + HMGET of the same rows", got["reads_s"] * 1000, "lower", "<= 1.5",
                 got["search_s"] <= 1.5 * got["reads_s"])
    s.report.row(f"bulk retry, one batch of {got['batch_jobs']}: server time", got["batch_usec"] / 1000, "ms",
                 "(no target)", None, "none")

"""A rate-limited queue against its rate, and claim's server time with limits
that do not bind against without, on each executor."""
import time

from emqbench import ROOT, BenchError, log, wait_for
from emqbench.measure import percentile
from emqbench.servers import Valkey
from emqbench.workload import commandstats, noop_plugin, prefill


# The rate row's limit, as a queue's `limits.rate` says it: 1,000 claims a
# second. Its claims are held to this, from below (the loop waits for each
# token and no longer) and from above (the bucket holds).
LIMITED_RATE = (1000, "1s")
LIMITED_RATE_PER_SECOND = 1000.0
RATE_SHARE_TARGET = (0.98, 1.02)
CLAIMS_PER_JOB_TARGET = 1.2
# Limits that never bind, as meta holds them: what claim pays to check
# them and to write the bucket on every claim, held to the claim without.
SLACK_LIMITS = ["max_active", "1000000", "rate_max", "1000000", "rate_window_ms", "1"]
LIMITS_COST_TARGET = 1.15


def scenario(s):
    """A rate-limited queue against its rate; claim's server time with
    limits that do not bind against without. Each on both executors: the
    run's server (scripted) and a second one that loads the emq module."""
    module = s.lib("emq.so")
    if not module.exists():
        raise BenchError(f"{module} is missing: build the emq_module target")
    native = Valkey(s.workdir / "limits-native", module=module)
    servers = (("scripted", s.valkey), ("native", native))
    try:
        for executor, server in servers:
            s.on_server(server, lambda e=executor: rate_rows(s, e))()
        for executor, server in servers:
            limited, free = s.on_server(server, lambda e=executor: claim_server_us(s, e))()
            s.report.row(f"claim server time per job, limits set (not binding), {executor}", limited, "µs",
                         "the same, no limits", free, ratio_kind="lower", target=f"<= {LIMITS_COST_TARGET}",
                         met=limited / free <= LIMITS_COST_TARGET)
    finally:
        native.stop()


def rate_rows(s, executor):
    """emqd, c=16, on a prefilled queue limited to LIMITED_RATE: the claims
    a second once the bucket's first burst is spent, and what emqd sent
    the server for each job claimed meanwhile (INFO commandstats and
    CLIENT LIST before and after)."""
    jobs = s.size("limits_rate_jobs")
    most, per = LIMITED_RATE
    v = s.valkey
    v.reset()
    prefill(s, "rated", jobs)
    stats = "emq:{rated}:stats"
    queue = dict(name="rated", concurrency=16, handler=noop_plugin(s), limits=dict(rate=LIMITED_RATE))
    me = v.r.call("CLIENT", "ID")

    def snapshot():
        t = time.monotonic()
        claimed, completed, clients = v.r.pipeline([["HGET", stats, "claimed"], ["HGET", stats, "completed"],
                                                    ["CLIENT", "LIST"]])
        t = (t + time.monotonic()) / 2
        # Commands each of emqd's connections sent (tot-cmds), ours left
        # out. The server counts a script's own calls as its caller's.
        sent = {}
        for line in clients.splitlines():
            f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            if int(f["id"]) != me:
                sent[f["id"]] = int(f["tot-cmds"])
        return t, int(claimed or 0), int(completed or 0), commandstats(v), sent

    with s.emqd(f"rated-{executor}", [queue], executor=executor) as d:
        d.start()

        def claimed(n):
            def check():
                d.check_alive()
                return v.hget_int(stats, "claimed") >= n
            return check
        # The bucket starts full: its burst goes first, then the rate alone.
        # The window ends before the queue runs dry.
        wait_for("the rate-limited queue's first burst", claimed(most + 200), 60)
        a = snapshot()
        wait_for(f"{jobs - 200} jobs of the rate-limited queue claimed", claimed(jobs - 200), 120)
        b = snapshot()
    seconds, jobs_claimed, jobs_completed = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    calls = {k: (b[3][k][0] - a[3].get(k, (0, 0))[0]) for k in b[3]}
    if executor == "native":
        claims = calls.get("emq.claim", 0)
    else:  # both claim and complete are EVALSHA here; a no-op job is completed once
        claims = calls.get("evalsha", 0) - jobs_completed
    commands = sum(n - a[4].get(c, 0) for c, n in b[4].items())
    rate = jobs_claimed / seconds
    per_job = {k: round(n / jobs_claimed, 2) for k, n in sorted(calls.items()) if n and k not in ("info", "hget")}
    log(f"rated-{executor}: {jobs_claimed} claimed in {seconds:.3f} s, {rate:,.1f} a second; per job claimed: "
        f"claim calls {claims / jobs_claimed:.3f}, emqd's commands {commands / jobs_claimed:.2f} (a script's "
        f"own calls included); commandstats per job (the same; HGET and INFO, ours too, left out) {per_job}")
    s.report.raw[f"limits_rate_{executor}"] = dict(seconds=seconds, claimed=jobs_claimed, completed=jobs_completed,
                                                   claims=claims, commands=commands, commandstats=calls)
    lo, hi = RATE_SHARE_TARGET
    limit = LIMITED_RATE_PER_SECOND
    s.report.row(f"rate-limited queue ({most:,}/{per}), c=16, {executor}", rate, "jobs/s", "its rate", limit,
                 target=f">= {lo}, <= {hi}", met=lo <= rate / limit <= hi)
    s.report.row(f"rate-limited queue, claim calls per job claimed, {executor}", claims / jobs_claimed, "calls",
                 "one claim per job", 1.0, ratio_kind="lower", target=f"<= {CLAIMS_PER_JOB_TARGET}",
                 met=claims / jobs_claimed <= CLAIMS_PER_JOB_TARGET)
    # What one round trip per job sends: the claim, its two reads (meta's
    # limits and flows flag in one HMGET, pending's size) and the job's
    # complete. The
    # server counts a script's own calls as its caller's (tot-cmds), so the
    # scripted side's count is not the wire's: native only.
    if executor == "native":
        s.report.row(f"rate-limited queue, server commands per job claimed, {executor}", commands / jobs_claimed,
                     "calls", "a claim's round trip + a complete", 4.0, ratio_kind="lower")


def claim_server_us(s, executor):
    """Server time of claim per job claimed, with SLACK_LIMITS in the
    queue's meta and without: two queues prefilled alike and claimed dry
    in turns, 4 calls of 16 jobs per round trip and nothing else, INFO
    commandstats read after each round trip. Returns the median per job
    of each queue's round trips: a round trip preempted by other work on
    a shared machine only takes longer, and in turns both queues meet the
    same load and the same growing active sets."""
    jobs = s.size("limits_claim_jobs")
    v = s.valkey
    v.reset()
    names = ("capped", "nocaps")  # one length: the same bytes on every call
    prefill(s, None, 2 * jobs, queues=names)
    v.r.call("HSET", "emq:{capped}:meta", *SLACK_LIMITS)
    if executor == "native":
        head, stat = ["EMQ.CLAIM", 6], "emq.claim"
    else:
        head, stat = ["EVALSHA", v.r.call("SCRIPT", "LOAD", (ROOT / "lua" / "claim.lua").read_bytes()), 6], "evalsha"
    # Short round trips (about a millisecond scripted): fewer of them are
    # cut by a neighbour's time slice, and there are many to take the median of.
    per_trip, count = 4, 16
    calls = {q: head + [f"emq:{{{q}}}:{k}" for k in ("pending", "active", "delayed", "meta", "stats", "job:")]
             + [30000, count, 100] for q in names}
    samples = {q: [] for q in names}
    v.r.call("CONFIG", "RESETSTAT")
    usec = 0
    for turn in range(jobs // (per_trip * count)):
        for q in (names if turn % 2 == 0 else names[::-1]):
            replies = v.r.pipeline([calls[q]] * per_trip + [["INFO", "commandstats"]])
            got = sum(len(r) // 4 for r in replies[:-1])
            if got != per_trip * count:
                raise BenchError(f"claimed {got} jobs of {q} in a round trip, not {per_trip * count}")
            now = next(int(kv.split("=", 1)[1]) for line in replies[-1].splitlines()
                       if line.startswith(f"cmdstat_{stat}:") for kv in line.split(":", 1)[1].split(",")
                       if kv.startswith("usec="))
            samples[q].append((now - usec) / got)
            usec = now
    capped, free = (percentile(sorted(samples[q]), 50) for q in names)
    s.report.raw[f"claim_us_{executor}"] = dict(limited=samples[names[0]], no_limits=samples[names[1]])
    log(f"claim_us_{executor}: µs per job claimed, median of {len(samples[names[0]])} round trips each: limits set "
        f"{capped:.2f} (least {min(samples[names[0]]):.2f}), none {free:.2f} (least {min(samples[names[1]]):.2f})")
    return capped, free

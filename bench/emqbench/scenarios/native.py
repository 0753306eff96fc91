"""The emq module against the scripts: the no-op rows and the server time per
job, each executor on a server of its own."""
from emqbench import BenchError, log
from emqbench.measure import CpuShare, best_pair, emqd_rate, jobs_for_min_sample
from emqbench.servers import Valkey
from emqbench.workload import commandstats, noop_plugin, prefill


def scenario(s):
    """The emq module against the scripts, in the same run: each on a
    server of its own (the same settings; one loads the module, so auto
    is native there for emqd and the prefill alike)."""
    module = s.lib("emq.so")
    if not module.exists():
        raise BenchError(f"{module} is missing: build the emq_module target")
    scripted = s.valkey
    native = Valkey(s.workdir / "native", module=module)
    noop = noop_plugin(s)
    try:
        best = 0.0
        for c in (1, 16, 64):
            def e2e(executor, jobs, c=c):
                s.valkey.reset()
                prefill(s, "noop", jobs)
                with CpuShare(s.valkey.proc.pid) as cpu:
                    rate = emqd_rate(s, f"noop-{executor}-c{c}", "noop", jobs, c, noop, prefetch=c,
                                     executor=executor)
                log(f"noop-{executor}-c{c}: {cpu}")
                s.report.raw.setdefault("native_cpu", []).append(
                    dict(run=f"noop-{executor}-c{c}", rate=rate, server=cpu.server, emqd=cpu.emqd,
                         machine=cpu.machine, load=cpu.load))
                return rate

            jobs = jobs_for_min_sample(s, f"native_noop_c{c}", s.size("noop_c1_jobs" if c == 1 else "noop_jobs"),
                                       s.on_server(native, lambda n, e=e2e: e("native", n)),
                                       s.on_server(scripted, lambda n, e=e2e: e("scripted", n)))
            fast, slow = best_pair(s, f"native_noop_c{c}", s.on_server(native, lambda e=e2e: e("native", jobs)),
                                   s.on_server(scripted, lambda e=e2e: e("scripted", jobs)))
            best = max(best, fast)
            want = {16: 1.5, 64: 1.8}.get(c)
            s.report.row(f"no-op plugin e2e native, c={c}, prefetch {c}", fast, "jobs/s",
                         f"the same, scripted", slow, target=f">= {want}" if want else None,
                         met=(fast / slow >= want) if want else None)
        bull = [v for k, v in s.report.raw.items() if k.startswith("noop_c") and k.endswith("_bullmq")]
        if bull:
            s.report.row("native no-op e2e, best of c", best, "jobs/s", "BullMQ no-op, best of c", max(bull),
                         target=">= 5", met=best / max(bull) >= 5)
        # Interleaved like the rows above, each side's least: a command
        # preempted by other work only ever takes longer.
        native_us, scripted_us = best_pair(
            s, "server_us_per_job", s.on_server(native, lambda: server_us_per_job(s, "native")),
            s.on_server(scripted, lambda: server_us_per_job(s, "scripted")), best=min)
        s.report.raw["server_us_per_job"] = dict(native=native_us, scripted=scripted_us)
        s.report.row("server time per job, native (enqueue+claim+complete)", native_us, "µs", "the same, scripted",
                     scripted_us, ratio_kind="lower", target="<= 0.5", met=native_us / scripted_us <= 0.5)
    finally:
        native.stop()


def server_us_per_job(s, executor):
    """Server time per job (INFO commandstats usec of the transitions'
    commands: EVALSHA, or EMQ.*) for enqueue + claim + complete of a
    no-op run at c=16, prefetch 16. The scripted reaper's few EVALSHAs
    count too."""
    jobs = s.size("noop_jobs")
    s.valkey.reset()
    s.valkey.r.call("CONFIG", "RESETSTAT")
    prefill(s, "cost", jobs)
    emqd_rate(s, f"cost-{executor}", "cost", jobs, 16, noop_plugin(s), prefetch=16, executor=executor)
    usec = 0
    calls = []
    for line in s.valkey.r.call("INFO", "commandstats").splitlines():
        name, _, rest = line.strip().partition(":")
        if name in ("cmdstat_evalsha", "cmdstat_emq.enqueue", "cmdstat_emq.claim", "cmdstat_emq.complete"):
            stat = dict(kv.split("=", 1) for kv in rest.split(","))
            usec += int(stat["usec"])
            calls.append(f"{name[8:]} {int(stat['calls']) / jobs:.2f} calls/job, {stat['usec_per_call']} µs/call")
    log(f"cost-{executor}: {usec / jobs:.1f} µs/job; " + "; ".join(calls))
    return usec / jobs

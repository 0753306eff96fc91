"""Measuring: the benchmark programs' JSON line, CPU from /proc, emqd's rate
from its start, and samples interleaved with their ceiling's."""
import json
import math
import os
import subprocess
import time
from pathlib import Path

from emqbench import BenchError, log, wait_for


def json_result(argv, returncode, out, err):
    """The last JSON line a benchmark program printed, once it exited 0."""
    if returncode != 0:
        raise BenchError(f"{Path(argv[0]).name} failed (exit {returncode}): {err.strip()[-2000:]}")
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if not lines:
        raise BenchError(f"{Path(argv[0]).name} printed no result: {out[-500:]} {err[-500:]}")
    return json.loads(lines[-1])


def run_json(argv, env=None, timeout=600):
    """Runs a benchmark program that prints one JSON line; returns it."""
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=timeout)
    return json_result(argv, p.returncode, p.stdout, p.stderr)


def percentile(sorted_values, p):
    """Nearest rank: the smallest sample with at least p % of them at or below it."""
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values), max(1, math.ceil(p / 100.0 * len(sorted_values))))
    return sorted_values[k - 1]


def rss_kib(pid, field="VmRSS"):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise BenchError(f"no {field} for pid {pid}")


def proc_stat(pid):
    """The fields of /proc/PID/stat after the command name: [0] is the
    state, [11:15] utime, stime, cutime, cstime in clock ticks."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def process_cpu(pid):
    """(own, reaped children) CPU seconds of a live or not yet waited-for
    process: utime + stime, cutime + cstime."""
    fields = proc_stat(pid)
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


def machine_ticks():
    """(busy, all) clock ticks of every core so far: busy is all but idle
    and iowait."""
    cpu = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(cpu) - cpu[3] - cpu[4], sum(cpu)


def busy_since(start):
    """The machine's busy share of its cores since machine_ticks() gave start."""
    busy, total = machine_ticks()
    return (busy - start[0]) / max(1, total - start[1])


def run_json_cpu(argv, timeout=600):
    """run_json, and the program's own CPU and its children's, read while
    it is a zombie (exited, not yet waited for)."""
    ticks = machine_ticks()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.stdout.read(), p.stderr.read()  # EOF on both: it has exited, or closed them
        wait_for(f"{Path(argv[0]).name} to exit", lambda: proc_stat(p.pid)[0] == "Z", timeout, every=0.001)
        own, children = process_cpu(p.pid)
        busy = busy_since(ticks)
    finally:
        p.wait(timeout=timeout)
    return json_result(argv, p.returncode, out, err), own, children, busy


class CpuShare:
    """CPU used over a with-block: the server's (from /proc), the children
    reaped in it (emqd, once stopped), and the whole machine's, each as a
    share of one core over the block's wall time. Tells a server-bound
    run (server near 100 %) from a client-bound one and from a machine
    busy with other work (machine near its core count)."""

    def __init__(self, server_pid):
        self.pid = server_pid
        self.tick = os.sysconf("SC_CLK_TCK")

    def _server(self):
        return process_cpu(self.pid)[0]

    def _machine(self):
        return machine_ticks()[0] / self.tick

    def __enter__(self):
        t = os.times()
        self.start = (time.monotonic(), self._server(), t.children_user + t.children_system, self._machine())
        return self

    def __exit__(self, *exc):
        t = os.times()
        end = (time.monotonic(), self._server(), t.children_user + t.children_system, self._machine())
        wall = end[0] - self.start[0]
        self.server, self.emqd, self.machine = ((end[i] - self.start[i]) / wall for i in (1, 2, 3))
        self.load = os.getloadavg()[0]
        return False

    def __str__(self):
        return (f"server {self.server:.0%} of a core, emqd {self.emqd:.0%}, machine {self.machine:.0%} "
                f"of {os.cpu_count()} cores, load {self.load:.1f}")


def best_pair(session, name, ours, ceiling, reps="reps", best=max):
    """Runs ours() and ceiling() `reps` times, interleaved, alternating
    which goes first; returns the best of each (best=min where less is
    better) and keeps every sample."""
    a, b = [], []
    for i in range(session.size(reps)):
        if i % 2 == 0:
            a.append(ours())
            b.append(ceiling())
        else:
            b.append(ceiling())
            a.append(ours())
    def shown(xs):
        return [round(x, 1) if x < 100 else round(x) for x in xs]  # µs to a tenth, rates whole
    log(f"{name}: ours {shown(a)}, ceiling {shown(b)}")
    session.report.raw[name] = dict(ours=a, ceiling=b)
    return best(a), best(b)


# Every sample a row keeps runs at least this long (the full run): the
# shorter ones moved their ratio by a tenth between runs.
MIN_SAMPLE_S = 2.0


def jobs_for_min_sample(session, name, count, *samples, per=1, step=10_000):
    """The count (of jobs; of flows of `per` jobs each) that makes each of
    samples (each a function of a count, returning jobs a second) run
    MIN_SAMPLE_S or longer: one pilot of each at `count`, then the fastest
    pilot's rate times 1.25 * MIN_SAMPLE_S, rounded up to `step`, and never
    below `count`. The pilots are warm-ups, not kept. --quick keeps
    `count`."""
    if session.quick:
        return count
    fastest = max(sample(count) for sample in samples)
    n = max(count, math.ceil(fastest * 1.25 * MIN_SAMPLE_S / per / step) * step)
    log(f"{name}: {n:,} a sample (pilots at {count:,}: the fastest {fastest:,.0f} jobs/s)")
    session.report.raw.setdefault("sample_counts", {})[name] = n
    return n


def emqd_rate(session, name, queue, jobs, concurrency, handler, timeout=300, prefetch=0, tls=False, executor=None,
              cpu=None, events=None, steady=False, tracing=None):
    """Prefilled queue -> emqd from its start until stats completed == jobs.
    cpu: a list that gets the run's CPU per job in µs (emqd's own
    threads, the handler processes it reaped, the server). steady: the
    rate after the first job's completion (start-up left out) instead of
    from the start."""
    valkey = session.valkey
    with session.emqd(name, [dict(name=queue, concurrency=concurrency, prefetch=prefetch, handler=handler,
                                  events=events)],
                      tls=tls, executor=executor, tracing=tracing) as d:
        if cpu is not None:
            server_before, ticks = process_cpu(valkey.proc.pid)[0], machine_ticks()
        t0 = d.start()

        def at_least(n):
            def check():
                d.check_alive()
                return valkey.completed([queue]) >= n
            return check
        # The first completion splits start-up (exec, config, connect,
        # scripts, threads, handler start) from the steady rate.
        wait_for(f"emqd to complete a job of {queue}", at_least(1), timeout, every=0.001)
        first = time.monotonic() - t0
        wait_for(f"emqd to complete {jobs} jobs of {queue}", at_least(jobs), timeout)
        seconds = time.monotonic() - t0
        if cpu is not None:
            own, children = process_cpu(d.proc.pid)
            server = process_cpu(valkey.proc.pid)[0] - server_before
            cpu.append(dict(rate=jobs / seconds, own=own * 1e6 / jobs, children=children * 1e6 / jobs,
                            server=server * 1e6 / jobs, busy=busy_since(ticks)))
    steady_rate = (jobs - 1) / (seconds - first) if seconds > first else float("nan")
    session.report.raw.setdefault("emqd_runs", []).append(dict(run=name, jobs=jobs, seconds=seconds, first_s=first,
                                                                rate=jobs / seconds, steady_rate=steady_rate))
    log(f"{name}: {jobs / seconds:,.0f} jobs/s from start; first job done after {first * 1000:.0f} ms; "
        f"{steady_rate:,.0f} jobs/s after it")
    return steady_rate if steady else jobs / seconds

"""The enqueue rows: libechomq's pipelined enqueue against valkey-benchmark
running the same script at the same depth, and against BullMQ's addBulk."""
import hashlib
import subprocess

from emqbench import ROOT, BenchError
from emqbench.measure import best_pair, run_json


def scenario(s):
    source = (ROOT / "lua" / "enqueue.lua").read_bytes()
    best_d64 = None
    for depth in (1, 16, 64):
        jobs = s.size("enqueue_d1_jobs" if depth == 1 else "enqueue_jobs")

        def ours():
            s.valkey.reset()
            return run_json([str(s.bin("emq_bench_enqueue")), "--url", s.valkey.url, "--queue", "b",
                             "--jobs", str(jobs), "--depth", str(depth)])["rate"]

        def ceiling():
            s.valkey.reset()
            # The exact bytes of the file, as `valkey-cli -x SCRIPT LOAD < lua/enqueue.lua`
            # sends them: the SHA is the one libechomq runs.
            sha = s.valkey.r.call("SCRIPT", "LOAD", source)
            if sha != hashlib.sha1(source).hexdigest():
                raise BenchError(f"SCRIPT LOAD answered {sha}, not the SHA1 of lua/enqueue.lua")
            return valkey_benchmark(s, jobs, depth, sha)

        mine, vb = best_pair(s, f"enqueue_d{depth}", ours, ceiling)
        s.report.row(f"enqueue, depth {depth}", mine, "jobs/s", f"valkey-benchmark EVALSHA -c 1 -P {depth}", vb,
                     target=">= 0.9", met=mine / vb >= 0.9)
        if depth == 64:
            best_d64 = mine
    if s.peer is not None:
        s.valkey.reset()
        bull = s.peer.node(s.valkey, "enqueue.js", "--queue", "bulk", "--jobs", s.size("bull_enqueue_jobs"),
                           "--chunk", 64)["rate"]
        s.report.raw["enqueue_bullmq"] = bull
        s.report.row("enqueue, depth 64", best_d64, "jobs/s", "BullMQ addBulk, 64 jobs a call", bull)


def valkey_benchmark(s, jobs, depth, sha):
    argv = ["valkey-benchmark", "-h", "127.0.0.1", "-p", str(s.valkey.port), "-c", "1", "-n", str(jobs),
            "-P", str(depth), "-r", "100000000", "--csv",
            "EVALSHA", sha, "2", "emq:{b}:job:JOB___rand_int__", "emq:{b}:pending", "JOB___rand_int__", "x"]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    if p.returncode != 0:
        raise BenchError(f"valkey-benchmark failed: {p.stderr[-1000:]}")
    lines = [line for line in p.stdout.splitlines() if line.startswith('"EVALSHA')]
    if not lines:
        raise BenchError(f"valkey-benchmark printed no EVALSHA line: {p.stdout[-1000:]}")
    return float(lines[-1].split(",")[1].strip('"'))

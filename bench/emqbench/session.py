"""What one run holds: its counts, the programs built for it, the server
its rows run against, the peer, the report, and the processes to end if
it is interrupted."""
import contextlib
import shutil
import subprocess
import tempfile
from pathlib import Path

from emqbench import ROOT, BenchError, log
from emqbench.peer import Peer
from emqbench.report import Report
from emqbench.servers import Emqd

# Counts: (full, quick).
SIZES = {
    "enqueue_jobs": (100_000, 20_000),
    "enqueue_d1_jobs": (20_000, 5_000),  # depth 1 is round-trip bound: fewer jobs, the same rate
    "settle_jobs": (50_000, 10_000),  # completes timed by the server (unique)
    "bull_enqueue_jobs": (30_000, 5_000),
    "noop_jobs": (100_000, 20_000),
    "noop_c1_jobs": (30_000, 5_000),  # c=1 is round-trip bound too
    "cluster_jobs": (50_000, 10_000),  # per queue
    "tls_jobs": (50_000, 10_000),
    "bull_noop_jobs": (30_000, 3_000),
    "pool_jobs": (20_000, 4_000),
    "bull_pool_jobs": (10_000, 2_000),
    "exec_jobs": (5_000, 500),
    "latency_jobs": (1_000, 200),
    "memory_jobs": (1_000_000, 100_000),
    # limits: the rate row's jobs (its burst of 1,000, then 1,000 a second:
    # 4 s, 1.5 s in --quick), and the jobs claimed dry per claim-cost sample.
    "limits_rate_jobs": (5_000, 2_500),
    "limits_claim_jobs": (50_000, 20_000),
    "flows": (1_000, 200),  # each a parent and 10 children
    "events_jobs": (50_000, 10_000),  # per run, c=16: events on against off
    "wait_jobs": (1_000, 200),  # completion to wait's return, job after job
    "events_entries": (10_000, 10_000),  # the stream whose memory is measured
    "search_rows": (50_000, 50_000),  # pending rows one search reads through
    "tracing_noop_jobs": (50_000, 10_000),  # per run, c=16: tracing on against off
    "tracing_exec_jobs": (5_000, 500),  # per run, c=8
    "groups_jobs": (100_000, 20_000),  # per run, c=16: in 1,000 groups against none
    "groups_cost_jobs": (20_000, 5_000),  # claimed per claim-cost sample, of 200,000 enqueued
    "groups_tenants": (100, 40),  # small tenants behind the 100,000-job backlog
    # Each figure held to a ceiling is measured this many times, interleaved
    # with its ceiling (A B, B A, A B), and each side keeps its best: on a
    # shared machine noise only ever slows a run down.
    "reps": (3, 1),
}


class Session:
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.build = Path(args.build_dir).resolve()
        self.report = Report()
        self.peer = None
        self.valkey = None  # the server the rows run against; on_server() lends another
        self.workdir = Path(tempfile.mkdtemp(prefix="emq-bench-"))
        self.running = []  # processes to end if we are interrupted

    def size(self, name):
        full, quick = SIZES[name]
        return quick if self.quick else full

    def bin(self, name):
        return self.build / "bin" / name

    def lib(self, name):
        return self.build / "lib" / name

    def build_programs(self):
        if self.args.no_build:
            return
        cache = self.build / "CMakeCache.txt"
        if not cache.exists():
            gen = ["-G", "Ninja"] if shutil.which("ninja") else []
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(self.build), *gen, "-DCMAKE_BUILD_TYPE=Release",
                            "-DEMQ_BUILD_TESTS=OFF", "-DEMQ_BUILD_BENCH=ON"], check=True, stdout=subprocess.DEVNULL)
        elif "CMAKE_BUILD_TYPE:STRING=Release" not in cache.read_text():
            raise BenchError(f"{self.build} is not a Release build: figures from it would mislead. "
                             "Pass --build-dir with a new directory (bench/run configures it)")
        log(f"building the benchmark programs in {self.build} (-j2)")
        p = subprocess.run(["cmake", "--build", str(self.build), "--target", "emq_bench", "-j2"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            raise BenchError("the build failed:\n" + p.stdout[-4000:])

    def install_peer(self):
        self.peer = Peer.install(self.args.no_peer)

    @contextlib.contextmanager
    def emqd(self, name, queues, keyspace_events=False, tls=False, executor=None, tracing=None):
        """An emqd for the queues against the current server, in a directory
        of its own; stopped (and its exit checked) when the block ends.
        tracing: the tracing block's keys, when it traces."""
        d = Emqd(self.bin("emqd"), self.workdir / name, self.valkey, queues, keyspace_events=keyspace_events,
                 tls=tls, executor=executor, tracing=tracing)
        self.running.append(d)
        try:
            yield d
        finally:
            d.stop()
            self.running.remove(d)

    def on_server(self, server, fn):
        """fn, run (with the arguments given) with self.valkey pointing at server."""
        def run(*args):
            saved, self.valkey = self.valkey, server
            try:
                return fn(*args)
            finally:
                self.valkey = saved
        return run

    def stop_everything(self):
        for p in list(self.running):
            try:
                if isinstance(p, Emqd):
                    if p.proc is not None and p.proc.poll() is None:
                        p.proc.kill()
                        p.proc.wait()
                elif p.poll() is None:
                    p.kill()
                    p.wait()
            except Exception:  # noqa: BLE001 - best effort on the way out
                pass
        if self.valkey:
            self.valkey.stop()

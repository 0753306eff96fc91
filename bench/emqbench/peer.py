"""BullMQ, the peer some rows are held against: installed at the pinned
versions of bench/peer/package.json into bench/.peer/ (never into the
product), and driven through the scripts beside that file."""
import json
import os
import shutil
import subprocess
import time

from emqbench import ROOT, BenchError, log
from emqbench.measure import percentile, run_json

SOURCE = ROOT / "bench" / "peer"
INSTALLED = ROOT / "bench" / ".peer"


class Peer:
    def __init__(self):
        self.env = dict(os.environ, NODE_PATH=str(INSTALLED / "node_modules"))

    @staticmethod
    def install(no_peer):
        """The peer, installed if it is not yet at the pinned versions; None
        (its rows left out, with a log line why) under --no-peer or when it
        cannot be installed."""
        if no_peer:
            log("--no-peer: BullMQ rows are left out")
            return None
        if not shutil.which("node") or not shutil.which("npm"):
            log("node/npm not on PATH: BullMQ rows are left out")
            return None
        wanted = json.loads((SOURCE / "package.json").read_text())["dependencies"]
        installed = {}
        for name in wanted:
            pj = INSTALLED / "node_modules" / name / "package.json"
            if pj.exists():
                installed[name] = json.loads(pj.read_text())["version"]
        if installed != wanted:
            log(f"installing the peer into {INSTALLED}: " + ", ".join(f"{k}@{v}" for k, v in wanted.items()))
            INSTALLED.mkdir(exist_ok=True)
            shutil.copy(SOURCE / "package.json", INSTALLED / "package.json")
            p = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=INSTALLED,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
            if p.returncode != 0:
                log("npm install failed: BullMQ rows are left out:\n" + p.stdout[-2000:])
                return None
        return Peer()

    @staticmethod
    def version():
        return json.loads((INSTALLED / "node_modules/bullmq/package.json").read_text())["version"]

    def node(self, valkey, script, *args, **kw):
        argv = ["node", str(SOURCE / script), "--port", str(valkey.port), *[str(a) for a in args]]
        return run_json(argv, env=self.env, **kw)

    def worker_rate(self, valkey, queue, jobs, concurrency, processor=None, payload="x"):
        valkey.reset()
        self.node(valkey, "enqueue.js", "--queue", queue, "--jobs", jobs, "--chunk", 1000, "--payload", payload)
        extra = ["--processor", str(SOURCE / processor)] if processor else []
        return self.node(valkey, "worker.js", "--queue", queue, "--jobs", jobs, "--concurrency", concurrency,
                         *extra)["rate"]

    def wait_latency(self, valkey, jobs):
        """Completion to waitUntilFinished's return: the samples in ns."""
        valkey.reset()
        return self.node(valkey, "wait.js", "--queue", "wait", "--jobs", jobs)["samples_ns"]

    def latency(self, valkey, jobs, running):
        """(p50, p99) in ms of the idle wake, the way the emqd rows measure
        it; running: the run's list of processes to end if it is interrupted."""
        valkey.reset()
        argv = ["node", str(SOURCE / "latency.js"), "--port", str(valkey.port), "--mode", "worker",
                "--queue", "latency", "--jobs", str(jobs)]
        w = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=self.env)
        running.append(w)
        try:
            if w.stdout.readline().strip() != "ready":
                raise BenchError("the BullMQ latency worker did not get ready")
            time.sleep(0.5)
            subprocess.run(["node", str(SOURCE / "latency.js"), "--port", str(valkey.port), "--mode",
                            "producer", "--queue", "latency", "--jobs", str(jobs), "--every-ms", "5"],
                           check=True, env=self.env)
            out, _ = w.communicate(timeout=60)
        finally:
            if w.poll() is None:
                w.kill()
                w.wait()
            running.remove(w)
        samples = sorted(x / 1e6 for x in json.loads(out.strip().splitlines()[-1])["samples_ns"])
        return percentile(samples, 50), percentile(samples, 99)

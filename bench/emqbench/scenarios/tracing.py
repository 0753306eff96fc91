"""Tracing on against off, in the same run (issue 52): the no-op plugin at
c=16 and the minimal exec handler at c=8, each with tracing on (sample
ratio 1: every job a span, exported by emqd's OTLP/HTTP exporter to a
local receiver that decodes every batch, tests/support/otlp_receiver.py
on Debian's python3-opentelemetry-proto) and off. Everything else is what
users run: the batch processor's defaults, prefetch as the no-op and exec
rows use it."""
import json
import subprocess

from emqbench import ROOT, BenchError, log, wait_for
from emqbench.measure import best_pair, emqd_rate, process_cpu
from emqbench.workload import noop_plugin, prefill

RECEIVER = ROOT / "tests" / "support" / "otlp_receiver.py"
TARGETS = {"noop": 0.9, "exec": 0.97}


class Receiver:
    """The receiver on a free loopback port, decoding and counting spans."""

    def __init__(self, directory):
        directory.mkdir(parents=True, exist_ok=True)
        self.dir = directory
        self.proc = subprocess.Popen(["/usr/bin/python3", str(RECEIVER), "--dir", str(directory), "--count-only"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        port = directory / "port"
        try:
            wait_for("the OTLP receiver to listen", port.exists, 20, every=0.01)
        except BenchError:
            self.stop()
            raise BenchError("the OTLP receiver did not start (python3-opentelemetry-proto, python3-protobuf: "
                             "scripts/install-deps.sh): " + self.proc.stderr.read().decode(errors="replace"))
        self.endpoint = f"http://127.0.0.1:{port.read_text().strip()}"

    def spans(self):
        path = self.dir / "requests.ndjson"
        if not path.exists():
            return 0
        return sum(json.loads(line)["spans"] for line in path.read_text().splitlines() if line.strip())

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def scenario(s):
    receiver = Receiver(s.workdir / "otlp")
    try:
        cases = (("noop", "no-op plugin", 16, noop_plugin(s), "tracing_noop_jobs"),
                 ("exec", "exec, minimal C handler", 8, {"type": "exec", "command": [str(s.bin("emq_bench_true"))]},
                  "tracing_exec_jobs"))
        for name, what, c, handler, size in cases:
            jobs = s.size(size)

            def run(on, c=c, handler=handler, jobs=jobs, name=name):
                s.valkey.reset()
                prefill(s, "tr", jobs)
                before, receiver_cpu = receiver.spans(), process_cpu(receiver.proc.pid)[0]
                tracing = {"enabled": True, "endpoint": receiver.endpoint, "sample_ratio": 1} if on else None
                cpu = []
                rate = emqd_rate(s, f"tracing-{name}-{'on' if on else 'off'}", "tr", jobs, c, handler, prefetch=c,
                                 tracing=tracing, cpu=cpu)
                # Where the time goes, per job: emqd's own threads, the
                # handlers it reaped, the server, and the receiver (which
                # shares the machine's cores, as a sidecar collector does).
                cpu[0]["receiver"] = (process_cpu(receiver.proc.pid)[0] - receiver_cpu) * 1e6 / jobs
                s.report.raw.setdefault(f"tracing_{name}_cpu", []).append(dict(on=on, **cpu[0]))
                log(f"tracing-{name}-{'on' if on else 'off'}: CPU per job: emqd {cpu[0]['own']:.1f} µs, "
                    f"handlers {cpu[0]['children']:.1f} µs, server {cpu[0]['server']:.1f} µs, "
                    f"receiver {cpu[0]['receiver']:.1f} µs; machine busy {cpu[0]['busy']:.0%}")
                if on:
                    # emqd has stopped: what it sent has been answered.
                    got = receiver.spans() - before
                    s.report.raw.setdefault(f"tracing_{name}_spans", []).append(dict(jobs=jobs, received=got))
                    log(f"tracing-{name}: the receiver decoded {got} spans of {jobs} jobs")
                return rate

            on, off = best_pair(s, f"tracing_{name}", lambda r=run: r(True), lambda r=run: r(False))
            want = TARGETS[name]
            s.report.row(f"{what} c={c}, tracing on (ratio 1)", on, "jobs/s", "the same, tracing off", off,
                         target=f">= {want}", met=on / off >= want)
    finally:
        receiver.stop()

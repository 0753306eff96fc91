"""The servers a run starts and stops: valkey-server (standalone, with a
TLS port, with the emq module, or a cluster node) and emqd with a
generated configuration. Spoken to with a small RESP client: nothing here
needs more than the Python standard library."""
import json
import signal
import socket
import subprocess
import time

from emqbench import BenchError, wait_for


class Resp:
    """A minimal RESP2 client: enough for FLUSHALL, CONFIG, HGET, SCRIPT LOAD."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.file = self.sock.makefile("rb")

    def close(self):
        self.file.close()
        self.sock.close()

    @staticmethod
    def _encode(args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        return b"".join(out)

    def _read(self):
        line = self.file.readline()
        if not line:
            raise BenchError("the server closed the connection")
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise BenchError("server error: " + rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.file.read(n + 2)[:-2]
            return data.decode(errors="replace")
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise BenchError(f"unreadable reply: {line!r}")

    def call(self, *args):
        self.sock.sendall(self._encode(args))
        return self._read()

    def pipeline(self, commands):
        self.sock.sendall(b"".join(self._encode(c) for c in commands))
        return [self._read() for _ in commands]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_tls_files(directory):
    """A CA and a certificate for 127.0.0.1 it signed, made with openssl;
    returns (ca, cert, key)."""
    directory.mkdir(parents=True, exist_ok=True)
    ca, ca_key = directory / "ca.crt", directory / "ca.key"
    cert, key, csr, ext = directory / "server.crt", directory / "server.key", directory / "server.csr", directory / "ext"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for argv in (["req", "-x509", *ec, "-keyout", ca_key, "-out", ca, "-subj", "/CN=bench CA", "-days", "2"],
                 ["req", *ec, "-keyout", key, "-out", csr, "-subj", "/CN=localhost"],
                 ["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-days", "2",
                  "-out", cert, "-extfile", ext]):
        p = subprocess.run(["openssl", *map(str, argv)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            raise BenchError(f"openssl {argv[0]} failed: {p.stdout[-1000:]}")
    return ca, cert, key


class Valkey:
    """One server; with tls, the same server also listens for TLS on a
    second port, so plaintext and TLS runs share its state and its CPU."""

    def __init__(self, workdir, tls=False, module=None, cluster=False):
        """module: the emq module to load (the native rows' server);
        cluster: a cluster node, with no slots until form_cluster()."""
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.log_path = workdir / "valkey.log"
        argv = ["valkey-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", str(workdir), "--logfile", str(self.log_path), "--maxmemory-policy", "noeviction"]
        if module:
            argv += ["--loadmodule", str(module)]
        self.bus_port = None
        if cluster:
            self.bus_port = free_port()
            argv += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                     "--cluster-port", str(self.bus_port)]
        self.tls_url = self.tls_ca = None
        if tls:
            self.tls_ca, cert, key = make_tls_files(workdir / "tls")
            tls_port = free_port()
            argv += ["--tls-port", str(tls_port), "--tls-cert-file", str(cert), "--tls-key-file", str(key),
                     "--tls-ca-cert-file", str(self.tls_ca), "--tls-auth-clients", "no"]
            self.tls_url = f"valkeys://127.0.0.1:{tls_port}/0"
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.r = Resp(self.port)
                if self.r.call("PING") == "PONG":
                    break
            except (OSError, BenchError):
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise BenchError(f"valkey-server did not start on port {self.port}; see {self.log_path}")
            time.sleep(0.05)
        self.url = f"valkey://127.0.0.1:{self.port}/0"

    def reset(self, keyspace_events=""):
        self.r.call("FLUSHALL")
        self.r.call("CONFIG", "SET", "notify-keyspace-events", keyspace_events)

    def hget_int(self, key, field):
        v = self.r.call("HGET", key, field)
        return int(v) if v is not None else 0

    def completed(self, queues):
        values = self.r.pipeline([["HGET", f"emq:{{{q}}}:stats", "completed"] for q in queues])
        return sum(int(v) for v in values if v is not None)

    def stop(self):
        try:
            self.r.close()
        except OSError:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def form_cluster(nodes):
    """Slots split evenly over the nodes, all primaries, joined; returns
    each node's slot range once every node says cluster_state:ok."""
    ranges = []
    for i, n in enumerate(nodes):
        first, last = i * 16384 // len(nodes), (i + 1) * 16384 // len(nodes) - 1
        n.r.call("CLUSTER", "ADDSLOTSRANGE", first, last)
        if i > 0:
            n.r.call("CLUSTER", "MEET", "127.0.0.1", nodes[0].port, nodes[0].bus_port)
        ranges.append((first, last))

    def ok():
        return all("cluster_state:ok" in n.r.call("CLUSTER", "INFO") for n in nodes)
    wait_for("the cluster to be formed", ok, 30, every=0.05)
    return ranges


def yaml_str(s):
    return json.dumps(str(s))  # a JSON string is a YAML string


def yaml_value(v):
    """A scalar as YAML reads it back: true/false, a number, or a string."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return v if isinstance(v, (int, float)) else yaml_str(v)


def limits_yaml(limits):
    """A queue's `limits:` lines; limits: dict(max_active=N, rate=(max, "1s")), either key optional."""
    if not limits:
        return []
    lines = ["    limits:"]
    if "max_active" in limits:
        lines.append(f"      max_active: {int(limits['max_active'])}")
    if "rate" in limits:
        most, per = limits["rate"]
        lines.append(f"      rate: {{max: {int(most)}, per: {yaml_str(per)}}}")
    return lines


class Emqd:
    """emqd with a generated configuration, started and stopped by us."""

    def __init__(self, program, directory, valkey, queues, keyspace_events=False, tls=False, executor=None,
                 tracing=None):
        """program: the emqd binary; directory: where its configuration and
        log go; valkey: the server it works against (tls: over its TLS port)."""
        self.program = program
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config = self.dir / "emqd.yaml"
        self.log_path = self.dir / "emqd.log"
        lines = [
            "valkey:",
            f"  url: {yaml_str(valkey.tls_url if tls else valkey.url)}",
            f"  keyspace_events: {'true' if keyspace_events else 'false'}",
            *([ "  tls:", f"    ca_file: {yaml_str(str(valkey.tls_ca))}"] if tls else []),
            f"  executor: {executor or 'auto'}",
            "metrics:",
            '  listen: ""',
            "log:",
            "  level: info",
            "shutdown:",
            "  drain_timeout_s: 10",
            *(["tracing:"] + [f"  {k}: {yaml_value(v)}" for k, v in tracing.items()] if tracing else []),
            "queues:",
        ]
        for q in queues:
            lines.append(f"  - name: {q['name']}")
            lines.append(f"    concurrency: {q['concurrency']}")
            if q.get("prefetch"):
                lines.append(f"    prefetch: {q['prefetch']}")
            lines += limits_yaml(q.get("limits"))
            if q.get("events") is not None:
                lines.append(f"    events: {q['events']}")
            lines.append("    handler:")
            for k, v in q["handler"].items():
                if isinstance(v, list):
                    lines.append(f"      {k}: [{', '.join(yaml_str(x) for x in v)}]")
                elif isinstance(v, dict):
                    lines.append(f"      {k}: {{{', '.join(f'{a}: {yaml_str(b)}' for a, b in v.items())}}}")
                else:
                    lines.append(f"      {k}: {yaml_str(v) if isinstance(v, str) else v}")
        self.config.write_text("\n".join(lines) + "\n")
        self.proc = None

    def start(self):
        self.log_file = open(self.log_path, "wb")
        self.started = time.monotonic()
        self.proc = subprocess.Popen([str(self.program), "--config", str(self.config)],
                                     stdin=subprocess.DEVNULL, stdout=self.log_file, stderr=subprocess.STDOUT)
        return self.started

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def check_alive(self):
        if not self.alive():
            raise BenchError(f"emqd exited early (code {self.proc.returncode}); see {self.log_path}:\n"
                             + self.log_path.read_text(errors="replace")[-2000:])

    def wait_ready(self, timeout=30):
        def ready():
            self.check_alive()
            return "ready:" in self.log_path.read_text(errors="replace")
        wait_for("emqd to log ready", ready, timeout, every=0.01)

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log_file.close()
        code = self.proc.returncode
        self.proc = None
        if code != 0:
            raise BenchError(f"emqd exited with {code}; see {self.log_path}")

"""A real valkey-server for the tests: a free loopback port and a unix
socket in a private directory, stopped and removed by stop()."""
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

import redis

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
WIRE_CASES = os.path.join(REPO, "tests", "wire-cases")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, *extra, tls=None):
        """tls: (cert_file, key_file, ca_file) serves TLS on the port, plaintext on the socket."""
        self.dir = tempfile.mkdtemp(prefix="echomq-py-")
        self.socket = os.path.join(self.dir, "valkey.sock")
        binary = shutil.which("valkey-server")
        if binary is None:
            raise RuntimeError("valkey-server is not on PATH: scripts/install-deps.sh installs it")
        for _ in range(5):
            self.port = _free_port()
            listen = ["--port", str(self.port)] if tls is None else [
                "--port", "0", "--tls-port", str(self.port), "--tls-cert-file", tls[0], "--tls-key-file", tls[1],
                "--tls-ca-cert-file", tls[2], "--tls-auth-clients", "no"]
            self.proc = subprocess.Popen(
                [binary, *listen, "--bind", "127.0.0.1", "--unixsocket", self.socket,
                 "--save", "", "--appendonly", "no", "--dir", self.dir, *extra],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._ready():
                return
            self.proc.kill()
            self.proc.wait()
        raise RuntimeError("valkey-server did not start")

    def _ready(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            probe = redis.Redis(unix_socket_path=self.socket)
            try:
                if probe.ping():
                    return True
            except redis.exceptions.ConnectionError:
                time.sleep(0.02)
            finally:
                probe.close()
        return False

    @property
    def url(self):
        return "valkey://127.0.0.1:%d/0" % self.port

    def client(self):
        return redis.Redis(unix_socket_path=self.socket)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


class ServerTest(unittest.TestCase):
    """A test class with a server of its own (cls.server) and a client of it (cls.r)."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.r = cls.server.client()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

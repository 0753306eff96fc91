"""valkeys:// and rediss://: TLS to a real valkey-server, its certificate verified."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import redis  # noqa: E402

from echomq import Queue  # noqa: E402
from server import Server  # noqa: E402

EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


class Tls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = d = tempfile.mkdtemp(prefix="echomq-pki-")
        for ca in ("ca", "other-ca"):
            openssl("req", "-x509", *EC_KEY, "-keyout", f"{d}/{ca}.key", "-out", f"{d}/{ca}.crt", "-subj", f"/CN={ca}",
                    "-days", "2")
        openssl("req", *EC_KEY, "-keyout", f"{d}/server.key", "-out", f"{d}/server.csr", "-subj", "/CN=localhost")
        with open(f"{d}/server.ext", "w") as f:
            f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        openssl("x509", "-req", "-in", f"{d}/server.csr", "-CA", f"{d}/ca.crt", "-CAkey", f"{d}/ca.key",
                "-CAcreateserial", "-days", "2", "-out", f"{d}/server.crt", "-extfile", f"{d}/server.ext")
        cls.server = Server(tls=(f"{d}/server.crt", f"{d}/server.key", f"{d}/ca.crt"))

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_a_server_the_ca_vouches_for_is_spoken_to(self):
        for scheme in ("valkeys", "rediss"):
            q = Queue("%s://localhost:%d/0" % (scheme, self.server.port), "tls_" + scheme,
                      ssl_ca_certs=self.dir + "/ca.crt")
            job_id = q.enqueue("over tls")
            self.assertEqual(q.inspect(job_id)["payload"], b"over tls")

    def test_the_ca_from_emq_tls_ca_as_emq_reads_it(self):
        os.environ["EMQ_TLS_CA"] = self.dir + "/ca.crt"
        try:
            q = Queue("valkeys://127.0.0.1:%d" % self.server.port, "tls_env")
            self.assertTrue(q.enqueue("x").startswith("JOB_"))
        finally:
            del os.environ["EMQ_TLS_CA"]

    def test_a_server_another_ca_signed_is_refused(self):
        q = Queue("valkeys://localhost:%d/0" % self.server.port, "tls_other", ssl_ca_certs=self.dir + "/other-ca.crt")
        with self.assertRaisesRegex(redis.exceptions.ConnectionError, "certificate verify failed"):
            q.enqueue("never sent")
        self.assertEqual(self.server.client().keys("emq:{tls_other}:*"), [])


if __name__ == "__main__":
    unittest.main()

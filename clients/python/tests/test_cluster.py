"""A cluster node's URL: Queue over redis-py's RedisCluster on a real
three-primary Valkey Cluster."""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import redis  # noqa: E402

from echomq import Queue  # noqa: E402
from server import Server  # noqa: E402


class Cluster(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.nodes = [Server("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf") for _ in range(3)]
        subprocess.run([shutil.which("valkey-cli"), "--cluster", "create",
                        *["127.0.0.1:%d" % n.port for n in cls.nodes], "--cluster-yes"],
                       check=True, capture_output=True, timeout=60)
        deadline = time.monotonic() + 30
        while True:
            info = redis.Redis(host="127.0.0.1", port=cls.nodes[0].port).execute_command("CLUSTER", "INFO")
            if b"cluster_state:ok" in info:
                break
            if time.monotonic() > deadline:
                raise AssertionError("the cluster did not come up: %r" % info)
            time.sleep(0.05)

    @classmethod
    def tearDownClass(cls):
        for n in cls.nodes:
            n.stop()

    def test_queues_in_every_slot_enqueue_inspect_and_flow_through_one_node_url(self):
        url = "valkey://127.0.0.1:%d" % self.nodes[1].port
        names = ["c%d" % i for i in range(12)]  # spread over the three primaries' slots
        for name in names:
            q = Queue(url, name, cluster=True)
            job_id = q.enqueue(name.encode(), lane=1)
            self.assertEqual((q.inspect(job_id)["payload"], q.stats()["pending"]), (name.encode(), 1))
        q = Queue(url, names[0], cluster=True)
        tree = q.enqueue_flow({"payload": "p", "children": [{"payload": "a", "queue": n} for n in names[1:4]]})
        self.assertEqual(q.inspect(tree["id"])["state"], "waiting")
        for c in tree["children"]:
            self.assertEqual(Queue(url, c["queue"], cluster=True).inspect(c["id"])["parent"], names[0] + ":" + tree["id"])


if __name__ == "__main__":
    unittest.main()

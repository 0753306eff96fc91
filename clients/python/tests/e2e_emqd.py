"""End to end: the speakers with the real emqd and emq (EMQ_BIN_DIR, else
the repository's build/bin) on a real valkey-server.

A Python producer's jobs are run by emqd through a pool handler written
with echomq.handler and read back with wait, a parent's with its
children's results; a job enqueued by Python is inspected by Node and by
`emq inspect`; a flow enqueued from Python, and one from Node, is
inspected row by row by the other two. Run by CTest
(clients.python.e2e); it fails when emqd or node is missing.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import echomq  # noqa: E402
from echomq import JobFailed, Queue, minted_at_ms  # noqa: E402
from server import REPO, Server  # noqa: E402

BIN = os.environ.get("EMQ_BIN_DIR") or os.path.join(REPO, "build", "bin")
HERE = os.path.dirname(os.path.abspath(__file__))
NODE_TEST = os.path.join(REPO, "clients", "node", "test")
NODE = shutil.which("node") or "/usr/bin/node"


def config(url):
    handler = os.path.join(HERE, "handlers", "upper.py")
    return (
        "valkey:\n  url: %s\n  keyspace_events: true\n"
        "metrics:\n  listen: \"\"\n"
        "log:\n  level: info\n"
        "queues:\n"
        "  - name: py_upper\n    concurrency: 2\n    max_attempts: 3\n    keep_completed_s: 300\n"
        "    handler:\n      type: pool\n      command: [\"/usr/bin/python3\", \"%s\"]\n" % (url, handler))


class Emqd:
    def __init__(self, url):
        self.dir = tempfile.mkdtemp(prefix="echomq-e2e-")
        path = os.path.join(self.dir, "emqd.yaml")
        with open(path, "w") as f:
            f.write(config(url))
        self.log_path = os.path.join(self.dir, "emqd.log")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([os.path.join(BIN, "emqd"), "--config", path], stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 30
        while b"ready:" not in self.text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("emqd did not become ready:\n" + self.text().decode(errors="replace"))
            time.sleep(0.05)

    def text(self):
        with open(self.log_path, "rb") as f:
            return f.read()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def run(argv):
    p = subprocess.run(argv, capture_output=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError("%s exited %d: %s" % (argv, p.returncode, p.stderr.decode(errors="replace")))
    return p.stdout


class EndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for program in (os.path.join(BIN, "emqd"), os.path.join(BIN, "emq"), NODE):
            if not os.access(program, os.X_OK):
                raise AssertionError("%s is missing: build the repository (make) and install node" % program)
        cls.server = Server()
        cls.emqd = Emqd(cls.server.url)

    @classmethod
    def tearDownClass(cls):
        cls.emqd.stop()
        cls.server.stop()

    def emq_inspect(self, queue, job_id):
        return json.loads(run([os.path.join(BIN, "emq"), "--url", self.server.url, "inspect", queue, job_id, "--json"]))

    def node_inspect(self, queue, job_id):
        return json.loads(run([NODE, os.path.join(NODE_TEST, "inspect_cli.js"), self.server.url, queue, job_id]))

    def test_python_jobs_run_by_emqd_through_a_python_pool_handler(self):
        q = Queue(self.server.url, "py_upper")
        before = q.stats()["counters"]["completed"]
        jobs = {q.enqueue(("job %d" % i).encode()): ("JOB %d" % i).encode() for i in range(20)}
        binary = q.enqueue(b"\xff\x00bin")
        for job_id, want in jobs.items():
            self.assertEqual(q.wait(job_id, timeout=60), want)
        self.assertEqual(q.wait(binary, timeout=60), b"\xff\x00BIN")
        poison = q.enqueue("poison")
        with self.assertRaises(JobFailed) as e:
            q.wait(poison, timeout=60)
        self.assertEqual((e.exception.error, e.exception.attempts), (b"poison: refused on attempt 1", 1))
        self.assertEqual(q.stats()["counters"]["completed"], before + 21)

    def test_a_python_flow_whose_parent_sees_its_childrens_results(self):
        q = Queue(self.server.url, "py_upper")
        tree = q.enqueue_flow({"payload": "report", "children": [{"payload": "a", "id": "JOB_e2e_a"},
                                                                 {"payload": "b", "id": "JOB_e2e_b"}]})
        self.assertEqual(q.wait(tree["id"], timeout=60), b"A+B->REPORT")

    def test_the_running_emqd_is_listed_by_python_node_and_emq(self):
        deadline = time.monotonic() + 30
        while not echomq.daemons(self.server.url) and time.monotonic() < deadline:
            time.sleep(0.05)  # its first beat follows "ready:"
        (py,) = echomq.daemons(self.server.url)
        self.assertEqual((py["state"], py["queues"], py["slots"]), ("running", ["py_upper"], 2))
        self.assertEqual(py["pid"], self.emqd.proc.pid)
        (js,) = json.loads(run([NODE, os.path.join(NODE_TEST, "daemons_cli.js"), self.server.url]))
        (emq,) = json.loads(run([os.path.join(BIN, "emq"), "--url", self.server.url, "daemons", "--json"]))
        self.assertEqual(js["id"], py["id"])
        self.assertEqual(emq["id"], py["id"])
        self.assertEqual(js["queues"], ["py_upper"])

    def test_a_python_job_inspected_by_node_and_by_emq(self):
        q = Queue(self.server.url, "py_only")
        job_id = q.enqueue("inspect me", lane=5)
        node = self.node_inspect("py_only", job_id)
        self.assertEqual((node["state"], node["payload"], node["lane"], node["attempts"]), ("pending", "inspect me", 5, 0))
        self.assertEqual(node["minted_ms"], minted_at_ms(job_id))
        emq = self.emq_inspect("py_only", job_id)
        self.assertEqual((emq["id"], emq["state"], emq["lane"], emq["attempts"]), (job_id, "pending", 5, 0))
        self.assertIn("inspect me", json.dumps(emq))

    def test_stats_is_the_object_emq_stats_json_prints(self):
        # The dead depth and the dead counter differ here: one key each.
        q = Queue(self.server.url, "py_stats")
        q.enqueue("a")
        q.enqueue("b", delay=600)
        q.pause()
        r = self.server.client()
        r.zadd(q.keys["dead"], {"JOB_gone": 1})
        r.hset(q.keys["stats"], mapping={"dead": 5, "completed": 7, "retried": "not a number"})
        mine = q.stats()
        emq = json.loads(run([os.path.join(BIN, "emq"), "--url", self.server.url, "stats", "py_stats", "--json"]))[0]
        emq.pop("problems")  # the retried counter another writer broke: emq names it, both show null
        self.assertEqual(mine["waiting"], 0)
        self.assertEqual(mine, emq)
        self.assertEqual((mine["dead"], mine["counters"]["dead"], mine["counters"]["retried"]), (1, 5, None))

    def assert_tree(self, tree, parent_ref, inspect):
        row = inspect(tree["queue"], tree["id"])
        if tree["children"]:
            self.assertEqual(row["state"], "waiting")
            self.assertEqual(int(row["children"]), len(tree["children"]))
        else:
            self.assertEqual(row["state"], "pending")
        self.assertEqual(row.get("parent", ""), parent_ref)
        for c in tree["children"]:
            self.assert_tree(c, tree["queue"] + ":" + tree["id"], inspect)

    def test_a_flow_from_python_inspected_by_node(self):
        q = Queue(self.server.url, "flow_py")
        tree = q.enqueue_flow({"payload": "report", "children": [
            {"payload": "a"}, {"payload": "b", "queue": "flow_py_b", "children": [{"payload": "leaf"}]}]})
        self.assert_tree(tree, "", self.node_inspect)
        self.assertEqual(self.emq_inspect("flow_py", tree["id"])["state"], "waiting")

    def test_a_flow_from_node_inspected_by_python_and_emq(self):
        out = run([NODE, os.path.join(NODE_TEST, "flow_cli.js"), self.server.url, "flow_js", json.dumps(
            {"payload": "report", "onChildFailure": "wait", "children": [
                {"payload": "a"}, {"payload": "b", "queue": "flow_js_b", "children": [{"payload": "leaf"}]}]})])
        tree = json.loads(out)

        def python_inspect(queue, job_id):
            return Queue(self.server.url, queue).inspect(job_id)

        self.assert_tree(tree, "", python_inspect)
        self.assertEqual(python_inspect("flow_js", tree["id"])["on_child_failure"], "wait")
        root = self.emq_inspect("flow_js", tree["id"])
        self.assertEqual(root["state"], "waiting")
        leaf = tree["children"][1]["children"][0]
        self.assertEqual(self.emq_inspect(leaf["queue"], leaf["id"])["state"], "pending")


if __name__ == "__main__":
    unittest.main()

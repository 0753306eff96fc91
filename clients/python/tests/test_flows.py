"""Queue.enqueue_flow against a real valkey-server: a tree checked whole
before anything is sent (issue 37, rows 9-11 and 17)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from echomq import FlowIncomplete, InvalidError, Queue  # noqa: E402
from echomq.flows import MAX_DEPTH  # noqa: E402
from server import Server  # noqa: E402


def chain(levels):
    top = {"payload": "level 1"}
    at = top
    for level in range(2, levels + 1):
        at["children"] = [{"payload": "level %d" % level}]
        at = at["children"][0]
    return top


_server = []  # the module's one server, while its tests run


def setUpModule():
    _server.append(Server())


def tearDownModule():
    _server.pop().stop()


class FlowTest(unittest.TestCase):
    def setUp(self):
        self.r = _server[0].client()
        self.addCleanup(self.r.close)

    def queue(self, suffix=""):
        return Queue(_server[0].url, self.id().rsplit(".", 1)[-1][:48] + suffix)

    def keys_of(self, q):
        return sorted(k.decode() for k in self.r.keys("emq:{%s}:*" % q.name))

    def test_a_job_given_twice_anywhere_in_the_tree_is_refused_before_anything_is_sent(self):
        q = self.queue()
        with self.assertRaisesRegex(InvalidError, r"root.children\[0\]: %s:JOB_p is given twice in the tree "
                                                  r"\(first at root\)" % q.name):
            q.enqueue_flow({"payload": "p", "id": "JOB_p", "children": [{"payload": "me", "id": "JOB_p"}]})
        kid = {"payload": "k", "id": "JOB_k", "queue": q.name + "-k"}
        with self.assertRaisesRegex(InvalidError, r"root.children\[1\].children\[0\]: %s-k:JOB_k is given twice in "
                                                  r"the tree \(first at root.children\[0\].children\[0\]\)" % q.name):
            q.enqueue_flow({"payload": "p", "children": [{"payload": "a", "children": [kid]},
                                                         {"payload": "b", "children": [dict(kid)]}]})
        self.assertEqual(self.keys_of(q), [])
        self.assertEqual(self.keys_of(self.queue("-k")), [])

    def test_a_tree_of_64_levels_is_enqueued_and_one_of_65_is_refused(self):
        q = self.queue()
        self.assertEqual(MAX_DEPTH, 64)
        with self.assertRaisesRegex(InvalidError, r"\].children\[0\]: the tree is deeper than 64 levels"):
            q.enqueue_flow(chain(65))
        with self.assertRaisesRegex(InvalidError, "deeper than 64 levels"):
            q.enqueue_flow(chain(20000))
        self.assertEqual(self.keys_of(q), [])
        ids, levels = q.enqueue_flow(chain(64)), 1
        leaf = ids
        while leaf["children"]:
            leaf, levels = leaf["children"][0], levels + 1
        self.assertEqual(levels, 64)
        self.assertEqual(q.inspect(leaf["id"])["state"], "pending")

    def test_a_node_without_children_is_a_plain_job(self):
        q = self.queue()
        ids = q.enqueue_flow({"payload": "alone", "lane": 3})
        self.assertEqual(ids["children"], [])
        row = q.inspect(ids["id"])
        self.assertEqual((row["state"], row["lane"], "parent" in row), ("pending", 3, False))
        self.assertEqual(q.enqueue_flow({"payload": "plain", "id": "JOB_plain"})["id"], "JOB_plain")
        self.assertEqual(self.r.zscore(q.keys["pending"], "JOB_plain"), 0)

    def test_a_payload_over_the_servers_limit_is_refused_before_anything_is_sent(self):
        q = self.queue()
        self.r.config_set("proto-max-bulk-len", 1 << 20)
        try:
            with self.assertRaisesRegex(InvalidError, r"root.children\[1\]: the payload of 1048577 bytes is over the "
                                                      r"server's limit of 1048576 bytes"):
                q.enqueue_flow({"payload": "p", "children": [{"payload": "s"}, {"payload": b"x" * ((1 << 20) + 1)}]})
        finally:
            self.r.config_set("proto-max-bulk-len", 512 << 20)
        self.assertEqual(self.keys_of(q), [])

    def test_a_refusal_half_way_enqueues_the_rest_and_names_the_parent_left_waiting(self):
        q, broken = self.queue(), self.queue("-b")
        self.r.set(broken.keys["pending"], "not a zset")
        tree = {"payload": "root", "children": [
            {"payload": "mid", "id": "JOB_mid", "children": [{"payload": "refused", "queue": broken.name},
                                                             {"payload": "fine"}]},
            {"payload": "sibling"}]}
        with self.assertRaises(FlowIncomplete) as caught:
            q.enqueue_flow(tree)
        text = str(caught.exception)
        self.assertIn("the server refused %s:JOB_" % broken.name, text)
        self.assertIn("WRONGTYPE", text)
        self.assertIn("these parents now wait for a child that was not enqueued: %s:JOB_mid. Cancel each "
                      "(emq cancel QUEUE ID, e.g. emq cancel %s JOB_mid)" % (q.name, q.name), text)
        self.assertEqual(caught.exception.waiting, [q.name + ":JOB_mid"])
        self.assertEqual(q.inspect("JOB_mid")["state"], "waiting")
        self.assertEqual(q.stats()["pending"], 2, "the sibling and the refused job's sibling went in")


if __name__ == "__main__":
    unittest.main()

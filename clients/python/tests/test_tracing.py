"""Trace contexts from Python, against a real valkey-server: a given
traceparent is written in the row, a flow's children carry their parent's
context unless given their own. The package opentelemetry is not on this
machine (Debian does not package its API): without it, nothing is added."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from echomq import InvalidError, Queue  # noqa: E402
from server import ServerTest  # noqa: E402

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
GIVEN = "00-%s-00f067aa0ba902b7-01" % TRACE
OWN = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


class TracingTest(ServerTest):
    def queue(self):
        return Queue(self.server.url, self.id().rsplit(".", 1)[-1][:64])

    def context(self, q, job_id):
        row = q.keys["row_root"] + job_id
        return [v.decode() if v is not None else None for v in self.r.hmget(row, "traceparent", "tracestate")]

    def test_a_job_carries_the_context_it_is_given_and_no_other(self):
        q = self.queue()
        self.assertEqual(self.context(q, q.enqueue(b"p")), [None, None])
        self.assertEqual(self.context(q, q.enqueue(b"g", traceparent=GIVEN, tracestate="v=1")), [GIVEN, "v=1"])
        with self.assertRaises(InvalidError):
            q.enqueue(b"x", traceparent="00-short")

    def test_a_flows_children_carry_their_parents_context_unless_given_their_own(self):
        q = self.queue()
        ids = q.enqueue_flow({"payload": b"root", "traceparent": GIVEN, "tracestate": "v=1", "children": [
            {"payload": b"a", "children": [{"payload": b"a1"}]},
            {"payload": b"b", "traceparent": OWN}]})
        self.assertEqual(self.context(q, ids["id"]), [GIVEN, "v=1"])
        self.assertEqual(self.context(q, ids["children"][0]["id"]), [GIVEN, "v=1"])
        self.assertEqual(self.context(q, ids["children"][0]["children"][0]["id"]), [GIVEN, "v=1"])
        self.assertEqual(self.context(q, ids["children"][1]["id"]), [OWN, None])
        plain = q.enqueue_flow({"payload": b"root", "children": [{"payload": b"c"}]})
        self.assertEqual(self.context(q, plain["children"][0]["id"]), [None, None])


if __name__ == "__main__":
    unittest.main()

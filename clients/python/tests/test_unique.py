"""Unique jobs from Python, against a real valkey-server: one live job per
key, the holder returned on a duplicate, each mode, and flows."""
import datetime
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from echomq import Enqueued, FlowIncomplete, InvalidError, Queue  # noqa: E402
from server import ServerTest  # noqa: E402
from test_queue import Worker  # noqa: E402


class UniqueTest(ServerTest):
    def queue(self):
        return Queue(self.server.url, self.id().rsplit(".", 1)[-1][:64])

    def test_a_duplicate_returns_the_holder_and_enqueues_nothing(self):
        q = self.queue()
        first = q.enqueue(b"one", unique="report:7")
        self.assertIsInstance(first, Enqueued)
        self.assertEqual((first.outcome, first.state), ("enqueued", None))
        self.assertEqual(self.r.hmget(q.keys["row_root"] + first, "unique", "unique_mode"), [b"report:7", b"finished"])
        again = q.enqueue(b"two", unique="report:7")
        self.assertEqual((again, again.outcome, again.state), (first, "duplicate", "pending"))
        self.assertEqual(self.r.zcard(q.keys["pending"]), 1)
        self.assertEqual(q.stats()["counters"]["duplicates"], 1)

    def test_the_key_is_free_once_the_holder_finished(self):
        q = self.queue()
        first = q.enqueue(b"one", unique="k")
        w = Worker(self.r, q.name)
        job_id, _, epoch = w.claim()
        self.assertEqual(job_id, first)
        w.complete(job_id, epoch, b"r")  # an emq/1 worker: the lock stays, a stale pointer
        again = q.enqueue(b"two", unique="k")
        self.assertEqual(again.outcome, "enqueued")
        self.assertNotEqual(again, first)

    def test_replace_gives_a_delayed_holder_the_latest_payload_and_due_time(self):
        q = self.queue()
        first = q.enqueue(b"v1", unique="sync", unique_mode="replace", delay=3600)
        latest = q.enqueue(b"v2", unique="sync", unique_mode="replace", delay=60)
        self.assertEqual((latest, latest.outcome, latest.state), (first, "replaced", "delayed"))
        self.assertEqual(q.inspect(first)["payload"], b"v2")
        self.assertLess(q.inspect(first)["due_ms"], q.server_time_ms() + 120000)
        self.assertEqual(q.stats()["counters"]["replaced"], 1)

    def test_a_window_holds_for_unique_for_on_the_servers_clock(self):
        q = self.queue()
        first = q.enqueue(b"p", unique="w", unique_for=datetime.timedelta(milliseconds=300))
        self.assertEqual(self.r.hget(q.keys["row_root"] + first, "unique_mode"), b"window")
        self.assertEqual(q.enqueue(b"p", unique="w", unique_for=0.3), first)
        deadline = time.monotonic() + 5
        while self.r.exists(q.keys["uniq_root"] + "w") and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(q.enqueue(b"p", unique="w", unique_for=0.3).outcome, "enqueued")

    def test_started_mode_is_written_and_bad_options_are_refused_before_sending(self):
        q = self.queue()
        job = q.enqueue(b"p", unique="s", unique_mode="started")
        self.assertEqual(self.r.hget(q.keys["row_root"] + job, "unique_mode"), b"started")
        for kwargs in ({"unique": "a b"}, {"unique": "x" * 129}, {"unique_mode": "started"},
                       {"unique": "k", "unique_mode": "window"}, {"unique": "k", "unique_mode": "forever"},
                       {"unique": "k", "unique_mode": "started", "unique_for": 5}, {"traceparent": "00-x"}):
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(InvalidError):
                    q.enqueue(b"p", **kwargs)

    def test_a_flow_child_whose_key_is_held_leaves_its_parent_waiting(self):
        q = self.queue()
        tree = q.enqueue_flow({"payload": b"p", "children": [{"payload": b"c", "unique": "child"}]})
        child = tree["children"][0]["id"]
        with self.assertRaises(FlowIncomplete) as e:
            q.enqueue_flow({"payload": b"p2", "children": [{"payload": b"c", "unique": "child"}]})
        self.assertIn(child, str(e.exception))
        self.assertEqual(len(e.exception.waiting), 1)
        held = q.enqueue_flow({"payload": b"p3", "unique": "root", "children": [{"payload": b"c"}]})
        again = q.enqueue_flow({"payload": b"p4", "unique": "root", "children": [{"payload": b"c"}]})
        self.assertEqual(again, {"queue": q.name, "id": held["id"], "children": []})


if __name__ == "__main__":
    unittest.main()

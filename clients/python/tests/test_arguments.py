"""Arguments of the wrong type are refused at once, naming what to pass,
and nothing reaches the server: a queue name or id given as bytes, a wait
timeout that is not a number of seconds."""
import datetime
import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from echomq import InvalidError, Queue, ids  # noqa: E402
from echomq.queue import keys  # noqa: E402
from server import ServerTest  # noqa: E402


class BytesNames(ServerTest):
    def setUp(self):
        self.r.flushall()

    def test_a_queue_name_given_as_bytes_is_refused_and_nothing_is_written(self):
        # It once wrote to emq:{b'bq'}:pending while {emq}:queues listed bq:
        # no daemon ever claimed those jobs.
        for name in (b"bq", bytearray(b"bq"), memoryview(b"bq")):
            with self.assertRaisesRegex(InvalidError, r"a queue name given as bytes \(b'bq'\): pass a str"):
                Queue(self.server.url, name)
            with self.assertRaisesRegex(InvalidError, "a queue name given as bytes"):
                keys(name)
            with self.assertRaisesRegex(InvalidError, "a queue name given as bytes"):
                ids.check_queue_name(name)
            self.assertFalse(ids.valid_queue_name(name))
        with self.assertRaisesRegex(InvalidError, "a queue name must be a str, not int"):
            Queue(self.server.url, 7)
        with self.assertRaisesRegex(InvalidError, "a queue name must be a str, not NoneType"):
            Queue(self.server.url, None)
        self.assertEqual(self.r.keys("*"), [])

    def test_a_flow_node_whose_queue_is_bytes_is_refused_before_anything_is_sent(self):
        q = Queue(self.server.url, "flow_bytes")
        with self.assertRaisesRegex(InvalidError, "a queue name given as bytes"):
            q.enqueue_flow({"payload": "p", "children": [{"payload": "c", "queue": b"other"}]})
        self.assertEqual(self.r.keys("*"), [])

    def test_a_job_id_given_as_bytes_is_refused(self):
        q = Queue(self.server.url, "id_bytes")
        job_id = q.enqueue("p")
        for call in (lambda: q.enqueue("p", id=job_id.encode()), lambda: q.inspect(job_id.encode()),
                     lambda: q.wait(job_id.encode(), timeout=1)):
            with self.assertRaisesRegex(InvalidError, r"a job id given as bytes \(b'JOB_"):
                call()
        self.assertFalse(ids.valid_job_id(job_id.encode()))
        self.assertEqual(self.r.zcard(q.keys["pending"]), 1)


class WaitTimeouts(ServerTest):
    def wait_in_thread(self, q, job_id, timeout):
        """What wait(job_id, timeout=timeout) raised, or 'still waiting' after 5 s."""
        out = []

        def call():
            try:
                q.wait(job_id, timeout=timeout)
                out.append("returned")
            except Exception as e:  # the test looks at what it was
                out.append(e)

        t = threading.Thread(target=call, daemon=True)  # a wait that never ends dies with the server
        t.start()
        t.join(5)
        return out[0] if out else "still waiting"

    def test_a_timeout_that_is_not_a_number_of_seconds_is_refused_at_once(self):
        q = Queue(self.server.url, "wait_args")
        job_id = q.enqueue("never claimed")
        # Issue 48 row 2: the values that ended emq wait at once are refused
        # here, naming the range.
        for bad in (float("nan"), float("inf"), -1, "300", b"300", {"timeout": 300}, True, 10**10, 1e10, 9.3e15,
                    1e308):
            got = self.wait_in_thread(q, job_id, bad)
            self.assertIsInstance(got, InvalidError, "timeout=%r: %r" % (bad, got))
            self.assertIn("timeout must be seconds", str(got))
            self.assertIn("in 0..10^9, not %r" % (bad,), str(got))

    def test_a_number_or_a_timedelta_times_out(self):
        q = Queue(self.server.url, "wait_ok")
        job_id = q.enqueue("never claimed")
        for good in (0, 0.05, datetime.timedelta(milliseconds=50)):
            self.assertIsInstance(self.wait_in_thread(q, job_id, good), TimeoutError, good)


if __name__ == "__main__":
    unittest.main()

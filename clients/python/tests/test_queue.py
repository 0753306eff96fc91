"""Queue against a real valkey-server: what a producer writes is the wire's."""
import datetime
import os
import sys
import threading
import time
import unittest

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import echomq  # noqa: E402
from echomq import InvalidError, JobFailed, JobNotFound, KindError, Queue, WireError  # noqa: E402
from echomq.connect import client_from_url  # noqa: E402
from echomq.queue import keys  # noqa: E402
from echomq.scripts import Scripts  # noqa: E402
from server import Server, ServerTest  # noqa: E402


class Worker:
    """Just enough of a worker to settle one job: claim, then complete or fail."""

    def __init__(self, client, queue):
        self.s, self.k = Scripts(client), keys(queue)

    def claim(self):
        k = self.k
        r = self.s.run("claim", [k["pending"], k["active"], k["delayed"], k["meta"], k["stats"], k["row_root"]],
                       [30000, 1, 10])
        return (r[0].decode(), r[1], r[3]) if r else None

    def complete(self, job_id, epoch, result, keep_ms=60000):
        k = self.k
        return self.s.run("complete", [k["row_root"] + job_id, k["active"], k["stats"]], [job_id, epoch, keep_ms, result])

    def fail_for_good(self, job_id, epoch, error):
        k = self.k
        return self.s.run("fail", [k["row_root"] + job_id, k["active"], k["delayed"], k["pending"], k["dead"], k["stats"]],
                          [job_id, epoch, error, 1, 0, 1])


class QueueTest(ServerTest):
    def queue(self, name=None):
        return Queue(self.server.url, name or self.id().rsplit(".", 1)[-1][:64])

    def test_enqueue_writes_the_three_field_row_and_mints_an_id(self):
        q = self.queue()
        job_id = q.enqueue(b"\x00\xffbytes")
        self.assertTrue(echomq.valid_job_id(job_id))
        self.assertEqual(self.r.hgetall(q.keys["row_root"] + job_id),
                         {b"state": b"pending", b"attempts": b"0", b"payload": b"\x00\xffbytes"})
        self.assertEqual(self.r.zrange(q.keys["pending"], 0, -1, withscores=True), [(job_id.encode(), 0.0)])
        self.assertEqual(self.r.get("{emq}:version"), b"emq/1")
        self.assertIn(q.name.encode(), self.r.smembers("{emq}:queues"))

    def test_lane_at_delay_and_a_given_id(self):
        q = self.queue()
        self.assertEqual(q.enqueue("x", id="JOB_mine", lane=-7), "JOB_mine")
        self.assertEqual(self.r.zscore(q.keys["pending"], "JOB_mine"), -7)
        at = datetime.datetime(2040, 1, 1, tzinfo=datetime.timezone.utc)
        a = q.enqueue("x", at=at)
        self.assertEqual(self.r.zscore(q.keys["delayed"], a), at.timestamp() * 1000)
        before = q.server_time_ms()
        d = q.enqueue("x", delay=60, lane=3)
        due = self.r.zscore(q.keys["delayed"], d)
        self.assertTrue(before + 60000 <= due <= q.server_time_ms() + 60000)
        self.assertEqual(q.inspect(d)["lane"], 3)

    def test_a_grouped_job_waits_in_its_groups_zset_and_its_group_joins_the_rotation(self):
        q = self.queue()
        job_id = q.enqueue("x", group="cust.42", lane=2)
        self.assertEqual(self.r.hget(q.keys["row_root"] + job_id, "group"), b"cust.42")
        self.assertEqual(self.r.zcard(q.keys["pending"]), 0)
        self.assertEqual(self.r.zscore(q.keys["gq_root"] + "cust.42", job_id), 2)
        self.assertEqual(self.r.lrange(q.keys["rot"], 0, -1), [b"cust.42"])
        self.assertEqual(self.r.zscore(q.keys["gidx"], "cust.42"), 1)
        with self.assertRaises(InvalidError):
            q.enqueue("x", group="a b")

    def test_a_duplicate_enqueues_nothing(self):
        q = self.queue()
        q.enqueue("first", id="JOB_dup")
        q.enqueue("second", id="JOB_dup")
        self.assertEqual(q.inspect("JOB_dup")["payload"], b"first")

    def test_bad_input_is_refused_before_the_server(self):
        q = self.queue()
        with self.assertRaises(KindError):
            q.enqueue("x", id="task-1")
        with self.assertRaisesRegex(InvalidError, "valid job id"):
            q.enqueue("x", id="JOB_a b")
        with self.assertRaisesRegex(InvalidError, "lane"):
            q.enqueue("x", lane=1001)
        with self.assertRaisesRegex(InvalidError, "not both"):
            q.enqueue("x", at=1, delay=1)
        with self.assertRaisesRegex(InvalidError, "aware"):
            q.enqueue("x", at=datetime.datetime(2040, 1, 1))
        with self.assertRaisesRegex(InvalidError, "queue name"):
            Queue(self.server.url, "a:b")
        with self.assertRaisesRegex(InvalidError, "decode_responses"):
            Queue(redis.Redis(unix_socket_path=self.server.socket, decode_responses=True), "q")
        self.assertEqual(self.r.keys("emq:{%s}:*" % q.name), [])

    def test_inspect_shows_the_row_and_where_it_stands(self):
        q = self.queue()
        self.assertIsNone(q.inspect("JOB_none"))
        job_id = q.enqueue("p")
        w = Worker(self.r, q.name)
        _, _, epoch = w.claim()
        job = q.inspect(job_id)
        self.assertEqual((job["state"], job["attempts"], job["lease_epoch"], job["payload"]), ("active", 1, 1, b"p"))
        self.assertIn("lease_until_ms", job)
        self.assertEqual(job["minted_ms"], echomq.minted_at_ms(job_id))

    def test_wait_returns_the_result_of_a_job_settled_meanwhile(self):
        q = self.queue()
        job_id = q.enqueue("p")
        w = Worker(client_from_url(self.server.url), q.name)

        def settle():
            _, _, epoch = w.claim()
            w.complete(job_id, epoch, b"done\x00")

        t = threading.Timer(0.1, settle)
        t.start()
        self.assertEqual(q.wait(job_id, timeout=10), b"done\x00")
        t.join()

    def test_wait_raises_the_error_of_a_dead_job_not_found_and_timeout(self):
        q = self.queue()
        job_id = q.enqueue("p")
        with self.assertRaises(TimeoutError):
            q.wait(job_id, timeout=0.05)
        w = Worker(self.r, q.name)
        _, _, epoch = w.claim()
        w.fail_for_good(job_id, epoch, "bad input")
        with self.assertRaises(JobFailed) as e:
            q.wait(job_id, timeout=5)
        self.assertEqual((e.exception.error, e.exception.attempts), (b"bad input", 1))
        self.assertEqual(str(e.exception), "%s died after 1 attempt: bad input" % job_id)
        with self.assertRaises(JobNotFound):
            q.wait("JOB_none", timeout=1)

    def test_a_queue_that_keeps_events_gets_the_entries_of_what_the_client_writes(self):
        q = self.queue()
        self.r.hset(q.keys["meta"], "events", "100")
        job_id = q.enqueue("p", lane=2)
        entries = self.r.xrange(q.keys["events"])
        self.assertEqual([f for _, f in entries], [{b"event": b"pending", b"id": job_id.encode(), b"attempt": b"0"}])
        other = self.queue("no-events-here")
        other.enqueue("p")
        self.assertEqual(self.r.exists(other.keys["events"]), 0, "a queue without events has no stream")

    def test_wait_by_the_stream_blocks_without_polling_and_wakes_at_the_end(self):
        q = self.queue()
        self.r.hset(q.keys["meta"], "events", "100")
        job_id = q.enqueue("p")
        w = Worker(client_from_url(self.server.url), q.name)
        _, _, epoch = w.claim()
        before = self._calls()

        def settle():
            # The worker here passes the stream too, as every speaker must.
            k = keys(q.name)
            Scripts(client_from_url(self.server.url)).run(
                "complete", [k["row_root"] + job_id, k["active"], k["stats"], k["events"]],
                [job_id, epoch, 60000, b"done", 100])

        t = threading.Timer(1.0, settle)
        t.start()
        self.assertEqual(q.wait(job_id, timeout=10), b"done")
        t.join()
        # A second of waiting: one blocking read, and one read of the row
        # once the entry came; a poll would have read the row 10 times.
        after = self._calls()
        self.assertLessEqual(after.get("xread", 0) - before.get("xread", 0), 2)
        self.assertLessEqual(after.get("hmget", 0) - before.get("hmget", 0), 3)

    def test_wait_many_returns_each_end_and_leaves_out_the_ones_still_running(self):
        q = self.queue()
        self.r.hset(q.keys["meta"], "events", "100")
        done, dead, running = q.enqueue("a"), q.enqueue("b"), q.enqueue("c")
        w = Worker(self.r, q.name)
        for job_id in (done, dead):
            _, _, epoch = w.claim()
            if job_id == done:
                w.complete(job_id, epoch, b"ok")
            else:
                w.fail_for_good(job_id, epoch, "no")
        ends = q.wait_many([done, dead, running], timeout=0.3)
        self.assertEqual(sorted(ends), sorted([done, dead]))
        self.assertEqual((ends[done]["state"], ends[done]["result"]), ("completed", b"ok"))
        self.assertEqual((ends[dead]["state"], ends[dead]["error"], ends[dead]["attempts"]), ("dead", b"no", 1))

    def _calls(self):
        return {k.split("_", 1)[1]: v["calls"] for k, v in self.r.info("commandstats").items()}

    def test_stats_pause_and_resume(self):
        q = self.queue()
        q.enqueue("a")
        q.enqueue("b", delay=100)
        q.pause()
        s = q.stats()
        self.assertEqual((s["paused"], s["pending"], s["delayed"], s["active"], s["counters"]["claimed"]), (True, 1, 1, 0, 0))
        self.assertIsNone(Worker(self.r, q.name).claim())
        q.resume()
        self.assertIsNotNone(Worker(self.r, q.name).claim())
        s = q.stats()
        self.assertEqual((s["paused"], s["pending"], s["active"], s["counters"]["claimed"]), (False, 0, 1, 1))

    def test_a_pause_says_who_why_and_until_when_and_resume_deletes_all_four(self):
        q = self.queue()
        q.enqueue("a")
        q.pause(by="ann@host-a", reason="deploy", for_ms=3600000)
        meta = self.r.hgetall(q.keys["meta"])
        self.assertEqual((meta[b"paused"], meta[b"paused_by"], meta[b"paused_reason"]), (b"1", b"ann@host-a", b"deploy"))
        self.assertAlmostEqual(int(meta[b"paused_until"]) - q.server_time_ms(), 3600000, delta=5000)
        self.assertEqual(q.stats()["pause"]["by"], "ann@host-a")
        self.assertIsNone(Worker(self.r, q.name).claim())
        q.pause(by="bob")  # again: no reason, no end, none of the old ones
        self.assertEqual(self.r.hgetall(q.keys["meta"]), {b"paused": b"1", b"paused_by": b"bob"})
        with self.assertRaises(InvalidError):
            q.pause(reason="r" * 257)
        q.resume()
        self.assertEqual(self.r.hgetall(q.keys["meta"]), {})
        self.assertIsNotNone(Worker(self.r, q.name).claim())

    def test_a_pause_for_a_moment_ends_at_the_next_claim_by_itself(self):
        q = self.queue()
        job_id = q.enqueue("a")
        q.pause(reason="blip", for_ms=300)
        self.assertIsNone(Worker(self.r, q.name).claim())
        until = int(self.r.hget(q.keys["meta"], "paused_until"))
        while q.server_time_ms() < until:
            time.sleep(0.02)
        self.assertEqual(Worker(self.r, q.name).claim()[0], job_id)
        self.assertEqual(self.r.hgetall(q.keys["meta"]), {})

    def test_a_flow_enqueues_each_parent_before_its_children(self):
        q = self.queue("flowpy")
        ids = q.enqueue_flow({"payload": "report", "on_child_failure": "ignore", "children": [
            {"payload": "a"},
            {"payload": "b", "queue": "flowpy-other", "lane": 2},
            {"payload": "sub", "children": [{"payload": "leaf"}]},
        ]})
        root, a, b, sub = ids["id"], ids["children"][0], ids["children"][1], ids["children"][2]
        leaf = sub["children"][0]
        row = q.inspect(root)
        self.assertEqual((row["state"], row["children"], row["on_child_failure"]), ("waiting", 3, "ignore"))
        self.assertEqual(self.r.smembers("emq:{flowpy}:deps:" + root),
                         {("flowpy:" + a["id"]).encode(), ("flowpy-other:" + b["id"]).encode(),
                          ("flowpy:" + sub["id"]).encode()})
        other = Queue(self.server.url, "flowpy-other").inspect(b["id"])
        self.assertEqual((other["state"], other["lane"], other["parent"]), ("pending", 2, "flowpy:" + root))
        self.assertEqual(q.inspect(sub["id"])["parent"], "flowpy:" + root)
        self.assertEqual(q.inspect(leaf["id"])["parent"], "flowpy:" + sub["id"])
        self.assertEqual(self.r.hget("emq:{flowpy}:meta", "flows"), b"1")
        with self.assertRaisesRegex(InvalidError, "twice"):
            q.enqueue_flow({"payload": "p", "children": [{"payload": "a", "id": "JOB_x"}, {"payload": "b", "id": "JOB_x"}]})

    def test_a_flows_nodes_each_take_their_own_group(self):
        q = self.queue("flowgpy")
        ids = q.enqueue_flow({"payload": "report", "group": "cust.7", "children": [
            {"payload": "a", "group": "cust.42", "lane": 3},
            {"payload": "b"},
        ]})
        root, a, b = ids["id"], ids["children"][0]["id"], ids["children"][1]["id"]
        k = q.keys
        # The grouped child waits in its group's turn, the plain one in pending.
        self.assertEqual(self.r.zscore(k["gq_root"] + "cust.42", a), 3)
        self.assertEqual(self.r.zrange(k["pending"], 0, -1), [b.encode()])
        self.assertEqual(self.r.lrange(k["rot"], 0, -1), [b"cust.42"])
        self.assertEqual(self.r.hget(k["row_root"] + a, "parent"), ("flowgpy:" + root).encode())
        # The parent carries its group in its row; it waits, in no group's zset.
        self.assertEqual(self.r.hget(k["row_root"] + root, "group"), b"cust.7")
        self.assertEqual(q.inspect(root)["state"], "waiting")
        self.assertEqual(self.r.exists(k["gq_root"] + "cust.7"), 0)
        # A root without children is a plain grouped enqueue.
        lone = q.enqueue_flow({"payload": "x", "group": "cust.9"})["id"]
        self.assertEqual(self.r.zscore(k["gq_root"] + "cust.9", lone), 0)
        with self.assertRaisesRegex(InvalidError, r"root\.children\[0\].*group"):
            q.enqueue_flow({"payload": "p", "children": [{"payload": "a", "group": "a b"}]})

    def test_a_unix_socket_url(self):
        q = Queue("unix://%s?db=0" % self.server.socket, "unixq")
        job_id = q.enqueue("by socket")
        self.assertEqual(self.r.hget(q.keys["row_root"] + job_id, "payload"), b"by socket")

    def test_a_script_cache_flushed_under_the_queue_is_filled_again(self):
        q = self.queue()
        q.enqueue("a")
        self.r.script_flush()
        q.enqueue("b")
        self.assertEqual(q.stats()["pending"], 2)

    def test_another_wire_is_refused(self):
        other = Server()
        try:
            other.client().set("{emq}:version", "emq/2")
            with self.assertRaisesRegex(WireError, "EMQWIRE"):
                Queue(other.url, "q").enqueue("x")
        finally:
            other.stop()


class Urls(unittest.TestCase):
    def test_the_url_forms_of_emq(self):
        c = client_from_url("valkey://user:p%40ss@db.example:6380/2").connection_pool.connection_kwargs
        self.assertEqual((c["host"], c["port"], c["db"], c["username"], c["password"]),
                         ("db.example", 6380, 2, "user", "p@ss"))
        c = client_from_url("redis://h").connection_pool.connection_kwargs
        self.assertEqual((c["host"], c["port"], c["db"]), ("h", 6379, 0))
        c = client_from_url("unix:///run/valkey.sock?db=3").connection_pool.connection_kwargs
        self.assertEqual((c["path"], c["db"]), ("/run/valkey.sock", 3))

    def test_tls_always_verifies_the_server(self):
        for url in ("valkeys://h:6390/0", "rediss://h"):
            c = client_from_url(url, ssl_ca_certs="/ca.pem").connection_pool.connection_kwargs
            self.assertEqual((c["ssl_cert_reqs"], c["ssl_check_hostname"], c["ssl_ca_certs"]), ("required", True, "/ca.pem"))

    def test_bad_urls_say_what_is_wrong_and_never_the_password(self):
        for url, says in (("http://h", "scheme"), ("valkey://h/x", "db number"), ("unix://?db=1", "socket path"),
                          ("valkey://u:secret@h:99999", "port")):
            with self.assertRaisesRegex(InvalidError, says) as e:
                client_from_url(url)
            self.assertNotIn("secret", str(e.exception))


if __name__ == "__main__":
    unittest.main()

"""echomq.daemons against a real valkey-server: the fleet registry read as
PROTOCOL.md ("Daemons: who runs what") writes it; ghosts are left out."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import echomq  # noqa: E402
from server import ServerTest  # noqa: E402


class FleetTest(ServerTest):
    def beat(self, did, jobs=()):
        """One beat, as emqd writes it."""
        sec, usec = self.r.time()
        now = sec * 1000 + usec // 1000
        p = self.r.pipeline(transaction=True)
        p.hset("{emq}:daemon:" + did, mapping={
            "host": "py-host", "pid": "77", "version": "0.1.0", "started_ms": str(now - 1000),
            "beat_ms": str(now), "state": "quiet", "queues": json.dumps(["emails", "thumbs"]), "slots": "9",
            "busy": str(len(jobs)), "executor": "native", "ack": "quiet:%d" % now})
        p.pexpire("{emq}:daemon:" + did, 30000)
        p.delete("{emq}:daemon:" + did + ":work")
        for queue, job_id, attempt in jobs:
            p.hset("{emq}:daemon:" + did + ":work", queue + ":" + job_id,
                   json.dumps({"queue": queue, "id": job_id, "attempt": attempt, "started_ms": now - 500}))
        p.zadd("{emq}:daemons", {did: now})
        p.execute()
        return now

    def test_lists_the_live_with_their_jobs_and_leaves_ghosts_out(self):
        self.r.flushall()
        now = self.beat("py-host-77-0a1b2c", [("thumbs", "JOB_t1", 3)])
        self.r.zadd("{emq}:daemons", {"gone-1-ffffff": now})  # its hash expired: a ghost
        (d,) = echomq.daemons(self.server.url, jobs=True)
        self.assertEqual((d["id"], d["host"], d["pid"], d["state"], d["queues"], d["slots"], d["busy"]),
                         ("py-host-77-0a1b2c", "py-host", 77, "quiet", ["emails", "thumbs"], 9, 1))
        self.assertEqual(d["ack"], {"signal": "quiet", "at_ms": now})
        self.assertEqual([(j["queue"], j["id"], j["attempt"]) for j in d["jobs"]], [("thumbs", "JOB_t1", 3)])
        self.assertNotIn("jobs", echomq.daemons(self.r)[0])
        self.assertEqual((d["prefetched"], d["jobs"][0]["prefetched"]), (0, False), "a beat without the field")

    def test_jobs_claimed_ahead_are_apart_from_busy(self):
        now = self.beat("py-host-77-0d0e0f", [("thumbs", "JOB_run", 1)])
        self.r.hset("{emq}:daemon:py-host-77-0d0e0f", mapping={"slots": "1", "busy": "1", "prefetched": "2"})
        for job_id in ("JOB_ahead1", "JOB_ahead2"):
            self.r.hset("{emq}:daemon:py-host-77-0d0e0f:work", "thumbs:" + job_id, json.dumps(
                {"queue": "thumbs", "id": job_id, "attempt": 1, "started_ms": now - 900, "prefetched": True}))
        (d,) = [d for d in echomq.daemons(self.server.url, jobs=True) if d["id"] == "py-host-77-0d0e0f"]
        self.assertEqual((d["slots"], d["busy"], d["prefetched"]), (1, 1, 2))
        self.assertEqual(sorted((j["id"], j["prefetched"]) for j in d["jobs"]),
                         [("JOB_ahead1", True), ("JOB_ahead2", True), ("JOB_run", False)])


if __name__ == "__main__":
    unittest.main()

"""A queue's events (PROTOCOL.md, "Events"): which queues keep a stream, the
stream passed to every transition that writes a job's state, and waiting
for jobs by the stream (by polling where a queue keeps none)."""
import time

import redis

from .keys import meta_key, stream_key
from .scripts import takes_stream

MAX_LENGTH = 10_000_000
FINAL_EVENTS = (b"completed", b"dead", b"removed")
_FRESH_S = 1.0
_FIRST_POLL, _MAX_POLL = 0.005, 0.5
# The most one XREAD blocks: below the client's socket timeout, and past it
# the rows are read once more (a speaker that did not pass the stream
# strands no waiter for longer).
_RECHECK_S = 20.0


def decode_length(raw):
    """meta's events as read: its length, 0 when absent or not an integer in 1..10^7."""
    if raw is None:
        return 0
    text = raw.decode() if isinstance(raw, bytes) else str(raw)
    if not text.isdigit() or len(text) > 8:
        return 0
    n = int(text)
    return n if 1 <= n <= MAX_LENGTH else 0


class EventsBook:
    """Each queue's events length as last read from its meta (once a second at most)."""

    def __init__(self, client):
        self.client = client
        self._known = {}

    def length(self, queue):
        known = self._known.get(queue)
        if known is not None and time.monotonic() - known[1] < _FRESH_S:
            return known[0]
        n = decode_length(self.client.hget(meta_key(queue), "events"))
        self._known[queue] = (n, time.monotonic())
        return n

    def passed(self, script, queue, keys, args):
        """keys and args, with the stream and its length added when the queue keeps events."""
        n = self.length(queue) if takes_stream(script) else 0
        if n == 0:
            return keys, args
        return list(keys) + [stream_key(queue)], list(args) + [n]


def _order(entry_id):
    ms, _, seq = (entry_id.decode() if isinstance(entry_id, bytes) else entry_id).partition("-")
    return int(ms or 0), int(seq or 0)


class Waiter:
    """Waits for jobs of one queue to end. `read_row(id)` gives the row's
    (state, result, error, attempts); the caller decides what an end means."""

    def __init__(self, client, queue, row_root):
        self.client, self.queue, self.row_root = client, queue, row_root
        self.stream = stream_key(queue)
        self.commands = 0

    def _rows(self, ids):
        self.commands += len(ids)
        with self.client.pipeline(transaction=False) as p:
            for job_id in ids:
                p.hmget(self.row_root + job_id, "state", "result", "error", "attempts")
            return dict(zip(ids, p.execute()))

    def _start(self, ids):
        """The rows and the stream's last entry id at one instant (the id read first
        where a transaction is not to be had: whatever ends a job after it is later)."""
        meta = meta_key(self.queue)
        self.commands += len(ids) + 2
        transaction = not isinstance(self.client, redis.RedisCluster)
        with self.client.pipeline(transaction=transaction) as p:
            p.hget(meta, "events")
            p.xrevrange(self.stream, "+", "-", count=1)
            for job_id in ids:
                p.hmget(self.row_root + job_id, "state", "result", "error", "attempts")
            r = p.execute()
        last = r[1][0][0] if r[1] else b"0-0"
        return decode_length(r[0]) > 0, last, dict(zip(ids, r[2:]))

    def wait(self, ids, ended, timeout=None):
        """Rows of each id once ended(row) says so; ids still open at timeout are left out."""
        until = None if timeout is None else time.monotonic() + timeout
        keeps_events, last, rows = self._start(ids)
        done = {i: row for i, row in rows.items() if ended(row)}
        open_ids = [i for i in ids if i not in done]
        step = _FIRST_POLL
        while open_ids:
            rest = None if until is None else until - time.monotonic()
            if rest is not None and rest <= 0:
                break
            if not keeps_events:
                time.sleep(step if rest is None else min(step, rest))
                step = min(step * 2, _MAX_POLL)
                named = open_ids
            else:
                block = _RECHECK_S if rest is None else min(rest, _RECHECK_S)
                named, last = self._read(open_ids, last, block)
            for job_id, row in self._rows(named).items() if named else ():
                if ended(row):
                    done[job_id] = row
            open_ids = [i for i in open_ids if i not in done]
        return done

    def _read(self, open_ids, last, block_s):
        """One blocking read from last: the ids whose rows to read again, and the new position."""
        self.commands += 2
        with self.client.pipeline(transaction=False) as p:
            p.xread({self.stream: last}, count=1000, block=max(1, int(block_s * 1000)))
            p.xrange(self.stream, "-", "+", count=1)
            got, first = p.execute()
        if not got:
            return list(open_ids), last  # a block ran out: the rows once more
        entries = got[0][1]
        trimmed_past = bool(first) and _order(first[0][0]) > _order(last)
        last = entries[-1][0] if entries else last
        if trimmed_past:
            return list(open_ids), last
        wanted = set(open_ids)
        named = []
        for _, fields in entries:
            job_id = fields.get(b"id", b"").decode("utf-8", "replace")
            if job_id in wanted and fields.get(b"event") in FINAL_EVENTS and job_id not in named:
                named.append(job_id)
        return named, last

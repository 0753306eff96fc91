"""A producer's view of one queue: enqueue, flows, stats, inspect, wait, pause."""
import datetime
import re

import redis

from . import flows, ids, values
from .connect import client_from_url, handshake
from .errors import InvalidError, JobFailed, JobNotFound
from .events import EventsBook, Waiter
from .keys import QUEUES_KEY, keys
from .options import enqueued, group_option, job_options
from .scripts import Scripts
from .tracing import sending
COUNTERS = ("claimed", "completed", "retried", "dead", "reaped", "released", "duplicates", "replaced")
DEPTHS = ("pending", "active", "delayed", "dead", "waiting")
_INTEGER = re.compile(rb"-?[0-9]+")
PAUSE_FIELDS = ("paused", "paused_by", "paused_reason", "paused_until")
_SERVER_INTEGER = re.compile(rb"0|[1-9][0-9]{0,15}")
MAX_PAUSED_UNTIL = 10**15


def _text(v):
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


def _pause(paused, by, reason, until, server_time_ms):
    """A pause's who, why and end, as `emq stats --json` shows them (None when not paused).

    The server's clock is asked only for a pause with an end (TIME is no
    pipeline command on a cluster)."""
    if paused != b"1":
        return None
    until_ms = int(until) if until is not None and _SERVER_INTEGER.fullmatch(until) else None
    if until_ms is not None and until_ms > MAX_PAUSED_UNTIL:
        until_ms = None
    broken = _text(until[:40]) if until is not None and until_ms is None else None
    return {"by": _text(by) or None, "reason": _text(reason) or None, "until_ms": until_ms,
            "ended": until_ms is not None and until_ms <= server_time_ms(), "broken_until": broken}


def _counter(v):
    """A stats field: absent is 0, anything but an integer None."""
    if v is None:
        return 0
    return int(v) if _INTEGER.fullmatch(v) else None


class Queue:
    """Queue(url_or_client, name): a URL as emq takes it, or a redis-py client."""

    def __init__(self, url_or_client, name, **connect):
        ids.check_queue_name(name)
        self.name = name
        self.client = client_from_url(url_or_client, **connect) if isinstance(url_or_client, str) else url_or_client
        pool = getattr(self.client, "connection_pool", None)
        if pool is not None and pool.connection_kwargs.get("decode_responses"):
            raise InvalidError("the client decodes replies (decode_responses=True): payloads are bytes, "
                               "so pass a client made without it")
        self.keys = keys(name)
        self.scripts = Scripts(self.client)
        self.events = EventsBook(self.client)
        self._ready = False

    def _ensure(self):
        if not self._ready:
            handshake(self.client)
            self.client.sadd(QUEUES_KEY, self.name)
            self._ready = True

    def _run(self, script, queue, keys, args):
        """A transition, with the queue's events stream when it keeps events."""
        keys, args = self.events.passed(script, queue, keys, args)
        return self.scripts.run(script, keys, args)

    def server_time_ms(self):
        sec, usec = self.client.time()
        return int(sec) * 1000 + int(usec) // 1000

    def _due_ms(self, at, delay):
        if at is not None and delay is not None:
            raise InvalidError("give at or delay, not both")
        if at is not None:
            if isinstance(at, datetime.datetime):
                if at.tzinfo is None:
                    raise InvalidError("at must be an aware datetime (with a tzinfo), or epoch milliseconds")
                return int(at.timestamp() * 1000)
            if isinstance(at, int) and not isinstance(at, bool) and 0 <= at <= 10**15:
                return at
            raise InvalidError("at must be an aware datetime or epoch milliseconds in 0..10^15")
        if delay is not None:
            seconds = values.seconds(delay, "delay")
            # Due times are the server's clock, never ours.
            return self.server_time_ms() + int(seconds * 1000)
        return None

    def enqueue(self, payload, *, id=None, lane=0, at=None, delay=None, unique=None, unique_mode=None,
                unique_for=None, traceparent=None, tracestate=None, group=None):
        """Enqueues a job; returns its id, an Enqueued (a str).

        A duplicate id enqueues nothing and returns the id all the same.
        With unique=KEY at most one live job of the queue holds KEY: a
        duplicate enqueues nothing and returns the id of the job holding
        it (.outcome "duplicate", .state its state); unique_mode is
        "finished" (the default: held until it completes or dies),
        "started" (until first claimed), "window" (unique_for seconds, or
        a timedelta, whatever the job does) or "replace" (a pending or
        delayed holder takes this payload and due time: .outcome
        "replaced").

        With group=G the job belongs to group G (a tenant): a group-aware
        claim (emqd's) serves the queue's groups in turn, by their weights
        (docs/protocol.md, "Groups"). This package's own claim serves
        ungrouped jobs only, as every emq/1 speaker's.

        traceparent (and tracestate): the W3C trace context the job joins;
        emqd's span for it is that context's child. Without one, when the
        package opentelemetry is installed, a PRODUCER span "send <queue>"
        opens under the current span and its context is written.
        """
        return sending(self.name, traceparent, tracestate,
                       lambda tp, ts: self._enqueue(payload, id, lane, at, delay, unique, unique_mode, unique_for, tp, ts,
                                                   group))

    def _enqueue(self, payload, id, lane, at, delay, unique, unique_mode, unique_for, traceparent, tracestate, group):
        job_id = ids.mint_job_id() if id is None else id
        ids.check_job_id(job_id)
        lane = values.lane(lane)
        body = values.payload(payload)
        options = job_options(unique, unique_mode, unique_for, traceparent, tracestate) + group_option(group)
        self._ensure()
        due = self._due_ms(at, delay)
        row = self.keys["row_root"] + job_id
        if options:
            keys, args = [row, self.keys["pending"]], [job_id, body] + (["lane", lane] if lane else [])
            if due is not None:
                keys.append(self.keys["delayed"])
                args += ["due_ms", due]
            if unique is not None:
                keys.append(self.keys["uniq_root"] + unique)
            if group is not None:
                keys += [self.keys["gq_root"] + group, self.keys["grp_root"] + group, self.keys["gact_root"] + group,
                         self.keys["gidx"], self.keys["rot"], self.keys["groups"]]
            reply = self._run("enqueue", self.name, keys, args + options)
        elif due is not None:
            reply = self._run("enqueue_at", self.name, [row, self.keys["delayed"]], [job_id, body, due, lane])
        elif lane != 0:
            reply = self._run("enqueue_lane", self.name, [row, self.keys["pending"]], [job_id, body, lane])
        else:
            reply = self._run("enqueue", self.name, [row, self.keys["pending"]], [job_id, body])
        return enqueued(job_id, reply)

    def enqueue_flow(self, tree):
        """Enqueues a tree of jobs, each parent before its children.

        A node is a dict: payload, and optionally queue (default this one),
        id, lane, on_child_failure (fail, wait, ignore; for a node with
        children) and children (a list of nodes). A node without children
        is a plain job (a child of its parent, if it has one). Returns the
        same shape with every node's queue and id: {"queue", "id",
        "children": [...]}. The whole tree is checked first (InvalidError
        naming the node: a job given twice, more than 64 levels, ...);
        a refusal by the server half-way raises flows.FlowIncomplete.

        A node's traceparent and tracestate are its trace context; a node
        without one carries its parent's, so the flow is one trace. A root
        without one gets the caller's, as enqueue does.

        A node's group (as enqueue's group=) is its own: a child or a root
        waits in its group's turn; a parent carries its group and takes its
        turn there once its children have released it.
        """
        if isinstance(tree, dict) and tree.get("traceparent") is None:
            return sending(tree.get("queue") or self.name, None, None,
                           lambda tp, ts: self._enqueue_flow(dict(tree, traceparent=tp, tracestate=ts) if tp else tree))
        return self._enqueue_flow(tree)

    def _enqueue_flow(self, tree):
        planned = flows.plan(self.client, tree, self.name)
        self._ensure()
        others, level = set(), [planned]
        while level:
            others.update(n["queue"] for n in level if n["queue"] != self.name)
            level = [c for n in level for c in n["children"]]
        if others:
            self.client.sadd(QUEUES_KEY, *sorted(others))
        flows.enqueue(self._run, planned)
        return flows.ids_of(planned)

    def stats(self):
        """The queue as one object of `emq stats --json` (waiting: parents waiting for children).

        The dead depth is "dead", the dead counter counters["dead"]. A
        counter another writer broke is None, as emq shows it (null).
        """
        k = self.keys
        with self.client.pipeline(transaction=False) as p:
            for s in DEPTHS:
                p.zcard(k[s])
            p.hmget(k["meta"], *PAUSE_FIELDS)
            p.hmget(k["stats"], *COUNTERS)
            r = p.execute()
        paused, by, reason, until = r[5]
        out = {"queue": self.name, "paused": paused == b"1"}
        out.update(zip(DEPTHS[:4], r[:4]))
        out["counters"] = {name: _counter(v) for name, v in zip(COUNTERS, r[6])}
        out["pause"] = _pause(paused, by, reason, until, self.server_time_ms)
        out["waiting"] = r[4]
        return out

    def inspect(self, job_id):
        """The job's row (payload, result, error as bytes; the rest as text) and where it stands, or None."""
        ids.check_wire_gate(job_id)
        k = self.keys
        with self.client.pipeline(transaction=False) as p:
            p.hgetall(k["row_root"] + job_id)
            for s in ("delayed", "active", "dead", "waiting"):
                p.zscore(k[s], job_id)
            r = p.execute()
        if not r[0]:
            return None
        row = {_text(f): (v if f in (b"payload", b"result", b"error") else _text(v)) for f, v in r[0].items()}
        out = {"queue": self.name, "id": job_id, "state": row.get("state"), "attempts": 0, "lease_epoch": 0,
               "failures": 0, "lane": 0, "payload": b"", "result": None, "error": None}
        out.update(row)
        for f in ("attempts", "lease_epoch", "failures", "lane", "children"):
            if isinstance(out.get(f), str) and out[f].lstrip("-").isdigit():
                out[f] = int(out[f])
        for name, score in zip(("due_ms", "lease_until_ms", "died_ms", "waiting_since_ms"), r[1:]):
            if score is not None:
                out[name] = int(score)
        minted = ids.minted_at_ms(job_id)
        if minted is not None:
            out["minted_ms"] = minted
        return out

    def wait(self, job_id, timeout=None):
        """Waits for the job to end: its result (bytes) when it completed.

        By the queue's events stream when it keeps events (no polling), by
        polling otherwise. Raises JobFailed when it died, JobNotFound when
        there is no such job, TimeoutError when timeout seconds (a number or
        a timedelta; None waits for ever) pass first. A row deleted on
        completion (a queue that keeps no completed rows) returns None.
        """
        ids.check_wire_gate(job_id)
        timeout = None if timeout is None else values.seconds(timeout, "timeout")
        state = self.client.hget(self.keys["row_root"] + job_id, "state")
        if state is None:
            raise JobNotFound("no job %s in queue %s" % (job_id, self.name))
        ends = self.wait_many([job_id], timeout)
        if job_id not in ends:
            state = self.client.hget(self.keys["row_root"] + job_id, "state") or b"gone"
            raise TimeoutError("%s is still %s after %s s" % (job_id, state.decode(), timeout))
        end = ends[job_id]
        if end["state"] == "dead":
            raise JobFailed(job_id, end["error"] or b"", end["attempts"])
        return end["result"] if end["state"] == "completed" else None

    def wait_many(self, job_ids, timeout=None):
        """Waits for many jobs at once, as wait does: {id: end} for each that
        ended within timeout seconds (the others are left out), an end being
        {"state": "completed"|"dead"|"gone", "result", "error", "attempts"}."""
        job_ids = list(dict.fromkeys(job_ids))
        timeout = None if timeout is None else values.seconds(timeout, "timeout")
        for job_id in job_ids:
            ids.check_wire_gate(job_id)
        waiter = Waiter(self.client, self.name, self.keys["row_root"])
        rows = waiter.wait(job_ids, lambda row: row[0] in (None, b"completed", b"dead"), timeout)
        out = {}
        for job_id, (state, result, error, attempts) in rows.items():
            out[job_id] = {"state": "gone" if state is None else state.decode(), "result": result,
                           "error": error, "attempts": int(attempts) if attempts and attempts.isdigit() else 0}
        return out

    def pause(self, *, by=None, reason=None, for_ms=None):
        """Stops claims; by (<= 64 bytes) and reason (<= 256) say who and why,
        for_ms ends it by itself that long after now (the server's clock)."""
        fields = {"paused": "1", "paused_by": by or "", "paused_reason": reason or "", "paused_until": ""}
        if len(fields["paused_by"].encode()) > 64 or len(fields["paused_reason"].encode()) > 256:
            raise InvalidError("pause: by is at most 64 bytes, reason at most 256")
        if for_ms is not None:
            if not isinstance(for_ms, int) or for_ms < 1:
                raise InvalidError("pause: for_ms must be a positive integer")
            fields["paused_until"] = str(self.server_time_ms() + for_ms)
        # The old fields go first: between the two the queue is at most
        # paused with no end, never lifted by an earlier pause's end.
        gone = [f for f, v in fields.items() if v == ""]
        with self.client.pipeline(transaction=False) as p:
            if gone:
                p.hdel(self.keys["meta"], *gone)
            p.hset(self.keys["meta"], mapping={f: v for f, v in fields.items() if v != ""})
            p.execute()

    def resume(self):
        self.client.hdel(self.keys["meta"], *PAUSE_FIELDS)

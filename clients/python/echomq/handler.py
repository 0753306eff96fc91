"""Handler helpers for emqd (docs/handlers.md): the loop, so a handler is one function.

    from echomq import handler

    def resize(payload, job):          # payload: bytes; job: id, queue, attempt, deadline_ms, children
        if not payload:
            raise handler.Permanent("empty payload")   # to the dead set at once
        job.progress("50%")            # how far it got: text, or anything json.dumps takes
        return payload.upper()         # bytes, str, None, or anything json.dumps takes

    handler.pool(resize)               # a pool handler; handler.exec(resize) for exec

The function may take the payload alone. Any other exception fails the job
for a retry, with its text as the error. A parent in a flow finds its
children's outcomes in job.children.
"""
import base64
import inspect
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Optional, Tuple

EXIT_PERMANENT = 65  # EX_DATAERR: emqd's default permanent_exit_codes


class Permanent(Exception):
    """Raise it to send the job to the dead set at once, with its text as the error."""


@dataclass(frozen=True)
class Child:
    """A parent's child as it finished: "completed" with its result, or "dead" with its error (bytes)."""
    queue: str
    id: str
    outcome: str
    result: Optional[bytes] = None
    error: Optional[bytes] = None


@dataclass(frozen=True)
class Job:
    id: str
    queue: str
    attempt: int
    deadline_ms: int
    # A parent's children (flows), in <queue>:<id> order; empty for any other job.
    children: Tuple[Child, ...] = ()
    report: object = field(default=None, repr=False, compare=False)

    def progress(self, value):
        """Tells emqd how far the job got, as often as you like (it stores at
        most 4 a second, the latest winning): a str as it is, any other value
        as its JSON. Quietly does nothing where emqd does not listen."""
        if self.report is not None:
            self.report(value)


def _bytes_of(entry, name):
    if name + "_b64" in entry:
        return base64.b64decode(entry[name + "_b64"])
    return entry[name].encode() if name in entry else None


def _children(entries):
    """emqd's children array (docs/handlers.md) as Child values."""
    return tuple(Child(e["queue"], e["id"], e["outcome"], _bytes_of(e, "result"), _bytes_of(e, "error"))
                 for e in entries or ())


def _children_file(path):
    """An exec parent's children, from the file emqd names in EMQ_CHILDREN_FILE."""
    if not path:
        return ()
    with open(path, "rb") as f:
        return _children(json.load(f))


def _caller(fn):
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):
        params = [None, None]
    takes_job = len(params) >= 2 or any(p is not None and p.kind == p.VAR_POSITIONAL for p in params)
    return (lambda payload, job: fn(payload, job)) if takes_job else (lambda payload, job: fn(payload))


def _result_bytes(value):
    if value is None:
        return b""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    return json.dumps(value).encode()


def _error_text(e):
    return str(e) or type(e).__name__


def answer(call, frame, report=None):
    """The reply object for one frame (a parsed stdin line); report(job_id, value) sends a progress line."""
    payload = base64.b64decode(frame["payload_b64"]) if "payload_b64" in frame else frame.get("payload", "").encode()
    job_id = frame["id"]
    job = Job(job_id, frame.get("queue", ""), int(frame.get("attempt", 1)), int(frame.get("deadline_ms", 0)),
              _children(frame.get("children")), None if report is None else (lambda value: report(job_id, value)))
    try:
        result = _result_bytes(call(payload, job))
    except Permanent as e:
        return {"id": job.id, "ok": False, "error": _error_text(e), "permanent": True}
    except Exception as e:  # a bug in the handler fails this job, not the process
        print("job %s: %s: %s" % (job.id, type(e).__name__, e), file=sys.stderr, flush=True)
        return {"id": job.id, "ok": False, "error": _error_text(e), "permanent": False}
    try:
        return {"id": job.id, "ok": True, "result": result.decode("utf-8")}
    except UnicodeDecodeError:
        return {"id": job.id, "ok": True, "result_b64": base64.b64encode(result).decode("ascii")}


def pool(fn, stdin=None, stdout=None):
    """Runs a pool handler: one NDJSON frame in, one reply out, until stdin ends."""
    call = _caller(fn)
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    def write(obj):
        stdout.write(json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n")
        stdout.flush()

    for line in stdin:
        if not line.strip():
            continue
        write(answer(call, json.loads(line), lambda job_id, value: write({"id": job_id, "progress": value})))


def _progress_fd(fd):
    """Writes each report as one line to EMQ_PROGRESS_FD, when emqd gave one."""
    if not fd or not fd.isdigit():
        return None

    def report(value):
        text = value if isinstance(value, str) else json.dumps(value)
        try:
            os.write(int(fd), (" ".join(text.splitlines()) + "\n").encode("utf-8"))
        except OSError:
            pass  # emqd stopped listening: the job goes on

    return report


def exec(fn):  # noqa: A001 - the handler kind's name
    """Runs an exec handler: the payload from stdin, the result to stdout; exits 0, 65 (permanent) or 1."""
    call = _caller(fn)
    payload = sys.stdin.buffer.read()
    env = os.environ
    try:
        # A parent must not run without its children: an unreadable file fails it for a retry.
        job = Job(env.get("EMQ_JOB_ID", ""), env.get("EMQ_QUEUE", ""), int(env.get("EMQ_ATTEMPT", "1") or 1),
                  int(env.get("EMQ_DEADLINE_MS", "0") or 0), _children_file(env.get("EMQ_CHILDREN_FILE")),
                  _progress_fd(env.get("EMQ_PROGRESS_FD")))
        result = _result_bytes(call(payload, job))
    except Permanent as e:
        print(_error_text(e), file=sys.stderr, flush=True)
        sys.exit(EXIT_PERMANENT)
    except Exception as e:
        print("%s: %s" % (type(e).__name__, _error_text(e)), file=sys.stderr, flush=True)
        sys.exit(1)
    sys.stdout.buffer.write(result)
    sys.stdout.buffer.flush()
    sys.exit(0)

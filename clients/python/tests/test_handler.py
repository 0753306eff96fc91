"""The handler helpers, run as emqd runs them: a child process, frames on stdin."""
import base64
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

HANDLER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, %r)
    from echomq import handler

    def work(payload, job):
        if payload == b"bad":
            raise handler.Permanent("bad input: nothing to do")
        if payload == b"flaky":
            raise ConnectionError("upstream down")
        if payload == b"json":
            return {"attempt": job.attempt, "queue": job.queue}
        if payload == b"none":
            return None
        if payload == b"progress":
            job.progress("half")
            job.progress({"done": 2})
            return "reported"
        if payload == b"children":
            return [[c.queue, c.id, c.outcome, c.result and c.result.hex(), c.error and c.error.hex()]
                    for c in job.children]
        return payload.upper()

    handler.%s(work)
""")


def run(kind, stdin, env=None):
    return subprocess.run([sys.executable, "-c", HANDLER % (PACKAGE, kind)], input=stdin, capture_output=True,
                          timeout=30, env=dict(os.environ, **(env or {})))


# A parent's children as emqd gives them (docs/handlers.md), and as the
# handler above sees them: bytes shown in hex.
CHILDREN = [{"queue": "thumbs", "id": "JOB_c1", "outcome": "completed", "result": "r1"},
            {"queue": "thumbs", "id": "JOB_c2", "outcome": "dead", "error_b64": base64.b64encode(b"\xffbad").decode()},
            {"queue": "pdfs", "id": "JOB_c3", "outcome": "completed", "result_b64": base64.b64encode(b"\x00").decode()}]
SEEN = [["thumbs", "JOB_c1", "completed", b"r1".hex(), None], ["thumbs", "JOB_c2", "dead", None, b"\xffbad".hex()],
        ["pdfs", "JOB_c3", "completed", "00", None]]


def frame(job_id, payload, children=None):
    f = {"id": job_id, "queue": "q", "attempt": 2, "deadline_ms": 0}
    if children is not None:
        f["children"] = children
    try:
        f["payload"] = payload.decode("utf-8")
    except UnicodeDecodeError:
        f["payload_b64"] = base64.b64encode(payload).decode()
    return json.dumps(f).encode() + b"\n"


class Pool(unittest.TestCase):
    def test_one_reply_line_per_frame_in_order(self):
        frames = [(b"JOB_1", b"hello"), (b"JOB_2", b"bad"), (b"JOB_3", b"flaky"), (b"JOB_4", b"\xff\x00a"),
                  (b"JOB_5", b"json"), (b"JOB_6", b"none")]
        p = run("pool", b"".join(frame(i.decode(), data) for i, data in frames))
        self.assertEqual(p.returncode, 0, p.stderr)
        replies = [json.loads(line) for line in p.stdout.splitlines()]
        self.assertEqual(replies, [
            {"id": "JOB_1", "ok": True, "result": "HELLO"},
            {"id": "JOB_2", "ok": False, "error": "bad input: nothing to do", "permanent": True},
            {"id": "JOB_3", "ok": False, "error": "upstream down", "permanent": False},
            {"id": "JOB_4", "ok": True, "result_b64": base64.b64encode(b"\xff\x00A").decode()},
            {"id": "JOB_5", "ok": True, "result": json.dumps({"attempt": 2, "queue": "q"})},
            {"id": "JOB_6", "ok": True, "result": ""},
        ])

        self.assertIn(b"JOB_3: ConnectionError: upstream down", p.stderr)

    def test_progress_lines_come_before_the_answer(self):
        p = run("pool", frame("JOB_7", b"progress"))
        self.assertEqual([json.loads(line) for line in p.stdout.splitlines()], [
            {"id": "JOB_7", "progress": "half"},
            {"id": "JOB_7", "progress": {"done": 2}},
            {"id": "JOB_7", "ok": True, "result": "reported"},
        ])

    def test_a_parent_is_given_its_childrens_outcomes_and_any_other_job_none(self):
        p = run("pool", frame("JOB_p", b"children", CHILDREN) + frame("JOB_x", b"children"))
        self.assertEqual(p.returncode, 0, p.stderr)
        replies = [json.loads(line) for line in p.stdout.splitlines()]
        self.assertEqual([json.loads(r["result"]) for r in replies], [SEEN, []])


class Exec(unittest.TestCase):
    def test_the_result_on_stdout_and_exit_0(self):
        p = run("exec", b"\x00abc", {"EMQ_JOB_ID": "JOB_1", "EMQ_ATTEMPT": "1"})
        self.assertEqual((p.returncode, p.stdout), (0, b"\x00ABC"))

    def test_a_permanent_failure_exits_65_with_its_text_on_stderr(self):
        p = run("exec", b"bad")
        self.assertEqual((p.returncode, p.stdout), (65, b""))
        self.assertEqual(p.stderr, b"bad input: nothing to do\n")

    def test_any_other_exception_exits_1_for_a_retry(self):
        p = run("exec", b"flaky")
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, b"ConnectionError: upstream down\n")

    def test_progress_goes_to_emq_progress_fd_a_line_each(self):
        read, write = os.pipe()
        p = subprocess.run([sys.executable, "-c", HANDLER % (PACKAGE, "exec")], input=b"progress", capture_output=True,
                           timeout=30, env=dict(os.environ, EMQ_PROGRESS_FD=str(write)), pass_fds=(write,))
        os.close(write)
        with os.fdopen(read, "rb") as lines:
            self.assertEqual(lines.read(), b'half\n{"done": 2}\n')
        self.assertEqual((p.returncode, p.stdout), (0, b"reported"))

    def test_without_emq_progress_fd_progress_does_nothing(self):
        p = run("exec", b"progress")
        self.assertEqual((p.returncode, p.stdout), (0, b"reported"))

    def test_the_job_comes_from_the_environment(self):
        p = run("exec", b"json", {"EMQ_QUEUE": "thumbs", "EMQ_ATTEMPT": "3"})
        self.assertEqual(json.loads(p.stdout), {"attempt": 3, "queue": "thumbs"})

    def test_a_parent_reads_its_childrens_outcomes_from_the_file_emqd_names(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump(CHILDREN, f)
            f.flush()
            p = run("exec", b"children", {"EMQ_CHILDREN_FILE": f.name})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout), SEEN)
        self.assertEqual(json.loads(run("exec", b"children").stdout), [])

    def test_a_parent_whose_children_cannot_be_read_fails_for_a_retry(self):
        p = run("exec", b"children", {"EMQ_CHILDREN_FILE": "/nonexistent/children.json"})
        self.assertEqual((p.returncode, p.stdout), (1, b""))
        self.assertIn(b"/nonexistent/children.json", p.stderr)


if __name__ == "__main__":
    unittest.main()

"""Errors of the echomq package, named as libechomq's ErrorKind."""


class EchoMQError(Exception):
    """Any refusal of this package or of the wire."""


class InvalidError(EchoMQError, ValueError):
    """Refused host-side: a bad queue name, job id, URL, lane or time."""


class KindError(EchoMQError, ValueError):
    """EMQKIND: the id is not JOB-namespaced."""


class ArgError(EchoMQError, ValueError):
    """EMQARG: an argument is malformed."""


class WireError(EchoMQError):
    """EMQWIRE: {emq}:version names another wire."""


class JobNotFound(EchoMQError, LookupError):
    """No such job, or it left the queue without a kept row."""


class JobFailed(EchoMQError):
    """The job died; .error is its last error text (bytes), .attempts its claims."""

    def __init__(self, job_id, error, attempts):
        noun = "attempt" if attempts == 1 else "attempts"
        super().__init__("%s died after %s %s: %s" % (job_id, attempts, noun, error.decode("utf-8", "replace")))
        self.job_id = job_id
        self.error = error
        self.attempts = attempts


def from_reply(exc):
    """Maps a server error reply onto the package's errors."""
    text = str(exc)
    for code, kind in (("EMQKIND", KindError), ("EMQARG", ArgError), ("EMQWIRE", WireError)):
        if text.startswith(code):
            return kind(text)
    return exc

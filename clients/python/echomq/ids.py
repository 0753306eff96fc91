"""Job ids and queue names, by the rules of docs/protocol.md and lib/src/job_id.cpp.

Minted ids are JOB_ + a 26-character ULID (Crockford base32): 48 bits of
milliseconds, 80 random bits that a second id in the same (or an earlier)
millisecond increments, so byte order is mint order within this process.
"""
import os
import re
import threading
import time

from .errors import InvalidError, KindError

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_ID_TAIL = re.compile(rb"[0-9A-Za-z_.:-]{1,128}")
_QUEUE = re.compile(rb"[A-Za-z0-9_.-]{1,64}")

_lock = threading.Lock()
_last_ms = 0
_rand = 0  # 80 bits: the top bit of the low 64 starts clear, as the C++ minter keeps it


def _encode(ms, rand):
    value = (ms << 80) | rand  # 128 bits, read as 130 with two leading zeros
    return "JOB_" + "".join(_CROCKFORD[(value >> (5 * (25 - i))) & 31] for i in range(26))


def mint_job_id(unix_ms=None):
    """A fresh id; unix_ms (for tests) defaults to the local clock."""
    global _last_ms, _rand
    ms = (int(time.time() * 1000) if unix_ms is None else unix_ms) & ((1 << 48) - 1)
    with _lock:
        if ms > _last_ms:
            _last_ms = ms
            hi = int.from_bytes(os.urandom(2), "big")
            lo = int.from_bytes(os.urandom(8), "big") >> 1
            _rand = (hi << 64) | lo
        else:
            _rand = (_rand + 1) & ((1 << 80) - 1)
            if _rand == 0:
                _last_ms += 1  # 80 bits spent within one millisecond: borrow the next
        return _encode(_last_ms, _rand)


def minted_at_ms(job_id):
    """The millisecond a minted id was made, or None for any other id."""
    if len(job_id) != 30 or not job_id.startswith("JOB_"):
        return None
    ms = 0
    for i, c in enumerate(job_id[4:]):
        v = _CROCKFORD.find(c)
        if v < 0:
            return None
        if i < 10:
            ms = (ms << 5) | v
    return None if ms >> 48 else ms


def _check_text(value, what):
    """Names and ids are str. Bytes are refused, not guessed at: "%s" of
    b"bq" is "b'bq'", a key no daemon reads."""
    if isinstance(value, str):
        return
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise InvalidError("%s given as bytes (%r): pass a str, e.g. value.decode('ascii')" % (what, bytes(value[:80])))
    raise InvalidError("%s must be a str, not %s" % (what, type(value).__name__))


def valid_job_id(job_id):
    if not isinstance(job_id, str):
        return False
    b = job_id.encode()
    return b.startswith(b"JOB_") and _ID_TAIL.fullmatch(b[4:]) is not None


def check_job_id(job_id):
    """The full host-side check, for an id a user gives or a speaker mints."""
    if valid_job_id(job_id):
        return
    _check_text(job_id, "a job id")
    if not job_id.startswith("JOB"):
        raise KindError("EMQKIND %r is not JOB-namespaced: ids are JOB_ then 1-128 bytes" % (job_id,))
    raise InvalidError("%r is not a valid job id: use JOB_ then 1-128 bytes of 0-9 A-Z a-z _ . : -" % (job_id,))


def check_wire_gate(job_id):
    """The wire's own gate, for an id read back from the server."""
    _check_text(job_id, "a job id")
    if not job_id.startswith("JOB"):
        raise KindError("EMQKIND %r is not JOB-namespaced: ids are JOB_ then 1-128 bytes" % (job_id,))


def valid_queue_name(name):
    return isinstance(name, str) and _QUEUE.fullmatch(name.encode()) is not None


def check_queue_name(name):
    _check_text(name, "a queue name")
    if not valid_queue_name(name):
        raise InvalidError("%r is not a valid queue name: use 1-64 bytes of A-Z a-z 0-9 _ . -" % (name,))

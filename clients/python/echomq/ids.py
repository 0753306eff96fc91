"""Job ids and queue names, by the rules of PROTOCOL.md and lib/src/job_id.cpp.

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


def _bytes(s):
    return s.encode() if isinstance(s, str) else bytes(s)


def valid_job_id(job_id):
    b = _bytes(job_id)
    return b.startswith(b"JOB_") and _ID_TAIL.fullmatch(b[4:]) is not None


def check_job_id(job_id):
    """The full host-side check, for an id a user gives or a speaker mints."""
    if valid_job_id(job_id):
        return
    if not _bytes(job_id).startswith(b"JOB"):
        raise KindError("EMQKIND %r is not JOB-namespaced: ids are JOB_ then 1-128 bytes" % (job_id,))
    raise InvalidError("%r is not a valid job id: use JOB_ then 1-128 bytes of 0-9 A-Z a-z _ . : -" % (job_id,))


def check_wire_gate(job_id):
    """The wire's own gate, for an id read back from the server."""
    if not _bytes(job_id).startswith(b"JOB"):
        raise KindError("EMQKIND %r is not JOB-namespaced: ids are JOB_ then 1-128 bytes" % (job_id,))


def valid_queue_name(name):
    return _QUEUE.fullmatch(_bytes(name)) is not None


def check_queue_name(name):
    if not valid_queue_name(name):
        raise InvalidError("%r is not a valid queue name: use 1-64 bytes of A-Z a-z 0-9 _ . -" % (name,))

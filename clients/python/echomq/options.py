"""The named options of the optioned enqueue (docs/protocol.md, "Unique jobs"),
checked as the wire takes them, and what an enqueue form's reply says."""
import re

from . import values
from .errors import InvalidError

UNIQUE_MODES = ("finished", "started", "window", "replace")
_UNIQUE_KEY = re.compile(r"[0-9A-Za-z_.:-]{1,128}")


class Enqueued(str):
    """The id enqueue returns: the job's own, or, when its unique key was
    held, the id of the job holding it. outcome is "enqueued", "duplicate"
    or "replaced" (unique_mode "replace": the holder took this payload);
    state is the holder's state on a unique duplicate or replace, else None."""

    def __new__(cls, job_id, outcome, state=None):
        out = super().__new__(cls, job_id)
        out.outcome = outcome
        out.state = state
        return out


def job_options(unique=None, unique_mode=None, unique_for=None, traceparent=None, tracestate=None):
    """The named options of the optioned enqueue (docs/protocol.md), checked: a list of name, value.

    unique_for is the window of unique_mode "window" (implied when it is given), in seconds or a timedelta."""
    out = []
    if unique is not None:
        if not isinstance(unique, str) or not _UNIQUE_KEY.fullmatch(unique):
            raise InvalidError("unique %r is not a unique key: use 1-128 characters of A-Z a-z 0-9 _ . : - "
                               "(hash anything longer)" % (unique,))
        out += ["unique", unique]
        if unique_mode is not None:
            if unique_mode not in UNIQUE_MODES:
                raise InvalidError("unique_mode must be one of %s, not %r" % (", ".join(UNIQUE_MODES), unique_mode))
            if unique_mode == "window" and unique_for is None:
                raise InvalidError("unique_mode window needs unique_for: how long the key is held")
            if unique_mode != "window" and unique_for is not None:
                raise InvalidError("unique_for is the window of unique_mode window, not of %s" % unique_mode)
            out += ["unique_mode", unique_mode]
        if unique_for is not None:
            ms = int(values.seconds(unique_for, "unique_for") * 1000)
            if not 1 <= ms <= 10**12:
                raise InvalidError("unique_for must be 1 ms to 10^9 s")
            out += ["unique_for_ms", ms]
    elif unique_mode is not None or unique_for is not None:
        raise InvalidError("unique_mode and unique_for need unique: the key")
    if traceparent is not None:
        if not isinstance(traceparent, str) or len(traceparent.encode()) != 55:
            raise InvalidError("traceparent must be a W3C traceparent header of 55 characters")
        out += ["traceparent", traceparent]
    if tracestate is not None:
        if not isinstance(tracestate, str) or len(tracestate.encode()) > 512:
            raise InvalidError("tracestate must be text of at most 512 bytes")
        out += ["tracestate", tracestate]
    return out


def group_option(group):
    """The optioned enqueue's group option (docs/protocol.md, "Groups"), checked: name, value; [] for None."""
    if group is None:
        return []
    if not isinstance(group, str) or not _UNIQUE_KEY.fullmatch(group):
        raise InvalidError("group %r is not a group: use 1-128 characters of A-Z a-z 0-9 _ . : -" % (group,))
    return ["group", group]


def enqueued(job_id, reply):
    """An enqueue form's reply as an Enqueued: 1, 0, or [code, holder, state]."""
    if isinstance(reply, list):
        code, holder, state = reply
        return Enqueued(holder.decode(), "replaced" if code == 2 else "duplicate", state.decode())
    return Enqueued(job_id, "enqueued" if reply == 1 else "duplicate")

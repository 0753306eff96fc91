"""What a job carries, checked as the wire takes it: its payload (bytes), its
lane, and a span of seconds (a delay, a timeout, a unique window). Shared by
queue, options and flows, which import it; it imports none of them."""
import datetime

from .errors import InvalidError

MIN_LANE, MAX_LANE = -1000, 1000


def payload(p):
    if isinstance(p, str):
        return p.encode()
    if isinstance(p, (bytes, bytearray, memoryview)):
        return bytes(p)
    raise InvalidError("a payload is bytes or str, not %s" % type(p).__name__)


def lane(value):
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_LANE <= value <= MAX_LANE:
        raise InvalidError("lane %r is out of range: use an integer in -1000..1000" % (value,))
    return value


def seconds(value, what):
    """A span in seconds as delay= and timeout= take it: a number or a timedelta, 0..10^9.

    NaN and infinity are refused, and so is text: each would make wait poll for ever.
    """
    seconds = value.total_seconds() if isinstance(value, datetime.timedelta) else value
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= 10**9:
        raise InvalidError("%s must be seconds (a number, or a timedelta) in 0..10^9, not %r" % (what, value))
    return seconds

"""What a job carries, checked as the wire takes it: its payload (bytes) and
its lane. Shared by queue and flows, which import it; it imports neither."""
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

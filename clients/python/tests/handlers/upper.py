"""A pool handler written with echomq.handler, for the end-to-end tests."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from echomq import handler  # noqa: E402


def upper(payload, job):
    if job.children:  # a parent: its children's results, as a new user would join them
        return b"+".join(c.result for c in job.children) + b"->" + payload.upper()
    if payload == b"poison":
        raise handler.Permanent("poison: refused on attempt %d" % job.attempt)
    return payload.upper()


handler.pool(upper)

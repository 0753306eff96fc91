#!/usr/bin/python3
"""The oracle for tests/daemon/schedule/croniter_oracle_test.cpp.

stdin, one case a line: EXPRESSION<TAB>ZONE<TAB>AFTER_MS
stdout, one answer a line: the next tick in epoch ms, or "error <what>".

Two independent parts, neither of them emqd's code or its library:

- Which local wall times match: Debian's python3-croniter, on naive
  datetimes, each listed day-of-month asked alone (see next_wall). (Its time-zone-aware mode is not used: after an offset change
  it moves a result by the change, e.g. '29 15 * */2 6' in Pacific/Chatham
  after 2010-04-03T03:07Z gives 03:44Z on May 1, an hour after 15:29 local.)
- Which instant a wall time fires at: Python's zoneinfo with DESIGN.md's
  rules (a time that occurs twice, the first; one inside a gap, the gap's
  end), the ticks at or before AFTER_MS skipped.

Day-of-month with day-of-week: croniter calls a field unrestricted when it
covers every value ("1-31", "*/1"), Vixie cron (and emqd) when it is
written starting with '*'. Vixie's rule is applied on top: either field
starting with '*' means both must match (croniter's day_or=False);
otherwise either may, the earlier of croniter on each day field alone.
"""
import sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from croniter import CroniterBadDateError, croniter


def next_wall(fields, wall):
    def run(expr):
        return croniter(" ".join(expr), wall, day_or=False).get_next(datetime)

    def run_each_day(expr):
        # croniter 1.3.5 skips the 1st of a month after a shorter one when
        # the day list also holds a day the shorter month lacks ("1,30"
        # from Feb 27 gives Mar 30): ask for each listed day alone.
        days = croniter(" ".join(expr)).expanded[2]
        if days == ["*"]:
            return run(expr)
        found = []
        for d in days:
            try:
                found.append(run(expr[:2] + [str(d)] + expr[3:]))
            except CroniterBadDateError:
                pass  # a day its months lack ("31" in November): never
        return min(found)

    dom, dow = fields[2], fields[4]
    if dom.startswith("*") or dow.startswith("*"):
        return run_each_day(fields)
    return min(run_each_day(fields[:4] + ["*"]), run(fields[:2] + ["*", fields[3], dow]))


def fire_instant(wall, zone):
    """Epoch seconds a local wall time fires at."""
    earlier = wall.replace(tzinfo=zone, fold=0)  # PEP 495: fold=0 is the first
    at = earlier.astimezone(timezone.utc)
    if at.astimezone(zone).replace(tzinfo=None) == wall:
        return int(at.timestamp())
    # Inside a gap: fold=0 read it with the offset from before the gap, so
    # `at` lies after the gap's end and fold=1's reading before it. The end
    # is the first second whose offset is the one after the gap.
    low = int(wall.replace(tzinfo=zone, fold=1).astimezone(timezone.utc).timestamp())
    high = int(at.timestamp())
    after_offset = datetime.fromtimestamp(high, zone).utcoffset()
    while low < high:
        mid = (low + high) // 2
        if datetime.fromtimestamp(mid, zone).utcoffset() == after_offset:
            high = mid
        else:
            low = mid + 1
    return low


def next_tick(fields, zone, after_ms):
    after = datetime.fromtimestamp(after_ms // 1000, tz=timezone.utc)
    wall = after.astimezone(zone).replace(tzinfo=None)
    while True:
        wall = next_wall(fields, wall)
        at = fire_instant(wall, zone) * 1000
        if at > after_ms:
            return at


for line in sys.stdin:
    expr, zone_name, after = line.rstrip("\n").split("\t")
    try:
        print(next_tick(expr.split(), ZoneInfo(zone_name), int(after)))
    except Exception as e:  # noqa: BLE001 - every failure is an answer to compare
        print("error", type(e).__name__, str(e).replace("\n", " "))

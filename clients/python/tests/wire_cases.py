"""Runs tests/wire-cases/*.json (format: tests/wire-cases/README.md) through
this package's Scripts: the same cases the C++ library and the Node package
run, so a drift between speakers fails a test."""
import base64
import json
import os
import re

import redis

from echomq.scripts import Scripts

_NOW = re.compile(r"\$NOW([+-]\d+)?")
_WHOLE_NOW = re.compile(r"^\$NOW([+-]\d+)?$")


class Scope:
    def __init__(self, q, q2, t0):
        self.q, self.q2, self.t0, self.t1 = q, q2, t0, t0

    def text(self, s):
        s = s.replace("$Q2", self.q2).replace("$Q", self.q)
        return _NOW.sub(lambda m: str(self.t0 + int(m.group(1) or 0)), s)

    def bytes(self, v):
        if isinstance(v, dict):
            return bytes.fromhex(v["hex"])
        if isinstance(v, int):
            return str(v).encode()
        return self.text(v).encode()

    def matches(self, want, got):
        if isinstance(got, int):
            got = str(got).encode()
        if isinstance(want, str):
            m = _WHOLE_NOW.match(want)
            if m:
                off = int(m.group(1) or 0)
                try:
                    v = int(got)
                except ValueError:
                    return False
                return str(v).encode() == got and self.t0 + off <= v <= self.t1 + off
        return self.bytes(want) == got


def server_ms(r):
    sec, usec = r.time()
    return int(sec) * 1000 + int(usec) // 1000


def seed(r, s, keyspace):
    for key_text, v in keyspace.items():
        key = s.text(key_text)
        if "hash" in v:
            r.hset(key, mapping={s.text(f): s.bytes(x) for f, x in v["hash"].items()})
        elif "zset" in v:
            for member, score in v["zset"]:
                r.execute_command("ZADD", key, s.bytes(score), s.bytes(member))
        elif "set" in v:
            r.sadd(key, *[s.bytes(m) for m in v["set"]])
        elif "list" in v:
            r.rpush(key, *[s.bytes(m) for m in v["list"]])
        elif "stream" in v:
            for entry in v["stream"]:
                r.execute_command("XADD", key, "*", *[s.bytes(f) for f in entry])
        else:
            r.set(key, s.bytes(v["string"]))
        if "expires" in v:
            r.execute_command("PEXPIREAT", key, s.bytes(v["expires"]))


def compare_key(r, s, key, want):
    kind = r.type(key).decode()
    want_kind = next(k for k in ("hash", "zset", "set", "list", "stream", "string") if k in want)
    if kind != want_kind:
        return ["%s is a %s, not a %s" % (key, kind, want_kind)]
    out = []
    if kind == "hash":
        got = r.hgetall(key)
        for f, v in want["hash"].items():
            held = got.pop(s.text(f).encode(), None)
            if held is None:
                out.append("%s: field %s is missing" % (key, f))
            elif not s.matches(v, held):
                out.append("%s: field %s is %r, not %r" % (key, f, held[:200], v))
        out += ["%s: field %s=%r is not expected" % (key, f, v[:200]) for f, v in got.items()]
    elif kind == "zset":
        got = {m: str(int(sc)).encode() for m, sc in r.zrange(key, 0, -1, withscores=True)}
        for member, score in want["zset"]:
            held = got.pop(s.bytes(member), None)
            if held is None:
                out.append("%s: member %s is missing" % (key, member))
            elif not s.matches(score, held):
                out.append("%s: member %s scores %s, not %s" % (key, member, held, score))
        out += ["%s: member %r is not expected" % (key, m) for m in got]
    elif kind == "set":
        if r.smembers(key) != {s.bytes(m) for m in want["set"]}:
            out.append("%s: members differ: %r" % (key, r.smembers(key)))
    elif kind == "list":
        got = r.lrange(key, 0, -1)
        if len(got) != len(want["list"]) or not all(s.matches(w, g) for w, g in zip(want["list"], got)):
            out.append("%s holds another list: %r" % (key, got))
    elif kind == "stream":
        out += compare_stream(r, s, key, want["stream"])
    elif not s.matches(want["string"], r.get(key)):
        out.append("%s holds %r" % (key, r.get(key)))
    at = r.execute_command("PEXPIRETIME", key)
    if "expires" in want:
        if at < 0 or not s.matches(want["expires"], at):
            out.append("%s expires at %s, not %s" % (key, at, want["expires"]))
    elif at >= 0:
        out.append("%s expires at %s but should not expire" % (key, at))
    return out


def compare_stream(r, s, key, want):
    """A stream's entries in order, ids aside (they are the server's)."""
    got = r.execute_command("XRANGE", key, "-", "+")
    out = []
    if len(got) != len(want):
        out.append("%s holds %d entries, not %d" % (key, len(got), len(want)))
    for i, ((_, fields), expected) in enumerate(zip(got, want)):
        flat = fields if isinstance(fields, list) else [x for kv in fields.items() for x in kv]
        if len(flat) != len(expected) or not all(s.matches(w, g) for w, g in zip(expected, flat)):
            out.append("%s: entry %d is %r, not %r" % (key, i, flat, expected))
    return out


def compare_keyspace(r, s, want):
    out, expected = [], set()
    for key_text, v in want.items():
        key = s.text(key_text)
        expected.add(key.encode())
        if not r.exists(key):
            out.append(key + " is missing")
        else:
            out += compare_key(r, s, key, v)
    for q in (s.q, s.q2):
        for k in r.keys("emq:{%s}:*" % q):
            if k not in expected:
                out.append("%s is not expected" % k.decode())
    return out


def compare_reply(s, want, got):
    if isinstance(want, dict) and "error" in want:
        text = s.text(want["error"])
        if not isinstance(got, redis.exceptions.ResponseError):
            return "answered %r instead of %s" % (got, text)
        return "" if str(got) == text else "refused with %r, not %r" % (str(got), text)
    if isinstance(got, Exception):
        return "refused with %r" % str(got)
    if want is None:
        return "" if got is None else "is %r, not nil" % (got,)
    if isinstance(want, int):
        return "" if isinstance(got, int) and got == want else "is %r, not %d" % (got, want)
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return "is %r, not %d elements" % (got, len(want))
        for i, (w, g) in enumerate(zip(want, got)):
            d = compare_reply(s, w, g)
            if d:
                return "[%d] %s" % (i, d)
        return ""
    if not isinstance(got, bytes):
        return "is %r, not a string" % (got,)
    return "" if s.matches(want, got) else "is %r, not %r" % (got[:200], want)


def load_cases(cases_dir):
    out = {}
    for name in sorted(os.listdir(cases_dir)):
        if name.endswith(".json"):
            with open(os.path.join(cases_dir, name), encoding="utf-8") as f:
                out[name[:-5]] = json.load(f)
    return out


_counter = [0]


def run_case(r, case):
    """The mismatches of one case, [] when it holds."""
    _counter[0] += 1
    q = "wcpy%d-%d" % (os.getpid(), _counter[0])
    s = Scope(q, q + "-b", server_ms(r))
    seed(r, s, case["before"])
    call = case["call"]
    try:
        got = Scripts(r).raw(call["script"], [s.bytes(k) for k in call["keys"]], [s.bytes(a) for a in call["args"]])
    except redis.exceptions.ResponseError as e:
        got = e
    s.t1 = server_ms(r)
    out = []
    d = compare_reply(s, case["reply"], got)
    if d:
        out.append("the reply " + d)
    return out + compare_keyspace(r, s, case.get("after", case["before"]))

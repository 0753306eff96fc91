#!/usr/bin/python3
"""A second emq/1 speaker that shares no code with libechomq.

It builds every key from PROTOCOL.md's rules itself, loads the lua/ files
with SCRIPT LOAD and runs them by EVALSHA through the `redis` module of
Debian's python3. The interop tests run it as a child process.

  peer_speaker.py --port P --lua-dir DIR enqueue QUEUE ID PAYLOAD_HEX
      prints the enqueue reply (1 or 0)
  peer_speaker.py --port P --lua-dir DIR claim-complete QUEUE KEEP_MS RESULT
      claims one job, completes it with RESULT, prints one JSON line:
      {"id", "payload_hex", "attempts", "lease_epoch", "complete"}

Exit 0 on success, 2 when the server speaks another wire, 3 when there was
nothing to claim, 4 when a reply has the wrong shape.
"""
import argparse
import json
import os
import sys

import redis

WIRE = b"emq/1"


def keys(queue):
    base = "emq:{%s}:" % queue
    return {name: base + name for name in ("pending", "active", "delayed", "meta", "stats")} | {
        "row_root": base + "job:"
    }


def handshake(r):
    r.set("{emq}:version", WIRE, nx=True)
    held = r.get("{emq}:version")
    if held != WIRE:
        print("EMQWIRE {emq}:version holds %r, not emq/1" % held, file=sys.stderr)
        sys.exit(2)


def script(r, lua_dir, name):
    with open(os.path.join(lua_dir, name + ".lua"), "rb") as f:
        return r.script_load(f.read())


def expect_int(value, what):
    if not isinstance(value, int):
        print("%s replied %r, not an integer" % (what, value), file=sys.stderr)
        sys.exit(4)
    return value


def enqueue(r, lua_dir, queue, job_id, payload):
    k = keys(queue)
    sha = script(r, lua_dir, "enqueue")
    print(expect_int(r.evalsha(sha, 2, k["row_root"] + job_id, k["pending"], job_id, payload), "enqueue"))


def claim_complete(r, lua_dir, queue, keep_ms, result):
    k = keys(queue)
    claim = script(r, lua_dir, "claim")
    jobs = r.evalsha(claim, 6, k["pending"], k["active"], k["delayed"], k["meta"], k["stats"], k["row_root"],
                     30000, 1, 10)
    if not jobs:
        print("nothing to claim", file=sys.stderr)
        sys.exit(3)
    if len(jobs) != 4:
        print("claim replied %r, not one flat job" % (jobs,), file=sys.stderr)
        sys.exit(4)
    job_id, payload = jobs[0].decode(), jobs[1]
    attempts, epoch = expect_int(jobs[2], "attempts"), expect_int(jobs[3], "lease_epoch")
    complete = script(r, lua_dir, "complete")
    done = r.evalsha(complete, 3, k["row_root"] + job_id, k["active"], k["stats"], job_id, epoch, keep_ms, result)
    print(json.dumps({"id": job_id, "payload_hex": payload.hex(), "attempts": attempts, "lease_epoch": epoch,
                      "complete": expect_int(done, "complete")}))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--lua-dir", required=True)
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("enqueue")
    e.add_argument("queue")
    e.add_argument("id")
    e.add_argument("payload_hex")
    c = sub.add_parser("claim-complete")
    c.add_argument("queue")
    c.add_argument("keep_ms", type=int)
    c.add_argument("result")
    a = p.parse_args()

    r = redis.Redis(host=a.host, port=a.port)
    handshake(r)
    if a.command == "enqueue":
        enqueue(r, a.lua_dir, a.queue, a.id, bytes.fromhex(a.payload_hex))
    else:
        claim_complete(r, a.lua_dir, a.queue, a.keep_ms, a.result)


if __name__ == "__main__":
    main()

"""The fleet registry (PROTOCOL.md, "Daemons: who runs what"): every live
daemon, its state, how busy it is and, when asked, the jobs it runs now.
Read-only: plain commands on the {emq} keys, as `emq daemons` reads them."""
import json

from .connect import client_from_url
from .keys import DAEMONS_KEY, daemon_key

# busy: jobs its slots run now (at most slots); prefetched: jobs claimed
# ahead, waiting in the daemon for a slot.
_NUMBERS = ("pid", "started_ms", "beat_ms", "slots", "busy", "prefetched")


def _text(v):
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


def _daemon(did, fields):
    d = {"id": did}
    for f, v in fields.items():
        d[_text(f)] = _text(v)
    for f in _NUMBERS:
        d[f] = int(d[f]) if str(d.get(f, "")).lstrip("-").isdigit() else 0
    try:
        queues = json.loads(d.get("queues") or "[]")
    except ValueError:
        queues = []
    d["queues"] = [q for q in queues if isinstance(q, str)] if isinstance(queues, list) else []
    signal, _, at = (d.get("ack") or "").rpartition(":")
    d["ack"] = {"signal": signal, "at_ms": int(at)} if signal and at.isdigit() else None
    return d


def _job(ref, text):
    try:
        job = json.loads(text)
    except ValueError:
        return None
    if not isinstance(job, dict):
        return None
    queue, _, job_id = _text(ref).partition(":")
    job.setdefault("queue", queue)
    job.setdefault("id", job_id)
    # Claimed ahead and not started: started_ms is when it was claimed.
    job["prefetched"] = job.get("prefetched") is True
    return job


def daemons(url_or_client, *, jobs=False, **connect):
    """Every live daemon of {emq}:daemons, by id, as a list of dicts (id, host,
    pid, version, state, queues, slots, busy, prefetched, executor, started_ms,
    beat_ms, ack; and jobs, oldest first, when jobs=True, each with prefetched
    True when it waits in the daemon for a slot). A member whose hash has
    expired (it stopped beating) is left out."""
    client = client_from_url(url_or_client, **connect) if isinstance(url_or_client, str) else url_or_client
    ids = sorted(_text(m) for m in client.zrange(DAEMONS_KEY, 0, -1))
    with client.pipeline(transaction=False) as p:
        for did in ids:
            p.hgetall(daemon_key(did))
            if jobs:
                p.hgetall(daemon_key(did, ":work"))
        r = p.execute()
    per = 2 if jobs else 1
    out = []
    for i, did in enumerate(ids):
        fields = r[i * per]
        if not fields:
            continue
        d = _daemon(did, fields)
        if jobs:
            listed = (_job(ref, text) for ref, text in r[i * per + 1].items())
            d["jobs"] = sorted((j for j in listed if j), key=lambda j: j.get("started_ms", 0))
        out.append(d)
    return out

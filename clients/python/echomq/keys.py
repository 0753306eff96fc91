"""The keys of emq/1, by the key rules of docs/protocol.md: the one place this
package spells them. Imports nothing of the package but ids (which checks a
queue's name), so every other module may import it."""
from . import ids

VERSION_KEY = "{emq}:version"
QUEUES_KEY = "{emq}:queues"
DAEMONS_KEY = "{emq}:daemons"


def _queue_key(queue, kind):
    return "emq:{%s}:%s" % (queue, kind)


def keys(queue):
    """Every key of a queue."""
    ids.check_queue_name(queue)
    out = {t: _queue_key(queue, t) for t in ("pending", "active", "delayed", "dead", "stats", "meta", "cron", "waiting",
                                             "outbox", "events", "gidx", "rot", "groups", "gwait")}
    out.update(row_root=_queue_key(queue, "job:"), deps_root=_queue_key(queue, "deps:"),
               results_root=_queue_key(queue, "results:"), uniq_root=_queue_key(queue, "uniq:"),
               gq_root=_queue_key(queue, "gq:"), grp_root=_queue_key(queue, "grp:"),
               gact_root=_queue_key(queue, "gact:"))
    return out


def stream_key(queue):
    """A queue's events stream."""
    return _queue_key(queue, "events")


def meta_key(queue):
    """A queue's meta hash."""
    return _queue_key(queue, "meta")


def daemon_key(daemon_id, part=""):
    """A daemon's entry in the registry ({emq}:daemon:<id>), or a part of it (":work")."""
    return "{emq}:daemon:" + daemon_id + part

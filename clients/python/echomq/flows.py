"""Flows: a tree of jobs checked whole before anything is sent, then enqueued
a level at a time, each parent before its children (as libechomq's
enqueue_flow, docs/decisions.md "Flows checked whole")."""
from . import ids, values
from .errors import EchoMQError, InvalidError, from_reply
from .keys import keys
from .options import enqueued, group_option, job_options

POLICIES = ("fail", "wait", "ignore")
MAX_DEPTH = 64  # levels, the root's included: libechomq's kMaxFlowDepth
_FIELDS = {"payload", "queue", "id", "lane", "on_child_failure", "children", "unique", "unique_mode", "unique_for",
           "traceparent", "tracestate", "group"}
_LEAST_BULK = 1 << 20  # the least proto-max-bulk-len a server takes
_DEFAULT_BULK = 512 << 20  # its default, where CONFIG is not ours to call
_NAMED_PARENTS = 10


class FlowIncomplete(EchoMQError):
    """The server refused a job half-way through a tree (or the connection was
    lost): the rest went in. .waiting holds the refs ("queue:id") of the
    parents now waiting for a child that is not there; .cause the first
    refusal."""

    def __init__(self, message, waiting, cause):
        super().__init__(message)
        self.waiting = waiting
        self.cause = cause


def _path(at):
    return "root" + "".join(".children[%d]" % i for i in at)


class _Plan:
    """The tree as it will be sent: each node checked, ids minted, and a
    job (queue and id) given twice anywhere refused."""

    def __init__(self):
        self.seen = {}  # given ref -> where first
        self.largest = (0, [])

    def node(self, node, default_queue, at, context=(None, None)):
        """context: the (traceparent, tracestate) the parent is enqueued
        with, which a node without a traceparent of its own carries."""
        def bad(what):
            raise InvalidError("flow: %s: %s" % (_path(at), what))

        if len(at) >= MAX_DEPTH:
            bad("the tree is deeper than %d levels: flatten it (a parent may have any number of children) "
                "or split it into flows" % MAX_DEPTH)
        if not isinstance(node, dict) or "payload" not in node:
            bad("a flow node is a dict with a payload (and queue, id, lane, on_child_failure, children)")
        unknown = set(node) - _FIELDS
        if unknown:
            bad("a flow node has no %s" % ", ".join(sorted(map(str, unknown))))
        queue = node.get("queue", default_queue)
        try:
            ids.check_queue_name(queue)
            job_id = node.get("id") or ids.mint_job_id()
            ids.check_job_id(job_id)
            body, lane = values.payload(node["payload"]), values.lane(node.get("lane", 0))
            if node.get("traceparent") is not None:
                context = (node["traceparent"], node.get("tracestate"))
            options = job_options(node.get("unique"), node.get("unique_mode"), node.get("unique_for"), *context)
            options += group_option(node.get("group"))
        except InvalidError as e:
            bad(str(e))
        policy = node.get("on_child_failure", "fail")
        if policy not in POLICIES:
            bad("on_child_failure must be fail, wait or ignore, not %r" % (policy,))
        if node.get("id"):
            first = self.seen.setdefault(queue + ":" + job_id, list(at))
            if first != at:
                bad("%s:%s is given twice in the tree (first at %s): a job is enqueued once and has one parent; "
                    "give each node its own id" % (queue, job_id, _path(first)))
        if len(body) > self.largest[0]:
            self.largest = (len(body), list(at))
        kids = node.get("children", [])
        if not isinstance(kids, (list, tuple)):
            bad("children must be a list of nodes")
        children = []
        for i, c in enumerate(kids):
            at.append(i)
            children.append(self.node(c, queue, at, context))
            at.pop()
        return {"queue": queue, "id": job_id, "payload": body, "lane": lane, "policy": policy, "children": children,
                "unique": node.get("unique"), "group": node.get("group"), "options": options}


def _bulk_limit(client):
    try:
        return int(client.config_get("proto-max-bulk-len")["proto-max-bulk-len"])
    except Exception:  # CONFIG refused (a managed service) or unreadable: the server's default
        return _DEFAULT_BULK


def plan(client, tree, default_queue):
    """The checked tree with its ids; raises InvalidError naming the node."""
    p = _Plan()
    root = p.node(tree, default_queue, [])
    size, at = p.largest
    limit = _bulk_limit(client) if size > _LEAST_BULK else _DEFAULT_BULK
    if size > limit:
        raise InvalidError("flow: %s: the payload of %d bytes is over the server's limit of %d bytes "
                           "(proto-max-bulk-len)" % (_path(at), size, limit))
    return root


def _ref(n):
    return n["queue"] + ":" + n["id"]


def _send(run, n, parent):
    """The node's enqueue; its reply as an Enqueued."""
    k = keys(n["queue"])
    row = k["row_root"] + n["id"]
    lock = [k["uniq_root"] + n["unique"]] if n["unique"] is not None else []
    # A grouped child or root goes to its group's zset: the group's six KEYS
    # after the lock. A parent writes its group in its row only (its release
    # sends it to the group), so it takes no KEYS for it.
    g = n["group"]
    group = [k["gq_root"] + g, k["grp_root"] + g, k["gact_root"] + g, k["gidx"], k["rot"], k["groups"]] if g else []
    if n["children"]:
        reply = run("enqueue_parent", n["queue"], [row, k["waiting"], k["deps_root"] + n["id"], k["meta"]] + lock,
                    [n["id"], n["payload"], n["lane"], n["policy"], _ref(parent) if parent else "",
                     *[_ref(c) for c in n["children"]], *n["options"]])
    elif parent:
        reply = run("enqueue_child", n["queue"], [row, k["pending"], k["meta"]] + lock + group,
                    [n["id"], n["payload"], n["lane"], _ref(parent), *n["options"]])
    elif n["options"]:
        reply = run("enqueue", n["queue"], [row, k["pending"]] + lock + group,
                    [n["id"], n["payload"], *(["lane", n["lane"]] if n["lane"] else []), *n["options"]])
    elif n["lane"] != 0:
        reply = run("enqueue_lane", n["queue"], [row, k["pending"]], [n["id"], n["payload"], n["lane"]])
    else:
        reply = run("enqueue", n["queue"], [row, k["pending"]], [n["id"], n["payload"]])
    return enqueued(n["id"], reply)


def _incomplete(cause, failed, waiting):
    text = "flow: the server refused %s: %s" % (failed, cause)
    if not waiting:
        return FlowIncomplete(text + "; nothing of the tree was enqueued", [], cause)
    named = ", ".join(waiting[:_NAMED_PARENTS])
    if len(waiting) > _NAMED_PARENTS:
        named += " and %d more" % (len(waiting) - _NAMED_PARENTS)
    queue, job_id = waiting[0].split(":", 1)
    return FlowIncomplete("%s; these parents now wait for a child that was not enqueued: %s. Cancel each "
                          "(emq cancel QUEUE ID, e.g. emq cancel %s %s), or mend the cause and enqueue the same "
                          "tree again with these ids" % (text, named, queue, job_id), waiting, cause)


def enqueue(run, root):
    """Sends the planned tree a level at a time, each node by run(script,
    queue, keys, args) (the queue's events stream added there). A refused node's subtree is
    left out and the rest goes in; then FlowIncomplete names the parents
    left waiting."""
    level, first, waiting = [(root, None)], None, []
    while level:
        below = []
        for n, parent in level:
            try:
                sent = _send(run, n, parent)
            except Exception as e:  # a refusal, or a lost connection: either way this node may be missing
                first = first or (from_reply(e), _ref(n))
                if parent and _ref(parent) not in waiting:
                    waiting.append(_ref(parent))
                continue
            if sent != n["id"]:  # its unique key is held by another job: not enqueued, nor its subtree
                if not parent:  # the tree stands for the job holding the root's key
                    n["id"], n["children"] = str(sent), []
                if parent:
                    first = first or (EchoMQError("its unique key is held by %s (%s)" % (sent, sent.state)), _ref(n))
                    if _ref(parent) not in waiting:
                        waiting.append(_ref(parent))
                continue
            below.extend((c, n) for c in n["children"])
        level = below
    if first:
        raise _incomplete(first[0], first[1], waiting) from first[0]


def ids_of(n):
    return {"queue": n["queue"], "id": n["id"], "children": [ids_of(c) for c in n["children"]]}

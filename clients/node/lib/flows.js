'use strict';
// Flows: a tree of jobs checked whole before anything is sent, then
// enqueued a level at a time, each parent before its children (as
// libechomq's enqueue_flow, docs/decisions.md "Flows checked whole").
const ids = require('./ids');
const { EchoMQError, InvalidError, fromReply } = require('./errors');
const { keys } = require('./keys');
const { payloadBytes, checkLane } = require('./values');
const { jobOptions, groupOption } = require('./options');

const POLICIES = ['fail', 'wait', 'ignore'];
const MAX_DEPTH = 64; // levels, the root's included: libechomq's kMaxFlowDepth
const FIELDS = ['payload', 'queue', 'id', 'lane', 'onChildFailure', 'children', 'unique', 'uniqueMode', 'uniqueFor',
  'traceparent', 'tracestate', 'group'];
const LEAST_BULK = 1 << 20; // the least proto-max-bulk-len a server takes
const DEFAULT_BULK = 512 * LEAST_BULK; // its default, where CONFIG is not ours to call
const NAMED_PARENTS = 10;

// The server refused a job half-way through a tree (or the connection was
// lost): the rest went in. .waiting holds the refs ("queue:id") of the
// parents now waiting for a child that is not there; .cause the first
// refusal.
class FlowIncomplete extends EchoMQError {
  constructor(message, waiting, cause) {
    super(message);
    this.waiting = waiting;
    this.cause = cause;
  }
}

const pathOf = (at) => `root${at.map((i) => `.children[${i}]`).join('')}`;
const refOf = (n) => `${n.queue}:${n.id}`;

// The tree as it will be sent: each node checked (a job's payload and lane
// as values.js says), ids minted, and a job (queue and id) given
// twice anywhere refused. largest: the biggest payload and where it is.
function planTree(tree, defaultQueue) {
  const seen = new Map(); // given ref -> where first
  let largest = { size: 0, at: [] };
  // context: the trace context the parent is enqueued with, which a node
  // without a traceparent of its own carries (a flow is one trace).
  const visit = (node, queue0, at, context) => {
    const bad = (what) => { throw new InvalidError(`flow: ${pathOf(at)}: ${what}`); };
    if (at.length >= MAX_DEPTH) {
      bad(`the tree is deeper than ${MAX_DEPTH} levels: flatten it (a parent may have any number of children) or split it into flows`);
    }
    if (node == null || typeof node !== 'object' || !('payload' in node)) {
      bad('a flow node is an object with a payload (and queue, id, lane, onChildFailure, children)');
    }
    const unknown = Object.keys(node).filter((k) => !FIELDS.includes(k));
    if (unknown.length) bad(`a flow node has no ${unknown.join(', ')}`);
    const queue = node.queue || queue0;
    const id = node.id || ids.mintJobId();
    let payload;
    let lane;
    let options;
    try {
      ids.checkQueueName(queue);
      ids.checkJobId(id);
      payload = payloadBytes(node.payload);
      lane = checkLane(node.lane || 0);
      if (node.traceparent != null) context = { traceparent: node.traceparent, tracestate: node.tracestate };
      options = jobOptions({ unique: node.unique, uniqueMode: node.uniqueMode, uniqueFor: node.uniqueFor, ...context });
      options.push(...groupOption(node.group));
    } catch (e) {
      if (e instanceof InvalidError) bad(e.message);
      throw e;
    }
    const policy = node.onChildFailure || 'fail';
    if (!POLICIES.includes(policy)) bad(`onChildFailure must be fail, wait or ignore, not ${policy}`);
    if (node.id) {
      const ref = `${queue}:${id}`;
      if (seen.has(ref)) {
        bad(`${ref} is given twice in the tree (first at ${pathOf(seen.get(ref))}): a job is enqueued once and has one parent; give each node its own id`);
      }
      seen.set(ref, [...at]);
    }
    if (payload.length > largest.size) largest = { size: payload.length, at: [...at] };
    const kids = node.children || [];
    if (!Array.isArray(kids)) bad('children must be an array of nodes');
    const children = kids.map((c, i) => {
      at.push(i);
      const planned = visit(c, queue, at, context);
      at.pop();
      return planned;
    });
    return { queue, id, payload, lane, policy, children, unique: node.unique, group: node.group, options };
  };
  const root = visit(tree, defaultQueue, [], {});
  return { root, largest };
}

async function bulkLimit(client) {
  try {
    const [, value] = await client.config('GET', 'proto-max-bulk-len');
    return /^\d+$/.test(value) ? Number(value) : DEFAULT_BULK;
  } catch (e) {
    return DEFAULT_BULK; // CONFIG refused (a managed service): the server's default
  }
}

// The checked tree with its ids; rejects with InvalidError naming the node.
async function plan(client, tree, defaultQueue) {
  const { root, largest } = planTree(tree, defaultQueue);
  const limit = largest.size > LEAST_BULK ? await bulkLimit(client) : DEFAULT_BULK;
  if (largest.size > limit) {
    throw new InvalidError(`flow: ${pathOf(largest.at)}: the payload of ${largest.size} bytes is over the server's limit of ${limit} bytes (proto-max-bulk-len)`);
  }
  return root;
}

// The node's enqueue; resolves to its reply.
function send(run, n, parent) {
  const k = keys(n.queue);
  const row = k.rowRoot + n.id;
  const lane = String(n.lane);
  const lock = n.unique != null ? [k.uniqRoot + n.unique] : [];
  // A grouped child or root goes to its group's zset: the group's six KEYS
  // after the lock. A parent writes its group in its row only (its release
  // sends it to the group), so it takes no KEYS for it.
  const g = n.group;
  const group = g != null ? [k.gqRoot + g, k.grpRoot + g, k.gactRoot + g, k.gidx, k.rot, k.groups] : [];
  if (n.children.length) {
    return run('enqueue_parent', n.queue, [row, k.waiting, k.depsRoot + n.id, k.meta, ...lock],
      [n.id, n.payload, lane, n.policy, parent ? refOf(parent) : '', ...n.children.map(refOf), ...n.options]);
  }
  if (parent) {
    return run('enqueue_child', n.queue, [row, k.pending, k.meta, ...lock, ...group], [n.id, n.payload, lane, refOf(parent), ...n.options]);
  }
  if (n.options.length) {
    return run('enqueue', n.queue, [row, k.pending, ...lock, ...group], [n.id, n.payload, ...(n.lane !== 0 ? ['lane', lane] : []), ...n.options]);
  }
  if (n.lane !== 0) return run('enqueue_lane', n.queue, [row, k.pending], [n.id, n.payload, lane]);
  return run('enqueue', n.queue, [row, k.pending], [n.id, n.payload]);
}

function incomplete(cause, failed, waiting) {
  const text = `flow: the server refused ${failed}: ${cause && cause.message}`;
  if (!waiting.length) return new FlowIncomplete(`${text}; nothing of the tree was enqueued`, [], cause);
  let named = waiting.slice(0, NAMED_PARENTS).join(', ');
  if (waiting.length > NAMED_PARENTS) named += ` and ${waiting.length - NAMED_PARENTS} more`;
  const colon = waiting[0].indexOf(':');
  return new FlowIncomplete(`${text}; these parents now wait for a child that was not enqueued: ${named}. ` +
    `Cancel each (emq cancel QUEUE ID, e.g. emq cancel ${waiting[0].slice(0, colon)} ${waiting[0].slice(colon + 1)}), ` +
    'or mend the cause and enqueue the same tree again with these ids', waiting, cause);
}

// Sends the planned tree a level at a time, each node by run(script, queue,
// keys, args) (the queue's events stream added there). A refused node's subtree is
// left out and the rest goes in; then FlowIncomplete names the parents
// left waiting.
async function enqueue(run, root) {
  let level = [[root, null]];
  let first = null;
  const waiting = [];
  while (level.length) {
    const below = [];
    for (const [n, parent] of level) {
      let reply;
      try {
        reply = await send(run, n, parent);
      } catch (e) { // a refusal, or a lost connection: either way this node may be missing
        first = first || [fromReply(e), refOf(n)];
        if (parent && !waiting.includes(refOf(parent))) waiting.push(refOf(parent));
        continue;
      }
      if (Array.isArray(reply) && String(reply[1]) !== n.id) { // its unique key is held: not enqueued, nor its subtree
        if (!parent) { // the tree stands for the job holding the root's key
          n.id = String(reply[1]);
          n.children = [];
        }
        if (parent) {
          first = first || [new EchoMQError(`its unique key is held by ${reply[1]} (${reply[2]})`), refOf(n)];
          if (!waiting.includes(refOf(parent))) waiting.push(refOf(parent));
        }
        continue;
      }
      for (const c of n.children) below.push([c, n]);
    }
    level = below;
  }
  if (first) throw incomplete(first[0], first[1], waiting);
}

const idsOf = (n) => ({ queue: n.queue, id: n.id, children: n.children.map(idsOf) });

module.exports = { MAX_DEPTH, POLICIES, FlowIncomplete, plan, enqueue, idsOf };

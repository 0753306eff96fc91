'use strict';
// A producer's view of one queue: enqueue, flows, stats, inspect, wait, pause.
const { inspect: show } = require('node:util');
const ids = require('./ids');
const { clientFromUrl, handshake } = require('./connect');
const { InvalidError, JobFailed, JobNotFound, TimeoutError } = require('./errors');
const { Scripts } = require('./scripts');
const { EventsBook, Waiter } = require('./events');
const flows = require('./flows');
const { QUEUES_KEY, keys } = require('./keys');
const { payloadBytes, checkLane } = require('./values');
const { jobOptions, groupOption, enqueued } = require('./options');
const { sending } = require('./tracing');

const COUNTERS = ['claimed', 'completed', 'retried', 'dead', 'reaped', 'released', 'duplicates', 'replaced'];
const PAUSE_FIELDS = ['paused', 'paused_by', 'paused_reason', 'paused_until'];
const DEPTHS = ['pending', 'active', 'delayed', 'dead', 'waiting'];

// A pause's who, why and end, as `emq stats --json` shows them (null when
// not paused). until is read as claim reads it: the server's integer form.
function pauseOf(paused, by, reason, until) {
  if (paused !== '1') return null;
  const untilMs = until != null && /^(0|[1-9]\d{0,15})$/.test(until) && Number(until) <= 1e15 ? Number(until) : null;
  return {
    by: by || null,
    reason: reason || null,
    until_ms: untilMs,
    ended: false,
    broken_until: until != null && untilMs == null ? Buffer.from(until).subarray(0, 40).toString() : null,
  };
}

// wait's timeout: milliseconds, as a number (null waits for ever). An
// object, text, NaN or Infinity would make a wait never end.
function checkTimeoutMs(timeoutMs) {
  if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0 && timeoutMs <= 1e12)) {
    throw new InvalidError(`timeoutMs must be milliseconds (a number) in 0..10^12, or null to wait for ever: wait(id, 60000), not ${show(timeoutMs)}`);
  }
}

class Queue {
  // new Queue(urlOrClient, name, options): a URL as emq takes it, or an ioredis client.
  constructor(urlOrClient, name, options = {}) {
    ids.checkQueueName(name);
    this.name = name;
    this.ownsClient = typeof urlOrClient === 'string';
    this.client = this.ownsClient ? clientFromUrl(urlOrClient, options) : urlOrClient;
    this.keys = keys(name);
    this.scripts = new Scripts(this.client);
    this.events = new EventsBook(this.client);
    this.ready = null;
  }

  // A transition, with the queue's events stream when it keeps events.
  async run(script, queue, keys, args) {
    const [k, a] = await this.events.passed(script, queue, keys, args);
    return this.scripts.run(script, k, a);
  }

  ensure() {
    if (!this.ready) {
      this.ready = (async () => {
        await handshake(this.client);
        await this.client.sadd(QUEUES_KEY, this.name);
      })();
      this.ready.catch(() => { this.ready = null; });
    }
    return this.ready;
  }

  async serverTimeMs() {
    const [sec, usec] = await this.client.time();
    return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
  }

  async dueMs(at, delay) {
    if (at != null && delay != null) throw new InvalidError('give at or delay, not both');
    if (at != null) {
      const ms = at instanceof Date ? at.getTime() : at;
      if (!Number.isInteger(ms) || ms < 0 || ms > 1e15) throw new InvalidError('at must be a Date or epoch milliseconds in 0..10^15');
      return ms;
    }
    if (delay != null) {
      if (!Number.isInteger(delay) || delay < 0 || delay > 1e12) throw new InvalidError('delay must be milliseconds in 0..10^12');
      return (await this.serverTimeMs()) + delay; // due times are the server's clock, never ours
    }
    return null;
  }

  // Enqueues a job; resolves to its id. A duplicate id enqueues nothing and
  // resolves to the id all the same. With unique: KEY, at most one live job
  // of the queue holds KEY, and a duplicate resolves to the id of the job
  // holding it (enqueueResult says which happened).
  async enqueue(payload, options = {}) {
    return (await this.enqueueResult(payload, options)).id;
  }

  // As enqueue, resolving to {id, outcome, state}: outcome 'enqueued',
  // 'duplicate' or 'replaced' (uniqueMode 'replace': the pending or delayed
  // holder took this payload and due time); on a unique duplicate or
  // replace, id and state are the holder's. uniqueMode is 'finished' (the
  // default: held until it completes or dies), 'started' (until first
  // claimed), 'window' (uniqueFor ms, whatever the job does) or 'replace'.
  // With group: G the job belongs to group G (a tenant): a group-aware
  // claim (emqd's) serves the queue's groups in turn, by their weights
  // (docs/protocol.md, "Groups"); this package's own claim serves
  // ungrouped jobs only, as every emq/1 speaker's.
  //
  // traceparent (and tracestate): the W3C trace context the job joins;
  // emqd's span for it is that context's child. Without one, when
  // @opentelemetry/api is installed, a PRODUCER span `send <queue>` opens
  // under the active span and its context is written.
  async enqueueResult(payload, options = {}) {
    const { traceparent, tracestate } = options;
    return sending(this.name, { traceparent, tracestate }, (context) => this.enqueueOnce(payload, { ...options, ...context }));
  }

  async enqueueOnce(payload, { id, lane = 0, at, delay, unique, uniqueMode, uniqueFor, traceparent, tracestate, group } = {}) {
    const jobId = id == null ? ids.mintJobId() : id;
    ids.checkJobId(jobId);
    checkLane(lane);
    const body = payloadBytes(payload);
    const options = [...jobOptions({ unique, uniqueMode, uniqueFor, traceparent, tracestate }), ...groupOption(group)];
    await this.ensure();
    const due = await this.dueMs(at, delay);
    const row = this.keys.rowRoot + jobId;
    let reply;
    if (options.length > 0) {
      const k = [row, this.keys.pending];
      const a = [jobId, body, ...(lane !== 0 ? ['lane', String(lane)] : [])];
      if (due != null) {
        k.push(this.keys.delayed);
        a.push('due_ms', String(due));
      }
      if (unique != null) k.push(this.keys.uniqRoot + unique);
      if (group != null) {
        k.push(this.keys.gqRoot + group, this.keys.grpRoot + group, this.keys.gactRoot + group, this.keys.gidx, this.keys.rot, this.keys.groups);
      }
      reply = await this.run('enqueue', this.name, k, [...a, ...options]);
    } else if (due != null) {
      reply = await this.run('enqueue_at', this.name, [row, this.keys.delayed], [jobId, body, String(due), String(lane)]);
    } else if (lane !== 0) {
      reply = await this.run('enqueue_lane', this.name, [row, this.keys.pending], [jobId, body, String(lane)]);
    } else {
      reply = await this.run('enqueue', this.name, [row, this.keys.pending], [jobId, body]);
    }
    return enqueued(jobId, reply);
  }

  // Enqueues a tree of jobs, each parent before its children. A node is
  // {payload, queue?, id?, lane?, onChildFailure?, children?}; a node
  // without children is a plain job (a child of its parent, if it has
  // one). Resolves to the same shape with every node's queue and id:
  // {queue, id, children}. The whole tree is checked first (InvalidError
  // naming the node: a job given twice, more than 64 levels, ...); a
  // refusal by the server half-way rejects with FlowIncomplete.
  //
  // A node's traceparent and tracestate are its trace context; a node
  // without one carries its parent's, so the flow is one trace. A root
  // without one gets the caller's, as enqueue does.
  //
  // A node's group (as enqueue's group) is its own: a child or a root
  // waits in its group's turn; a parent carries its group and takes its
  // turn there once its children have released it.
  async enqueueFlow(tree) {
    if (tree == null || typeof tree !== 'object' || tree.traceparent != null) return this.enqueueFlowOnce(tree);
    return sending(tree.queue || this.name, {},
      (context) => this.enqueueFlowOnce(context.traceparent != null ? { ...tree, ...context } : tree));
  }

  async enqueueFlowOnce(tree) {
    const planned = await flows.plan(this.client, tree, this.name);
    await this.ensure();
    const others = new Set();
    for (let level = [planned]; level.length; level = level.flatMap((n) => n.children)) {
      for (const n of level) if (n.queue !== this.name) others.add(n.queue);
    }
    if (others.size) await this.client.sadd(QUEUES_KEY, ...[...others].sort());
    await flows.enqueue((script, queue, k, args) => this.run(script, queue, k, args), planned);
    return flows.idsOf(planned);
  }

  // The queue as one object of `emq stats --json` (waiting: parents
  // waiting for children). The dead depth is `dead`, the dead counter
  // `counters.dead`; a counter another writer broke is null, as emq shows it.
  async stats() {
    const p = this.client.pipeline();
    for (const d of DEPTHS) p.zcard(this.keys[d]);
    p.hmget(this.keys.meta, ...PAUSE_FIELDS);
    p.hmget(this.keys.stats, ...COUNTERS);
    const r = (await p.exec()).map(([err, v]) => { if (err) throw err; return v; });
    const [paused, by, reason, until] = r[5];
    const out = { queue: this.name, paused: paused === '1' };
    DEPTHS.slice(0, 4).forEach((d, i) => { out[d] = r[i]; });
    out.counters = {};
    COUNTERS.forEach((c, i) => {
      const v = r[6][i];
      out.counters[c] = v == null ? 0 : /^-?\d+$/.test(v) ? Number(v) : null;
    });
    out.pause = pauseOf(paused, by, reason, until);
    // The server's clock, only for a pause with an end: has it come?
    if (out.pause && out.pause.until_ms != null) out.pause.ended = out.pause.until_ms <= (await this.serverTimeMs());
    out.waiting = r[4];
    return out;
  }

  // The job's row (payload, result, error as Buffers; the rest as text or
  // numbers) and where it stands, or null when there is no such job.
  async inspect(id) {
    ids.checkWireGate(id);
    const p = this.client.pipeline();
    p.hgetallBuffer(this.keys.rowRoot + id);
    for (const s of ['delayed', 'active', 'dead', 'waiting']) p.zscore(this.keys[s], id);
    const r = (await p.exec()).map(([err, v]) => { if (err) throw err; return v; });
    const row = r[0];
    if (!row || Object.keys(row).length === 0) return null;
    const out = { queue: this.name, id, state: null, attempts: 0, lease_epoch: 0, failures: 0, lane: 0, payload: Buffer.alloc(0), result: null, error: null };
    for (const [f, v] of Object.entries(row)) {
      out[f] = ['payload', 'result', 'error'].includes(f) ? v : v.toString('utf8');
    }
    for (const f of ['attempts', 'lease_epoch', 'failures', 'lane', 'children']) {
      if (typeof out[f] === 'string' && /^-?\d+$/.test(out[f])) out[f] = Number(out[f]);
    }
    ['due_ms', 'lease_until_ms', 'died_ms', 'waiting_since_ms'].forEach((name, i) => {
      if (r[1 + i] != null) out[name] = Number(r[1 + i]);
    });
    const minted = ids.mintedAtMs(id);
    if (minted != null) out.minted_ms = minted;
    return out;
  }

  // Waits for the job to end: resolves to its result (a Buffer) when it
  // completed. By the queue's events stream when it keeps events (no
  // polling), by polling otherwise. Rejects with JobFailed when it died,
  // JobNotFound when there is no such job, TimeoutError when timeoutMs pass
  // first. A row deleted on completion (a queue that keeps no completed
  // rows) resolves to null.
  async wait(id, timeoutMs) {
    ids.checkWireGate(id);
    if (timeoutMs != null) checkTimeoutMs(timeoutMs);
    if ((await this.client.hget(this.keys.rowRoot + id, 'state')) == null) {
      throw new JobNotFound(`no job ${id} in queue ${this.name}`);
    }
    const ends = await this.waitMany([id], timeoutMs);
    const end = ends.get(id);
    if (!end) {
      const state = (await this.client.hget(this.keys.rowRoot + id, 'state')) || 'gone';
      throw new TimeoutError(`${id} is still ${state} after ${timeoutMs} ms`);
    }
    if (end.state === 'dead') throw new JobFailed(id, end.error || Buffer.alloc(0), end.attempts);
    return end.state === 'completed' ? end.result || Buffer.alloc(0) : null;
  }

  // Waits for many jobs at once, as wait does: a Map id -> end for each
  // that ended within timeoutMs (the others are left out), an end being
  // {state: 'completed'|'dead'|'gone', result, error, attempts}.
  async waitMany(jobIds, timeoutMs) {
    if (timeoutMs != null) checkTimeoutMs(timeoutMs);
    const unique = [...new Set(jobIds)];
    for (const id of unique) ids.checkWireGate(id);
    const waiter = new Waiter(this.client, this.name, this.keys.rowRoot);
    const ended = (row) => row[0] == null || ['completed', 'dead'].includes(row[0].toString());
    const rows = await waiter.wait(unique, ended, timeoutMs);
    const out = new Map();
    for (const [id, [state, result, error, attempts]] of rows) {
      out.set(id, {
        state: state == null ? 'gone' : state.toString(), result, error,
        attempts: /^\d+$/.test(String(attempts || '')) ? Number(attempts) : 0,
      });
    }
    return out;
  }

  // Stops claims; by (<= 64 bytes) and reason (<= 256) say who and why,
  // forMs ends it by itself that long after now (the server's clock).
  async pause({ by = '', reason = '', forMs } = {}) {
    if (Buffer.byteLength(by) > 64 || Buffer.byteLength(reason) > 256) {
      throw new InvalidError('pause: by is at most 64 bytes, reason at most 256');
    }
    const fields = { paused: '1', paused_by: by, paused_reason: reason, paused_until: '' };
    if (forMs !== undefined) {
      if (!Number.isSafeInteger(forMs) || forMs < 1) throw new InvalidError('pause: forMs must be a positive integer');
      fields.paused_until = String((await this.serverTimeMs()) + forMs);
    }
    // The old fields go first: between the two the queue is at most paused
    // with no end, never lifted by an earlier pause's end.
    const gone = Object.keys(fields).filter((f) => fields[f] === '');
    const p = this.client.pipeline();
    if (gone.length) p.hdel(this.keys.meta, ...gone);
    p.hset(this.keys.meta, ...Object.entries(fields).filter(([, v]) => v !== '').flat());
    for (const [err] of await p.exec()) if (err) throw err;
  }

  async resume() { await this.client.hdel(this.keys.meta, ...PAUSE_FIELDS); }

  // Closes the connection when the queue opened it from a URL.
  async close() { if (this.ownsClient) await this.client.quit(); }
}

module.exports = { Queue };

'use strict';
// A queue's events (PROTOCOL.md, "Events"): which queues keep a stream, the
// stream passed to every transition that writes a job's state, and waiting
// for jobs by the stream (by polling where a queue keeps none).
const { metaKey, streamKey } = require('./keys');
const { takesStream } = require('./scripts');

const MAX_LENGTH = 10000000;
const FINAL_EVENTS = new Set(['completed', 'dead', 'removed']);
const FRESH_MS = 1000;
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 500;
// The most one XREAD blocks: past it the rows are read once more, so a
// speaker that did not pass the stream strands no waiter for longer.
const RECHECK_MS = 60000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// meta's events as read: its length, 0 when absent or not an integer in 1..10^7.
function decodeLength(raw) {
  const text = raw == null ? '' : raw.toString();
  if (!/^\d{1,8}$/.test(text)) return 0;
  const n = Number(text);
  return n >= 1 && n <= MAX_LENGTH ? n : 0;
}

// Each queue's events length as last read from its meta (once a second at most).
class EventsBook {
  constructor(client) {
    this.client = client;
    this.known = new Map();
  }

  async length(queue) {
    const k = this.known.get(queue);
    if (k && Date.now() - k.at < FRESH_MS) return k.length;
    const length = decodeLength(await this.client.hget(metaKey(queue), 'events'));
    this.known.set(queue, { length, at: Date.now() });
    return length;
  }

  // keys and args, with the stream and its length added when the queue keeps events.
  async passed(script, queue, keys, args) {
    const n = takesStream(script) ? await this.length(queue) : 0;
    return n === 0 ? [keys, args] : [[...keys, streamKey(queue)], [...args, String(n)]];
  }
}

function entryOrder(id) {
  const [ms, seq] = String(id).split('-');
  return [BigInt(ms || 0), BigInt(seq || 0)];
}

function after(a, b) {
  const [x, y] = [entryOrder(a), entryOrder(b)];
  return x[0] > y[0] || (x[0] === y[0] && x[1] > y[1]);
}

function unwrap(results) {
  return results.map(([err, v]) => { if (err) throw err; return v; });
}

// Waits for jobs of one queue to end, on a connection of its own (a blocked
// XREAD holds it). ended(row) says whether a row [state, result, error,
// attempts] (Buffers or null) ends its job.
class Waiter {
  constructor(client, queue, rowRoot) {
    Object.assign(this, { client, queue, rowRoot, stream: streamKey(queue), commands: 0 });
  }

  async rows(conn, ids) {
    this.commands += ids.length;
    const p = conn.pipeline();
    for (const id of ids) p.hmgetBuffer(this.rowRoot + id, 'state', 'result', 'error', 'attempts');
    const r = unwrap(await p.exec());
    return new Map(ids.map((id, i) => [id, r[i]]));
  }

  // The rows and the stream's last entry id at one instant (MULTI).
  async start(conn, ids) {
    this.commands += ids.length + 4;
    const m = conn.multi();
    m.hget(metaKey(this.queue), 'events');
    m.xrevrange(this.stream, '+', '-', 'COUNT', 1);
    for (const id of ids) m.hmgetBuffer(this.rowRoot + id, 'state', 'result', 'error', 'attempts');
    const r = unwrap(await m.exec());
    const last = r[1].length ? r[1][0][0] : '0-0';
    return { keepsEvents: decodeLength(r[0]) > 0, last, rows: new Map(ids.map((id, i) => [id, r[2 + i]])) };
  }

  // One blocking read from last: the ids whose rows to read again, and the new position.
  async read(conn, open, last, blockMs) {
    this.commands += 2;
    const p = conn.pipeline();
    p.xread('COUNT', 1000, 'BLOCK', Math.max(1, Math.floor(blockMs)), 'STREAMS', this.stream, last);
    p.xrange(this.stream, '-', '+', 'COUNT', 1);
    const [got, first] = unwrap(await p.exec());
    if (!got) return { named: open, last };
    const entries = got[0][1];
    const trimmedPast = first.length > 0 && after(first[0][0], last);
    const next = entries.length ? entries[entries.length - 1][0] : last;
    if (trimmedPast) return { named: open, last: next };
    const wanted = new Set(open);
    const named = new Set();
    for (const [, fields] of entries) {
      const f = {};
      for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]] = fields[i + 1];
      if (wanted.has(f.id) && FINAL_EVENTS.has(f.event)) named.add(f.id);
    }
    return { named: [...named], last: next };
  }

  // Rows of each id once ended(row) says so; ids still open at timeoutMs are left out.
  async wait(ids, ended, timeoutMs) {
    const until = timeoutMs == null ? null : Date.now() + timeoutMs;
    const conn = this.client.duplicate();
    try {
      const start = await this.start(conn, ids);
      let { last } = start;
      const done = new Map();
      for (const [id, row] of start.rows) if (ended(row)) done.set(id, row);
      let open = ids.filter((id) => !done.has(id));
      let step = FIRST_POLL_MS;
      while (open.length) {
        const rest = until == null ? null : until - Date.now();
        if (rest != null && rest <= 0) break;
        let named = open;
        if (!start.keepsEvents) {
          await sleep(rest == null ? step : Math.min(step, rest));
          step = Math.min(step * 2, MAX_POLL_MS);
        } else {
          ({ named, last } = await this.read(conn, open, last, rest == null ? RECHECK_MS : Math.min(rest, RECHECK_MS)));
        }
        if (named.length) for (const [id, row] of await this.rows(conn, named)) if (ended(row)) done.set(id, row);
        open = open.filter((id) => !done.has(id));
      }
      return done;
    } finally {
      conn.disconnect();
    }
  }
}

module.exports = { EventsBook, Waiter, decodeLength, streamKey, MAX_LENGTH };

'use strict';
// The fleet registry (PROTOCOL.md, "Daemons: who runs what"): every live
// daemon, its state, how busy it is and, when asked, the jobs it runs now.
// Read-only: plain commands on the {emq} keys, as `emq daemons` reads them.
const { clientFromUrl } = require('./connect');
const { DAEMONS_KEY, daemonKey } = require('./keys');

// busy: jobs its slots run now (at most slots); prefetched: jobs claimed
// ahead, waiting in the daemon for a slot.
const NUMBERS = ['pid', 'started_ms', 'beat_ms', 'slots', 'busy', 'prefetched'];

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch (e) {
    return undefined;
  }
}

function daemonOf(id, fields) {
  const d = { id, ...fields };
  for (const f of NUMBERS) d[f] = /^-?\d+$/.test(d[f] || '') ? Number(d[f]) : 0;
  const queues = parseJson(d.queues || '[]');
  d.queues = Array.isArray(queues) ? queues.filter((q) => typeof q === 'string') : [];
  const m = /^(.+):(\d+)$/.exec(d.ack || '');
  d.ack = m ? { signal: m[1], at_ms: Number(m[2]) } : null;
  return d;
}

function jobOf(ref, text) {
  const job = parseJson(text);
  if (!job || typeof job !== 'object' || Array.isArray(job)) return null;
  const colon = ref.indexOf(':');
  // Claimed ahead and not started: started_ms is when it was claimed.
  return { queue: ref.slice(0, colon), id: ref.slice(colon + 1), ...job, prefetched: job.prefetched === true };
}

// Every live daemon of {emq}:daemons, by id: id, host, pid, version, state,
// queues, slots, busy, prefetched, executor, started_ms, beat_ms, ack; and
// jobs, oldest first, with { jobs: true }, each with prefetched true when it
// waits in the daemon for a slot. A member whose hash has expired (it stopped
// beating) is left out.
async function daemons(urlOrClient, { jobs = false, ...options } = {}) {
  const owns = typeof urlOrClient === 'string';
  const client = owns ? clientFromUrl(urlOrClient, options) : urlOrClient;
  try {
    const ids = (await client.zrange(DAEMONS_KEY, 0, -1)).sort();
    const p = client.pipeline();
    for (const id of ids) {
      p.hgetall(daemonKey(id));
      if (jobs) p.hgetall(daemonKey(id, ':work'));
    }
    const r = ids.length ? (await p.exec()).map(([err, v]) => { if (err) throw err; return v; }) : [];
    const per = jobs ? 2 : 1;
    const out = [];
    ids.forEach((id, i) => {
      const fields = r[i * per];
      if (!fields || !Object.keys(fields).length) return;
      const d = daemonOf(id, fields);
      if (jobs) {
        d.jobs = Object.entries(r[i * per + 1]).map(([ref, text]) => jobOf(ref, text)).filter(Boolean)
          .sort((a, b) => (a.started_ms || 0) - (b.started_ms || 0));
      }
      out.push(d);
    });
    return out;
  } finally {
    if (owns) await client.quit();
  }
}

module.exports = { daemons };

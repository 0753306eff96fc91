'use strict';
// Runs tests/wire-cases/*.json (format: tests/wire-cases/README.md) through
// this package's Scripts: the same cases the C++ library and the Python
// package run, so a drift between speakers fails a test.
const fs = require('node:fs');
const path = require('node:path');
const { Scripts } = require('../lib/scripts');

const WHOLE_NOW = /^\$NOW([+-]\d+)?$/;

class Scope {
  constructor(q, q2, t0) { Object.assign(this, { q, q2, t0, t1: t0 }); }

  text(s) {
    return s.replaceAll('$Q2', this.q2).replaceAll('$Q', this.q)
      .replace(/\$NOW([+-]\d+)?/g, (_, off) => String(this.t0 + Number(off || 0)));
  }

  bytes(v) {
    if (v !== null && typeof v === 'object') return Buffer.from(v.hex, 'hex');
    if (typeof v === 'number') return Buffer.from(String(v));
    return Buffer.from(this.text(v), 'utf8');
  }

  matches(want, got) {
    const g = Buffer.isBuffer(got) ? got : Buffer.from(String(got));
    const m = typeof want === 'string' && WHOLE_NOW.exec(want);
    if (m) {
      const off = Number(m[1] || 0);
      const v = Number(g.toString());
      return /^-?\d+$/.test(g.toString()) && String(v) === g.toString() && v >= this.t0 + off && v <= this.t1 + off;
    }
    return this.bytes(want).equals(g);
  }
}

async function serverMs(r) {
  const [sec, usec] = await r.time();
  return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
}

async function seed(r, s, keyspace) {
  for (const [keyText, v] of Object.entries(keyspace)) {
    const key = s.text(keyText);
    if (v.hash) {
      const args = [];
      for (const [f, x] of Object.entries(v.hash)) args.push(s.text(f), s.bytes(x));
      await r.hset(key, ...args);
    } else if (v.zset) {
      for (const [member, score] of v.zset) await r.zadd(key, s.bytes(score), s.bytes(member));
    } else if (v.set) {
      await r.sadd(key, ...v.set.map((m) => s.bytes(m)));
    } else if (v.list) {
      await r.rpush(key, ...v.list.map((m) => s.bytes(m)));
    } else if (v.stream) {
      for (const entry of v.stream) await r.xadd(key, '*', ...entry.map((f) => s.bytes(f)));
    } else {
      await r.set(key, s.bytes(v.string));
    }
    if (v.expires !== undefined) await r.pexpireat(key, s.bytes(v.expires));
  }
}

async function compareKey(r, s, key, want) {
  const kind = await r.type(key);
  const wantKind = ['hash', 'zset', 'set', 'list', 'stream', 'string'].find((k) => k in want);
  if (kind !== wantKind) return [`${key} is a ${kind}, not a ${wantKind}`];
  const out = [];
  if (kind === 'hash') {
    const got = await r.hgetallBuffer(key);
    for (const [f, v] of Object.entries(want.hash)) {
      const name = s.text(f);
      if (!(name in got)) out.push(`${key}: field ${f} is missing`);
      else if (!s.matches(v, got[name])) out.push(`${key}: field ${f} is ${JSON.stringify(got[name].toString().slice(0, 200))}, not ${JSON.stringify(v)}`);
      delete got[name];
    }
    for (const f of Object.keys(got)) out.push(`${key}: field ${f} is not expected`);
  } else if (kind === 'zset') {
    const flat = await r.zrangeBuffer(key, 0, -1, 'WITHSCORES');
    const got = new Map();
    for (let i = 0; i < flat.length; i += 2) got.set(flat[i].toString('hex'), Buffer.from(String(Math.round(Number(flat[i + 1].toString())))));
    for (const [member, score] of want.zset) {
      const k = s.bytes(member).toString('hex');
      if (!got.has(k)) out.push(`${key}: member ${member} is missing`);
      else if (!s.matches(score, got.get(k))) out.push(`${key}: member ${member} scores ${got.get(k)}, not ${score}`);
      got.delete(k);
    }
    for (const k of got.keys()) out.push(`${key}: member ${Buffer.from(k, 'hex')} is not expected`);
  } else if (kind === 'set') {
    const got = (await r.smembersBuffer(key)).map((b) => b.toString('hex')).sort();
    const exp = want.set.map((m) => s.bytes(m).toString('hex')).sort();
    if (JSON.stringify(got) !== JSON.stringify(exp)) out.push(`${key}: members differ`);
  } else if (kind === 'list') {
    const got = await r.lrangeBuffer(key, 0, -1);
    if (got.length !== want.list.length || !want.list.every((w, i) => s.matches(w, got[i]))) {
      out.push(`${key} holds another list`);
    }
  } else if (kind === 'stream') {
    out.push(...await compareStream(r, s, key, want.stream));
  } else if (!s.matches(want.string, await r.getBuffer(key))) {
    out.push(`${key} holds another value`);
  }
  const at = await r.call('PEXPIRETIME', key);
  if ('expires' in want) {
    if (at < 0 || !s.matches(want.expires, at)) out.push(`${key} expires at ${at}, not ${want.expires}`);
  } else if (at >= 0) {
    out.push(`${key} expires at ${at} but should not expire`);
  }
  return out;
}

// A stream's entries in order, ids aside (they are the server's).
async function compareStream(r, s, key, want) {
  const got = await r.xrangeBuffer(key, '-', '+');
  const out = [];
  if (got.length !== want.length) out.push(`${key} holds ${got.length} entries, not ${want.length}`);
  for (let i = 0; i < Math.min(got.length, want.length); i += 1) {
    const fields = got[i][1];
    const same = fields.length === want[i].length && fields.every((f, j) => s.matches(want[i][j], f));
    if (!same) out.push(`${key}: entry ${i} is ${fields.map(String).join(' ')}, not ${JSON.stringify(want[i])}`);
  }
  return out;
}

async function compareKeyspace(r, s, want) {
  let out = [];
  const expected = new Set();
  for (const [keyText, v] of Object.entries(want)) {
    const key = s.text(keyText);
    expected.add(key);
    if (!(await r.exists(key))) out.push(`${key} is missing`);
    else out = out.concat(await compareKey(r, s, key, v));
  }
  for (const q of [s.q, s.q2]) {
    for (const k of await r.keys(`emq:{${q}}:*`)) if (!expected.has(k)) out.push(`${k} is not expected`);
  }
  return out;
}

function compareReply(s, want, got) {
  if (want !== null && typeof want === 'object' && !Array.isArray(want) && 'error' in want) {
    const text = s.text(want.error);
    if (!(got instanceof Error)) return `answered ${JSON.stringify(got)} instead of ${text}`;
    return got.message === text ? '' : `refused with '${got.message}', not '${text}'`;
  }
  if (got instanceof Error) return `refused with '${got.message}'`;
  if (want === null) return got === null ? '' : 'is not nil';
  if (typeof want === 'number') return got === want ? '' : `is ${JSON.stringify(got)}, not ${want}`;
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) return `is not an array of ${want.length}`;
    for (let i = 0; i < want.length; i++) {
      const d = compareReply(s, want[i], got[i]);
      if (d) return `[${i}] ${d}`;
    }
    return '';
  }
  if (!Buffer.isBuffer(got)) return `is ${JSON.stringify(got)}, not a string`;
  return s.matches(want, got) ? '' : `is '${got.toString().slice(0, 200)}', not ${JSON.stringify(want)}`;
}

function loadCases(dir) {
  const out = {};
  for (const f of fs.readdirSync(dir).sort()) {
    if (f.endsWith('.json')) out[f.slice(0, -5)] = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  }
  return out;
}

let counter = 0;

// The mismatches of one case, [] when it holds.
async function runCase(r, c) {
  counter += 1;
  const q = `wcjs${process.pid}-${counter}`;
  const s = new Scope(q, `${q}-b`, await serverMs(r));
  await seed(r, s, c.before);
  let got;
  try {
    got = await new Scripts(r).raw(c.call.script, c.call.keys.map((k) => s.bytes(k)), c.call.args.map((a) => s.bytes(a)));
  } catch (e) {
    got = e;
  }
  s.t1 = await serverMs(r);
  const out = [];
  const d = compareReply(s, c.reply, got);
  if (d) out.push(`the reply ${d}`);
  return out.concat(await compareKeyspace(r, s, c.after || c.before));
}

module.exports = { loadCases, runCase };

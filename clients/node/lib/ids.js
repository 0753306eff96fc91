'use strict';
// Job ids and queue names, by the rules of docs/protocol.md and lib/src/job_id.cpp.
// Minted ids are JOB_ + a 26-character ULID (Crockford base32): 48 bits of
// milliseconds, 80 random bits that a second id in the same (or an earlier)
// millisecond increments, so byte order is mint order within this process.
const crypto = require('node:crypto');
const { InvalidError, KindError } = require('./errors');

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ID_TAIL = /^[0-9A-Za-z_.:-]{1,128}$/;
const QUEUE = /^[A-Za-z0-9_.-]{1,64}$/;
const MASK80 = (1n << 80n) - 1n;

let lastMs = 0n;
let rand = 0n;

function encode(ms, r) {
  const value = (ms << 80n) | r; // 128 bits, read as 130 with two leading zeros
  let out = 'JOB_';
  for (let i = 25; i >= 0; i--) out += CROCKFORD[Number((value >> BigInt(5 * i)) & 31n)];
  return out;
}

function mintJobId(unixMs = Date.now()) {
  const ms = BigInt(unixMs) & ((1n << 48n) - 1n);
  if (ms > lastMs) {
    lastMs = ms;
    const b = crypto.randomBytes(10);
    const hi = BigInt(b.readUInt16BE(0));
    const lo = b.readBigUInt64BE(2) >> 1n; // the top bit clear, as the C++ minter keeps it
    rand = (hi << 64n) | lo;
  } else {
    rand = (rand + 1n) & MASK80;
    if (rand === 0n) lastMs += 1n; // 80 bits spent within one millisecond: borrow the next
  }
  return encode(lastMs, rand);
}

// The millisecond a minted id was made, or null for any other id.
function mintedAtMs(id) {
  if (typeof id !== 'string' || id.length !== 30 || !id.startsWith('JOB_')) return null;
  let ms = 0n;
  for (let i = 0; i < 26; i++) {
    const v = CROCKFORD.indexOf(id[4 + i]);
    if (v < 0) return null;
    if (i < 10) ms = (ms << 5n) | BigInt(v);
  }
  return ms >> 48n ? null : Number(ms);
}

const validJobId = (id) => typeof id === 'string' && id.startsWith('JOB_') && ID_TAIL.test(id.slice(4));
const validQueueName = (name) => typeof name === 'string' && QUEUE.test(name);

// Names and ids are strings. Bytes are refused, not guessed at: a key built
// from a Buffer's own text names a queue no daemon reads.
function checkText(value, what) {
  if (typeof value === 'string') return;
  if (value instanceof Uint8Array) {
    const head = Buffer.from(value.subarray(0, 80)).toString('latin1');
    throw new InvalidError(`${what} given as a Buffer (${head}): pass a string, e.g. value.toString('ascii')`);
  }
  throw new InvalidError(`${what} must be a string, not ${value === null ? 'null' : typeof value}`);
}

function checkWireGate(id) {
  checkText(id, 'a job id');
  if (!id.startsWith('JOB')) {
    throw new KindError(`EMQKIND ${JSON.stringify(id)} is not JOB-namespaced: ids are JOB_ then 1-128 bytes`);
  }
}

// The full host-side check, for an id a user gives or a speaker mints.
function checkJobId(id) {
  if (validJobId(id)) return;
  checkWireGate(id);
  throw new InvalidError(`${JSON.stringify(id)} is not a valid job id: use JOB_ then 1-128 bytes of 0-9 A-Z a-z _ . : -`);
}

function checkQueueName(name) {
  checkText(name, 'a queue name');
  if (!validQueueName(name)) {
    throw new InvalidError(`${JSON.stringify(name)} is not a valid queue name: use 1-64 bytes of A-Z a-z 0-9 _ . -`);
  }
}

module.exports = { mintJobId, mintedAtMs, validJobId, validQueueName, checkJobId, checkWireGate, checkQueueName };

'use strict';
// What a job carries, checked as the wire takes it: its payload (bytes) and
// its lane. Shared by queue and flows, which require it; it requires neither.
const { InvalidError } = require('./errors');

function payloadBytes(p) {
  if (Buffer.isBuffer(p)) return p;
  if (typeof p === 'string') return Buffer.from(p, 'utf8');
  if (p instanceof Uint8Array) return Buffer.from(p);
  throw new InvalidError(`a payload is a Buffer or a string, not ${typeof p}`);
}

function checkLane(lane) {
  if (!Number.isInteger(lane) || lane < -1000 || lane > 1000) {
    throw new InvalidError(`lane ${lane} is out of range: use an integer in -1000..1000`);
  }
  return lane;
}

module.exports = { payloadBytes, checkLane };

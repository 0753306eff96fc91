'use strict';
// The named options of the optioned enqueue (docs/protocol.md, "Unique
// jobs"), checked as the wire takes them, and what an enqueue form's reply
// says. Shared by queue and flows, which require it; it requires neither.
const { inspect: show } = require('node:util');
const { InvalidError } = require('./errors');

const UNIQUE_MODES = ['finished', 'started', 'window', 'replace'];

// The named options of the optioned enqueue (docs/protocol.md), checked:
// [name, value, ...]. uniqueFor is the window of uniqueMode 'window'
// (implied when it is given), in milliseconds.
function jobOptions({ unique, uniqueMode, uniqueFor, traceparent, tracestate } = {}) {
  const out = [];
  if (unique != null) {
    if (typeof unique !== 'string' || !/^[0-9A-Za-z_.:-]{1,128}$/.test(unique)) {
      throw new InvalidError(`unique ${show(unique)} is not a unique key: use 1-128 characters of A-Z a-z 0-9 _ . : - (hash anything longer)`);
    }
    out.push('unique', unique);
    if (uniqueMode != null) {
      if (!UNIQUE_MODES.includes(uniqueMode)) throw new InvalidError(`uniqueMode must be one of ${UNIQUE_MODES.join(', ')}, not ${show(uniqueMode)}`);
      if (uniqueMode === 'window' && uniqueFor == null) throw new InvalidError('uniqueMode window needs uniqueFor: how long the key is held, in ms');
      if (uniqueMode !== 'window' && uniqueFor != null) throw new InvalidError(`uniqueFor is the window of uniqueMode window, not of ${uniqueMode}`);
      out.push('unique_mode', uniqueMode);
    }
    if (uniqueFor != null) {
      if (!Number.isInteger(uniqueFor) || uniqueFor < 1 || uniqueFor > 1e12) throw new InvalidError('uniqueFor must be milliseconds in 1..10^12');
      out.push('unique_for_ms', String(uniqueFor));
    }
  } else if (uniqueMode != null || uniqueFor != null) {
    throw new InvalidError('uniqueMode and uniqueFor need unique: the key');
  }
  if (traceparent != null) {
    if (typeof traceparent !== 'string' || Buffer.byteLength(traceparent) !== 55) throw new InvalidError('traceparent must be a W3C traceparent header of 55 characters');
    out.push('traceparent', traceparent);
  }
  if (tracestate != null) {
    if (typeof tracestate !== 'string' || Buffer.byteLength(tracestate) > 512) throw new InvalidError('tracestate must be text of at most 512 bytes');
    out.push('tracestate', tracestate);
  }
  return out;
}

// An enqueue form's reply: 1, 0, or [code, holder, state]: {id, outcome,
// state}, id being the holder's on a unique duplicate or replace.
function enqueued(jobId, reply) {
  if (Array.isArray(reply)) {
    const [code, holder, state] = reply;
    return { id: String(holder), outcome: Number(code) === 2 ? 'replaced' : 'duplicate', state: String(state) };
  }
  return { id: jobId, outcome: Number(reply) === 1 ? 'enqueued' : 'duplicate', state: null };
}

// The optioned enqueue's group option (docs/protocol.md, "Groups"),
// checked: [name, value], or [] without one.
function groupOption(group) {
  if (group == null) return [];
  if (typeof group !== 'string' || !/^[0-9A-Za-z_.:-]{1,128}$/.test(group)) {
    throw new InvalidError(`group ${show(group)} is not a group: use 1-128 characters of A-Z a-z 0-9 _ . : -`);
  }
  return ['group', group];
}

module.exports = { UNIQUE_MODES, jobOptions, groupOption, enqueued };

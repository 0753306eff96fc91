'use strict';
// Handler helpers for emqd (docs/handlers.md): the loop, so a handler is one function.
//
//   const { handler } = require('echomq');
//   handler.pool(async (payload, job) => {     // payload: Buffer; job: {id, queue, attempt, deadlineMs, children}
//     if (payload.length === 0) throw new handler.Permanent('empty payload'); // to the dead set at once
//     job.progress('50%');                      // how far it got: a string, or anything JSON.stringify takes
//     return payload.toString().toUpperCase();  // Buffer, string, null, or anything JSON.stringify takes
//   });
//   // handler.exec(fn) for an exec handler: stdin in, stdout out, exit 0 / 65 / 1.
//
// Any other exception (or rejection) fails the job for a retry, with its message as the error.
// A parent in a flow finds its children's outcomes in job.children.
const fs = require('node:fs');
const readline = require('node:readline');

const EXIT_PERMANENT = 65; // EX_DATAERR: emqd's default permanent_exit_codes

class Permanent extends Error {
  constructor(message) {
    super(message);
    this.name = 'Permanent';
  }
}

function resultBytes(v) {
  if (v == null) return Buffer.alloc(0);
  if (Buffer.isBuffer(v)) return v;
  if (v instanceof Uint8Array) return Buffer.from(v);
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  return Buffer.from(JSON.stringify(v), 'utf8');
}

const errorText = (e) => (e && e.message) || String(e);

function isUtf8(buf) {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(buf);
    return true;
  } catch {
    return false;
  }
}

function bytesOf(entry, name) {
  if (`${name}_b64` in entry) return Buffer.from(entry[`${name}_b64`], 'base64');
  return name in entry ? Buffer.from(entry[name], 'utf8') : null;
}

// emqd's children array (docs/handlers.md), in <queue>:<id> order: each
// {queue, id, outcome: 'completed' | 'dead', result: Buffer | null, error: Buffer | null}.
function children(entries) {
  return (entries || []).map((e) => ({ queue: e.queue, id: e.id, outcome: e.outcome, result: bytesOf(e, 'result'), error: bytesOf(e, 'error') }));
}

// The reply object for one frame (a parsed stdin line); report(id, value)
// sends a progress line (job.progress does nothing without it).
async function answer(fn, frame, report) {
  const payload = 'payload_b64' in frame ? Buffer.from(frame.payload_b64, 'base64') : Buffer.from(frame.payload || '', 'utf8');
  const job = { id: frame.id, queue: frame.queue || '', attempt: frame.attempt || 1, deadlineMs: frame.deadline_ms || 0, children: children(frame.children),
    progress: (value) => { if (report) report(frame.id, value); },
  };
  let result;
  try {
    result = resultBytes(await fn(payload, job));
  } catch (e) {
    if (!(e instanceof Permanent)) process.stderr.write(`job ${job.id}: ${e && e.stack ? e.stack.split('\n')[0] : e}\n`);
    return { id: job.id, ok: false, error: errorText(e), permanent: e instanceof Permanent };
  }
  return isUtf8(result)
    ? { id: job.id, ok: true, result: result.toString('utf8') }
    : { id: job.id, ok: true, result_b64: result.toString('base64') };
}

// Runs a pool handler: one NDJSON frame in, one reply out, until stdin ends.
async function pool(fn, input = process.stdin, output = process.stdout) {
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const report = (id, progress) => output.write(`${JSON.stringify({ id, progress })}\n`);
    const reply = await answer(fn, JSON.parse(line), report);
    await new Promise((resolve) => output.write(`${JSON.stringify(reply)}\n`, resolve));
  }
}

// Each report as one line to EMQ_PROGRESS_FD, when emqd gave one.
function progressFd(fd) {
  if (!/^\d+$/.test(fd || '')) return () => {};
  return (value) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    try {
      fs.writeSync(Number(fd), `${text.split(/\r?\n/).join(' ')}\n`);
    } catch {
      // emqd stopped listening: the job goes on
    }
  };
}

// Runs an exec handler: the payload from stdin, the result to stdout; exits 0, 65 (permanent) or 1.
async function exec(fn) {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  const env = process.env;
  let result;
  try {
    // A parent must not run without its children: an unreadable file fails it for a retry.
    const kids = env.EMQ_CHILDREN_FILE ? children(JSON.parse(fs.readFileSync(env.EMQ_CHILDREN_FILE, 'utf8'))) : [];
    const job = { id: env.EMQ_JOB_ID || '', queue: env.EMQ_QUEUE || '', attempt: Number(env.EMQ_ATTEMPT || 1), deadlineMs: Number(env.EMQ_DEADLINE_MS || 0), children: kids, progress: progressFd(env.EMQ_PROGRESS_FD) };
    result = resultBytes(await fn(Buffer.concat(chunks), job));
  } catch (e) {
    process.stderr.write(`${e instanceof Permanent ? '' : `${(e && e.name) || 'Error'}: `}${errorText(e)}\n`);
    process.exitCode = e instanceof Permanent ? EXIT_PERMANENT : 1;
    return;
  }
  await new Promise((resolve) => process.stdout.write(result, resolve));
  process.exitCode = 0;
}

module.exports = { pool, exec, answer, Permanent, EXIT_PERMANENT };

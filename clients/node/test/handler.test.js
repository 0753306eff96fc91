'use strict';
// The handler helpers, run as emqd runs them: a child process, frames on stdin.
const test = require('node:test');
const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const LIB = path.join(__dirname, '..', 'lib');
const handlerSource = (kind) => `
  const { handler } = require(${JSON.stringify(LIB)});
  handler.${kind}(async (payload, job) => {
    const text = payload.toString('latin1');
    if (text === 'bad') throw new handler.Permanent('bad input: nothing to do');
    if (text === 'flaky') throw new Error('upstream down');
    if (text === 'json') return { attempt: job.attempt, queue: job.queue };
    if (text === 'none') return null;
    if (text === 'progress') { job.progress('half'); job.progress({ done: 2 }); return 'reported'; }
    if (text === 'children') {
      const hex = (b) => (b === null ? null : b.toString('hex'));
      return job.children.map((c) => [c.queue, c.id, c.outcome, hex(c.result), hex(c.error)]);
    }
    return Buffer.from(payload.map((c) => (c >= 0x61 && c <= 0x7a ? c - 32 : c)));
  });`;

const run = (kind, input, env = {}) =>
  spawnSync(process.execPath, ['-e', handlerSource(kind)], { input, env: { ...process.env, ...env }, timeout: 30000 });

// A parent's children as emqd gives them (docs/handlers.md), and as the
// handler above sees them: bytes shown in hex.
const CHILDREN = [{ queue: 'thumbs', id: 'JOB_c1', outcome: 'completed', result: 'r1' },
  { queue: 'thumbs', id: 'JOB_c2', outcome: 'dead', error_b64: Buffer.from('\xffbad', 'latin1').toString('base64') },
  { queue: 'pdfs', id: 'JOB_c3', outcome: 'completed', result_b64: Buffer.from([0]).toString('base64') }];
const SEEN = [['thumbs', 'JOB_c1', 'completed', Buffer.from('r1').toString('hex'), null],
  ['thumbs', 'JOB_c2', 'dead', null, 'ff626164'], ['pdfs', 'JOB_c3', 'completed', '00', null]];

function frame(id, payload, children) {
  const f = { id, queue: 'q', attempt: 2, deadline_ms: 0 };
  if (children) f.children = children;
  const text = payload.toString('utf8');
  if (Buffer.from(text, 'utf8').equals(payload)) f.payload = text;
  else f.payload_b64 = payload.toString('base64');
  return `${JSON.stringify(f)}\n`;
}

test('pool: one reply line per frame, in order', () => {
  const frames = [['JOB_1', 'hello'], ['JOB_2', 'bad'], ['JOB_3', 'flaky'], ['JOB_4', Buffer.from([0xff, 0, 0x61])],
    ['JOB_5', 'json'], ['JOB_6', 'none']];
  const p = run('pool', frames.map(([id, data]) => frame(id, Buffer.from(data))).join(''));
  assert.strictEqual(p.status, 0, p.stderr.toString());
  const replies = p.stdout.toString().trim().split('\n').map((l) => JSON.parse(l));
  assert.deepStrictEqual(replies, [
    { id: 'JOB_1', ok: true, result: 'HELLO' },
    { id: 'JOB_2', ok: false, error: 'bad input: nothing to do', permanent: true },
    { id: 'JOB_3', ok: false, error: 'upstream down', permanent: false },
    { id: 'JOB_4', ok: true, result_b64: Buffer.from([0xff, 0, 0x41]).toString('base64') },
    { id: 'JOB_5', ok: true, result: JSON.stringify({ attempt: 2, queue: 'q' }) },
    { id: 'JOB_6', ok: true, result: '' },
  ]);
  assert.match(p.stderr.toString(), /job JOB_3: Error: upstream down/);
});

test('pool: progress lines come before the answer', () => {
  const p = run('pool', frame('JOB_7', Buffer.from('progress')));
  const lines = p.stdout.toString().trim().split('\n').map((l) => JSON.parse(l));
  assert.deepStrictEqual(lines, [
    { id: 'JOB_7', progress: 'half' }, { id: 'JOB_7', progress: { done: 2 } }, { id: 'JOB_7', ok: true, result: 'reported' },
  ]);
});

test('exec: progress goes to EMQ_PROGRESS_FD, a line each', () => {
  const p = spawnSync(process.execPath, ['-e', handlerSource('exec')], {
    input: 'progress', env: { ...process.env, EMQ_PROGRESS_FD: '3' }, stdio: ['pipe', 'pipe', 'pipe', 'pipe'], timeout: 30000,
  });
  assert.deepStrictEqual([p.status, p.stdout.toString()], [0, 'reported']);
  assert.strictEqual(p.output[3].toString(), 'half\n{"done":2}\n');
});

test('exec: without EMQ_PROGRESS_FD progress does nothing', () => {
  const p = run('exec', 'progress');
  assert.deepStrictEqual([p.status, p.stdout.toString()], [0, 'reported']);
});

test('exec: the result on stdout and exit 0', () => {
  const p = run('exec', Buffer.from('\0abc'));
  assert.deepStrictEqual([p.status, p.stdout], [0, Buffer.from('\0ABC')]);
});

test('exec: a permanent failure exits 65 with its text on stderr', () => {
  const p = run('exec', 'bad');
  assert.deepStrictEqual([p.status, p.stdout.length, p.stderr.toString()], [65, 0, 'bad input: nothing to do\n']);
});

test('exec: any other exception exits 1 for a retry', () => {
  const p = run('exec', 'flaky');
  assert.deepStrictEqual([p.status, p.stderr.toString()], [1, 'Error: upstream down\n']);
});

test('exec: the job comes from the environment', () => {
  const p = run('exec', 'json', { EMQ_QUEUE: 'thumbs', EMQ_ATTEMPT: '3' });
  assert.deepStrictEqual(JSON.parse(p.stdout.toString()), { attempt: 3, queue: 'thumbs' });
});

test('pool: a parent is given its children\'s outcomes, any other job none', () => {
  const p = run('pool', frame('JOB_p', Buffer.from('children'), CHILDREN) + frame('JOB_x', Buffer.from('children')));
  assert.strictEqual(p.status, 0, p.stderr.toString());
  const replies = p.stdout.toString().trim().split('\n').map((l) => JSON.parse(JSON.parse(l).result));
  assert.deepStrictEqual(replies, [SEEN, []]);
});

test('exec: a parent reads its children\'s outcomes from the file emqd names', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'emq-children-'));
  const file = path.join(dir, 'children.json');
  fs.writeFileSync(file, JSON.stringify(CHILDREN));
  try {
    const p = run('exec', 'children', { EMQ_CHILDREN_FILE: file });
    assert.strictEqual(p.status, 0, p.stderr.toString());
    assert.deepStrictEqual(JSON.parse(p.stdout.toString()), SEEN);
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
  assert.deepStrictEqual(JSON.parse(run('exec', 'children').stdout.toString()), []);
});

test('exec: a parent whose children cannot be read fails for a retry', () => {
  const p = run('exec', 'children', { EMQ_CHILDREN_FILE: '/nonexistent/children.json' });
  assert.deepStrictEqual([p.status, p.stdout.length], [1, 0]);
  assert.match(p.stderr.toString(), /\/nonexistent\/children\.json/);
});

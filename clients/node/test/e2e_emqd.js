'use strict';
// End to end: the Node speaker with the real emqd and emq (EMQ_BIN_DIR, else
// the repository's build/bin) on a real valkey-server. A Node producer's
// jobs are run by emqd through a pool handler written with
// handler.pool and read back with wait; a flow enqueued from Node is
// inspected by emq. Run by CTest (clients.node.e2e): `node --test e2e_emqd.js`.
const test = require('node:test');
const assert = require('node:assert');
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Queue, JobFailed } = require('../lib');
const { startServer, REPO } = require('./server');

const BIN = process.env.EMQ_BIN_DIR || path.join(REPO, 'build', 'bin');

async function startEmqd(url) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'echomq-node-e2e-'));
  const config = path.join(dir, 'emqd.yaml');
  fs.writeFileSync(config, `valkey:\n  url: ${url}\n  keyspace_events: true\nmetrics:\n  listen: ""\nlog:\n  level: info\n` +
    'queues:\n  - name: js_upper\n    concurrency: 2\n    max_attempts: 3\n    keep_completed_s: 300\n' +
    `    handler:\n      type: pool\n      command: ["${process.execPath}", "${path.join(__dirname, 'handlers', 'upper.js')}"]\n`);
  const logPath = path.join(dir, 'emqd.log');
  const log = fs.openSync(logPath, 'w');
  const proc = spawn(path.join(BIN, 'emqd'), ['--config', config], { stdio: ['ignore', log, log] });
  let exited = false;
  proc.on('exit', () => { exited = true; });
  const deadline = Date.now() + 30000;
  while (!fs.readFileSync(logPath, 'utf8').includes('ready:')) {
    if (exited || Date.now() > deadline) throw new Error(`emqd did not become ready:\n${fs.readFileSync(logPath, 'utf8')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    stop: () => new Promise((resolve) => {
      proc.once('exit', () => { fs.closeSync(log); fs.rmSync(dir, { recursive: true, force: true }); resolve(); });
      proc.kill('SIGTERM');
    }),
  };
}

const emqInspect = (url, queue, id) =>
  JSON.parse(execFileSync(path.join(BIN, 'emq'), ['--url', url, 'inspect', queue, id, '--json']).toString());

test('Node speaker end to end with emqd', async (t) => {
  for (const program of ['emqd', 'emq']) assert.ok(fs.existsSync(path.join(BIN, program)), `${BIN}/${program} is missing: build the repository`);
  const server = await startServer();
  const emqd = await startEmqd(server.url);
  const q = new Queue(server.url, 'js_upper');
  t.after(async () => { await q.close(); await emqd.stop(); await server.stop(); });

  await t.test('a Node producer\'s jobs run through a Node pool handler, read back with wait', async () => {
    const ids = [];
    for (let i = 0; i < 20; i++) ids.push(await q.enqueue(`job ${i}`));
    const binary = await q.enqueue(Buffer.from([0xff, 0, 0x62]));
    for (let i = 0; i < 20; i++) assert.strictEqual((await q.wait(ids[i], 60000)).toString(), `JOB ${i}`);
    assert.ok((await q.wait(binary, 60000)).equals(Buffer.from([0xff, 0, 0x42])));
    const poison = await q.enqueue('poison');
    await assert.rejects(q.wait(poison, 60000),
      (e) => e instanceof JobFailed && e.error.toString() === 'poison: refused on attempt 1' && e.attempts === 1);
    assert.strictEqual((await q.stats()).counters.completed, 21);
  });

  await t.test('stats is the object emq stats --json prints', async () => {
    // The dead depth and the dead counter differ here: one key each.
    const s = new Queue(server.url, 'js_stats');
    await s.enqueue('a');
    await s.enqueue('b', { delay: 600000 });
    await s.pause();
    const r = server.client();
    await r.zadd(s.keys.dead, 1, 'JOB_gone');
    await r.hset(s.keys.stats, 'dead', '5', 'completed', '7', 'retried', 'not a number');
    r.disconnect();
    const mine = await s.stats();
    await s.close();
    const emq = JSON.parse(execFileSync(path.join(BIN, 'emq'), ['--url', server.url, 'stats', 'js_stats', '--json']).toString())[0];
    delete emq.problems; // the retried counter another writer broke: emq names it, both show null
    assert.strictEqual(mine.waiting, 0);
    assert.deepStrictEqual(mine, emq);
    assert.deepStrictEqual([mine.dead, mine.counters.dead, mine.counters.retried], [1, 5, null]);
  });

  await t.test('a flow from Node whose parent, run by a Node pool handler, sees its children\'s results', async () => {
    const tree = await q.enqueueFlow({ payload: 'report', children: [{ payload: 'a', id: 'JOB_e2e_a' }, { payload: 'b', id: 'JOB_e2e_b' }] });
    assert.strictEqual((await q.wait(tree.id, 60000)).toString(), 'A+B->report');
  });

  await t.test('a flow from Node, inspected by emq', async () => {
    const f = new Queue(server.url, 'flow_js_only');
    const tree = await f.enqueueFlow({ payload: 'p', children: [{ payload: 'a', queue: 'flow_js_other' }, { payload: 'b' }] });
    await f.close();
    const root = emqInspect(server.url, 'flow_js_only', tree.id);
    assert.strictEqual(root.state, 'waiting');
    for (const c of tree.children) {
      const row = emqInspect(server.url, c.queue, c.id);
      assert.strictEqual(row.state, 'pending');
    }
  });
});

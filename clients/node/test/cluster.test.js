'use strict';
// A cluster node's URL: Queue over ioredis's Cluster on a real
// three-primary Valkey Cluster.
const test = require('node:test');
const assert = require('node:assert');
const { execFileSync } = require('node:child_process');
const Redis = require('ioredis');
const { Queue } = require('../lib');
const { startServer } = require('./server');

test('queues in every slot enqueue, inspect and flow through one node\'s URL', async (t) => {
  const nodes = [];
  for (let i = 0; i < 3; i++) nodes.push(await startServer('--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'));
  const queues = [];
  t.after(async () => { for (const q of queues) await q.close(); for (const n of nodes) await n.stop(); });
  execFileSync('valkey-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-yes'], { stdio: 'ignore' });
  const probe = new Redis({ port: nodes[0].port });
  const deadline = Date.now() + 30000;
  while (!(await probe.cluster('INFO')).includes('cluster_state:ok')) {
    assert.ok(Date.now() < deadline, 'the cluster did not come up');
    await new Promise((r) => setTimeout(r, 50));
  }
  probe.disconnect();
  const url = `valkey://127.0.0.1:${nodes[1].port}`;
  const open = (name) => { const q = new Queue(url, name, { cluster: true }); queues.push(q); return q; };
  const names = Array.from({ length: 12 }, (_, i) => `c${i}`); // spread over the three primaries' slots
  for (const name of names) {
    const q = open(name);
    const id = await q.enqueue(name, { lane: 1 });
    assert.strictEqual((await q.inspect(id)).payload.toString(), name);
    assert.strictEqual((await q.stats()).pending, 1);
  }
  const tree = await open(names[0]).enqueueFlow({ payload: 'p', children: names.slice(1, 4).map((n) => ({ payload: 'a', queue: n })) });
  assert.strictEqual((await open(names[0]).inspect(tree.id)).state, 'waiting');
  for (const c of tree.children) assert.strictEqual((await open(c.queue).inspect(c.id)).parent, `${names[0]}:${tree.id}`);
});

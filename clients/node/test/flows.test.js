'use strict';
// Queue.enqueueFlow against a real valkey-server: a tree checked whole
// before anything is sent (issue 37, rows 9-11 and 17).
const test = require('node:test');
const assert = require('node:assert');
const { Queue, InvalidError, FlowIncomplete } = require('../lib');
const { MAX_DEPTH } = require('../lib/flows');
const { startServer } = require('./server');

function chain(levels) {
  const top = { payload: 'level 1' };
  let at = top;
  for (let level = 2; level <= levels; ++level) {
    at.children = [{ payload: `level ${level}` }];
    [at] = at.children;
  }
  return top;
}

test('enqueueFlow', async (t) => {
  const server = await startServer();
  const r = server.client();
  const queues = [];
  const open = (name) => { const q = new Queue(server.url, name); queues.push(q); return q; };
  const keysOf = async (name) => (await r.keys(`emq:{${name}}:*`)).sort();
  t.after(async () => {
    for (const q of queues) await q.close();
    r.disconnect();
    await server.stop();
  });

  await t.test('a job given twice anywhere in the tree is refused before anything is sent', async () => {
    const q = open('js-twice');
    await assert.rejects(q.enqueueFlow({ payload: 'p', id: 'JOB_p', children: [{ payload: 'me', id: 'JOB_p' }] }),
      (e) => e instanceof InvalidError && e.message.includes('root.children[0]: js-twice:JOB_p is given twice in the tree (first at root)'));
    const kid = { payload: 'k', id: 'JOB_k', queue: 'js-twice-k' };
    await assert.rejects(q.enqueueFlow({ payload: 'p', children: [{ payload: 'a', children: [kid] }, { payload: 'b', children: [{ ...kid }] }] }),
      (e) => e instanceof InvalidError && e.message.includes('root.children[1].children[0]: js-twice-k:JOB_k is given twice in the tree (first at root.children[0].children[0])'));
    assert.deepStrictEqual(await keysOf('js-twice'), []);
    assert.deepStrictEqual(await keysOf('js-twice-k'), []);
  });

  await t.test('a tree of 64 levels is enqueued and one of 65 is refused', async () => {
    const q = open('js-deep');
    assert.strictEqual(MAX_DEPTH, 64);
    await assert.rejects(q.enqueueFlow(chain(65)),
      (e) => e instanceof InvalidError && e.message.includes('].children[0]: the tree is deeper than 64 levels'));
    await assert.rejects(q.enqueueFlow(chain(20000)), (e) => e instanceof InvalidError && e.message.includes('deeper than 64 levels'));
    assert.deepStrictEqual(await keysOf('js-deep'), []);
    let leaf = await q.enqueueFlow(chain(64));
    let levels = 1;
    for (; leaf.children.length; ++levels) [leaf] = leaf.children;
    assert.strictEqual(levels, 64);
    assert.strictEqual((await q.inspect(leaf.id)).state, 'pending');
  });

  await t.test('each node of a flow takes its own group', async () => {
    const q = open('js-flowg');
    const k = q.keys;
    const ids = await q.enqueueFlow({ payload: 'report', group: 'cust.7', children: [
      { payload: 'a', group: 'cust.42', lane: 3 },
      { payload: 'b' },
    ] });
    const [a, b] = ids.children.map((c) => c.id);
    // The grouped child waits in its group's turn, the plain one in pending.
    assert.strictEqual(await r.zscore(k.gqRoot + 'cust.42', a), '3');
    assert.deepStrictEqual(await r.zrange(k.pending, 0, -1), [b]);
    assert.deepStrictEqual(await r.lrange(k.rot, 0, -1), ['cust.42']);
    assert.strictEqual(await r.hget(k.rowRoot + a, 'parent'), `js-flowg:${ids.id}`);
    // The parent carries its group in its row; it waits, in no group's zset.
    assert.strictEqual(await r.hget(k.rowRoot + ids.id, 'group'), 'cust.7');
    assert.strictEqual((await q.inspect(ids.id)).state, 'waiting');
    assert.strictEqual(await r.exists(k.gqRoot + 'cust.7'), 0);
    // A root without children is a plain grouped enqueue.
    const lone = await q.enqueueFlow({ payload: 'x', group: 'cust.9' });
    assert.strictEqual(await r.zscore(k.gqRoot + 'cust.9', lone.id), '0');
    await assert.rejects(q.enqueueFlow({ payload: 'p', children: [{ payload: 'a', group: 'a b' }] }),
      (e) => e instanceof InvalidError && e.message.includes("root.children[0]: group 'a b' is not a group"));
  });

  await t.test('a node without children is a plain job', async () => {
    const q = open('js-alone');
    const ids = await q.enqueueFlow({ payload: 'alone', lane: 3 });
    assert.deepStrictEqual(ids.children, []);
    const row = await q.inspect(ids.id);
    assert.deepStrictEqual([row.state, row.lane, 'parent' in row], ['pending', 3, false]);
    assert.strictEqual((await q.enqueueFlow({ payload: 'plain', id: 'JOB_plain' })).id, 'JOB_plain');
    assert.strictEqual(await r.zscore(q.keys.pending, 'JOB_plain'), '0');
  });

  await t.test('a payload over the server\'s limit is refused before anything is sent', async () => {
    const q = open('js-big');
    await r.config('SET', 'proto-max-bulk-len', String(1 << 20));
    try {
      await assert.rejects(q.enqueueFlow({ payload: 'p', children: [{ payload: 's' }, { payload: Buffer.alloc((1 << 20) + 1) }] }),
        (e) => e instanceof InvalidError && e.message.includes("root.children[1]: the payload of 1048577 bytes is over the server's limit of 1048576 bytes"));
    } finally {
      await r.config('SET', 'proto-max-bulk-len', String(512 << 20));
    }
    assert.deepStrictEqual(await keysOf('js-big'), []);
  });

  await t.test('a refusal half-way enqueues the rest and names the parent left waiting', async () => {
    const q = open('js-half');
    await r.set('emq:{js-half-b}:pending', 'not a zset');
    const tree = { payload: 'root', children: [
      { payload: 'mid', id: 'JOB_mid', children: [{ payload: 'refused', queue: 'js-half-b' }, { payload: 'fine' }] },
      { payload: 'sibling' }] };
    await assert.rejects(q.enqueueFlow(tree), (e) => {
      assert.ok(e instanceof FlowIncomplete, e.stack);
      assert.ok(e.message.includes('the server refused js-half-b:JOB_'), e.message);
      assert.ok(e.message.includes('WRONGTYPE'), e.message);
      assert.ok(e.message.includes('these parents now wait for a child that was not enqueued: js-half:JOB_mid. ' +
        'Cancel each (emq cancel QUEUE ID, e.g. emq cancel js-half JOB_mid)'), e.message);
      assert.deepStrictEqual(e.waiting, ['js-half:JOB_mid']);
      return true;
    });
    assert.strictEqual((await q.inspect('JOB_mid')).state, 'waiting');
    assert.strictEqual((await q.stats()).pending, 2);
  });
});

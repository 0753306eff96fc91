'use strict';
// Unique jobs from Node, against a real valkey-server: one live job per key,
// the holder returned on a duplicate, each mode, and flows.
const test = require('node:test');
const assert = require('node:assert');
const { keys, FlowIncomplete, InvalidError } = require('../lib');
const { Scripts } = require('../lib/scripts');
const { serverWithQueues } = require('./server');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test('unique jobs', async (t) => {
  const { r, open } = await serverWithQueues(t);

  await t.test('a duplicate resolves to the holder and enqueues nothing', async () => {
    const q = open('js-unique-dup');
    const first = await q.enqueueResult('one', { unique: 'report:7' });
    assert.deepStrictEqual({ outcome: first.outcome, state: first.state }, { outcome: 'enqueued', state: null });
    assert.deepStrictEqual(await r.hmget(q.keys.rowRoot + first.id, 'unique', 'unique_mode'), ['report:7', 'finished']);
    const again = await q.enqueueResult('two', { unique: 'report:7' });
    assert.deepStrictEqual(again, { id: first.id, outcome: 'duplicate', state: 'pending' });
    assert.strictEqual(await q.enqueue('three', { unique: 'report:7' }), first.id);
    assert.strictEqual(await r.zcard(q.keys.pending), 1);
    assert.strictEqual((await q.stats()).counters.duplicates, 2);
  });

  await t.test('the key is free once the holder finished, whatever the lock says', async () => {
    const q = open('js-unique-free');
    const first = await q.enqueue('one', { unique: 'k' });
    const s = new Scripts(r);
    const k = keys(q.name);
    const claimed = await s.run('claim', [k.pending, k.active, k.delayed, k.meta, k.stats, k.rowRoot], ['30000', '1', '0']);
    await s.run('complete', [k.rowRoot + first, k.active, k.stats], [first, String(claimed[3]), '0', 'r']);
    const again = await q.enqueueResult('two', { unique: 'k' });
    assert.strictEqual(again.outcome, 'enqueued');
    assert.notStrictEqual(again.id, first);
  });

  await t.test('replace gives a delayed holder the latest payload', async () => {
    const q = open('js-unique-replace');
    const first = await q.enqueue('v1', { unique: 'sync', uniqueMode: 'replace', delay: 3_600_000 });
    const latest = await q.enqueueResult('v2', { unique: 'sync', uniqueMode: 'replace', delay: 60_000 });
    assert.deepStrictEqual(latest, { id: first, outcome: 'replaced', state: 'delayed' });
    assert.strictEqual((await q.inspect(first)).payload.toString(), 'v2');
  });

  await t.test('a window holds for uniqueFor ms on the server clock', async () => {
    const q = open('js-unique-window');
    const first = await q.enqueue('p', { unique: 'w', uniqueFor: 300 });
    assert.strictEqual(await r.hget(q.keys.rowRoot + first, 'unique_mode'), 'window');
    assert.strictEqual(await q.enqueue('p', { unique: 'w', uniqueFor: 300 }), first);
    for (let i = 0; i < 250 && (await r.exists(q.keys.uniqRoot + 'w')); ++i) await sleep(20);
    assert.strictEqual((await q.enqueueResult('p', { unique: 'w', uniqueFor: 300 })).outcome, 'enqueued');
  });

  await t.test('bad options are refused before anything is sent', async () => {
    const q = open('js-unique-bad');
    for (const o of [{ unique: 'a b' }, { unique: 'x'.repeat(129) }, { uniqueMode: 'started' }, { unique: 'k', uniqueMode: 'window' },
      { unique: 'k', uniqueMode: 'forever' }, { unique: 'k', uniqueMode: 'started', uniqueFor: 5 }, { traceparent: '00-x' }]) {
      await assert.rejects(q.enqueue('p', o), InvalidError, JSON.stringify(o));
    }
  });

  await t.test('a flow child whose key is held leaves its parent waiting', async () => {
    const q = open('js-unique-flow');
    const tree = await q.enqueueFlow({ payload: 'p', children: [{ payload: 'c', unique: 'child' }] });
    await assert.rejects(q.enqueueFlow({ payload: 'p2', children: [{ payload: 'c', unique: 'child' }] }),
      (e) => e instanceof FlowIncomplete && e.message.includes(tree.children[0].id) && e.waiting.length === 1);
    const held = await q.enqueueFlow({ payload: 'p3', unique: 'root', children: [{ payload: 'c' }] });
    const again = await q.enqueueFlow({ payload: 'p4', unique: 'root', children: [{ payload: 'c' }] });
    assert.deepStrictEqual(again, { queue: q.name, id: held.id, children: [] });
  });
});

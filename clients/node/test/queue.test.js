'use strict';
// Queue against a real valkey-server: what a producer writes is the wire's.
const test = require('node:test');
const assert = require('node:assert');
const { Queue, keys, mintedAtMs, validJobId, InvalidError, KindError, JobFailed, JobNotFound, TimeoutError, WireError } = require('../lib');
const { Scripts } = require('../lib/scripts');
const { serverWithQueues, startServer } = require('./server');

// Just enough of a worker to settle one job: claim, then complete or fail.
function worker(client, queue) {
  const s = new Scripts(client);
  const k = keys(queue);
  return {
    async claim() {
      const r = await s.run('claim', [k.pending, k.active, k.delayed, k.meta, k.stats, k.rowRoot], ['30000', '1', '10']);
      return r.length ? { id: r[0].toString(), payload: r[1], epoch: String(r[3]) } : null;
    },
    complete: (id, epoch, result) => s.run('complete', [k.rowRoot + id, k.active, k.stats], [id, epoch, '60000', result]),
    failForGood: (id, epoch, error) => s.run('fail', [k.rowRoot + id, k.active, k.delayed, k.pending, k.dead, k.stats],
      [id, epoch, error, '1', '0', '1']),
  };
}

test('Queue', async (t) => {
  const { server, r, open } = await serverWithQueues(t);

  await t.test('enqueue writes the three-field row and mints an id', async () => {
    const q = open('js-enqueue');
    const id = await q.enqueue(Buffer.from([0, 0xff, 0x61]));
    assert.ok(validJobId(id));
    const row = await r.hgetallBuffer(q.keys.rowRoot + id);
    assert.deepStrictEqual(Object.keys(row).sort(), ['attempts', 'payload', 'state']);
    assert.ok(row.payload.equals(Buffer.from([0, 0xff, 0x61])));
    assert.strictEqual(await r.zscore(q.keys.pending, id), '0');
    assert.strictEqual(await r.get('{emq}:version'), 'emq/1');
    assert.ok((await r.smembers('{emq}:queues')).includes('js-enqueue'));
  });

  await t.test('lane, at, delay and a given id', async () => {
    const q = open('js-lanes');
    assert.strictEqual(await q.enqueue('x', { id: 'JOB_mine', lane: -7 }), 'JOB_mine');
    assert.strictEqual(await r.zscore(q.keys.pending, 'JOB_mine'), '-7');
    const at = new Date(Date.UTC(2040, 0, 1));
    const a = await q.enqueue('x', { at });
    assert.strictEqual(Number(await r.zscore(q.keys.delayed, a)), at.getTime());
    const before = await q.serverTimeMs();
    const d = await q.enqueue('x', { delay: 60000, lane: 3 });
    const due = Number(await r.zscore(q.keys.delayed, d));
    assert.ok(due >= before + 60000 && due <= (await q.serverTimeMs()) + 60000);
    assert.strictEqual((await q.inspect(d)).lane, 3);
  });

  await t.test('a grouped job waits in its group\'s zset and its group joins the rotation', async () => {
    const q = open('js-group');
    const id = await q.enqueue('x', { group: 'cust.42', lane: 2 });
    assert.strictEqual(await r.hget(q.keys.rowRoot + id, 'group'), 'cust.42');
    assert.strictEqual(await r.zcard(q.keys.pending), 0);
    assert.strictEqual(await r.zscore(q.keys.gqRoot + 'cust.42', id), '2');
    assert.deepStrictEqual(await r.lrange(q.keys.rot, 0, -1), ['cust.42']);
    assert.strictEqual(await r.zscore(q.keys.gidx, 'cust.42'), '1');
    await assert.rejects(q.enqueue('x', { group: 'a b' }), /is not a group/);
  });

  await t.test('a duplicate enqueues nothing', async () => {
    const q = open('js-dup');
    await q.enqueue('first', { id: 'JOB_dup' });
    await q.enqueue('second', { id: 'JOB_dup' });
    assert.strictEqual((await q.inspect('JOB_dup')).payload.toString(), 'first');
  });

  await t.test('bad input is refused before the server', async () => {
    const q = open('js-bad');
    await assert.rejects(q.enqueue('x', { id: 'task-1' }), KindError);
    await assert.rejects(q.enqueue('x', { id: 'JOB_a b' }), InvalidError);
    await assert.rejects(q.enqueue('x', { lane: 1001 }), InvalidError);
    await assert.rejects(q.enqueue('x', { at: 1, delay: 1 }), /not both/);
    await assert.rejects(q.enqueue(42), /payload/);
    assert.throws(() => new Queue(server.url, 'a:b'), InvalidError);
    assert.deepStrictEqual(await r.keys('emq:{js-bad}:*'), []);
  });

  await t.test('inspect shows the row and where it stands', async () => {
    const q = open('js-inspect');
    assert.strictEqual(await q.inspect('JOB_none'), null);
    const id = await q.enqueue('p');
    await worker(r, q.name).claim();
    const job = await q.inspect(id);
    assert.deepStrictEqual([job.state, job.attempts, job.lease_epoch, job.payload.toString()], ['active', 1, 1, 'p']);
    assert.ok(job.lease_until_ms > 0);
    assert.strictEqual(job.minted_ms, mintedAtMs(id));
  });

  await t.test('wait resolves to the result of a job settled meanwhile', async () => {
    const q = open('js-wait');
    const id = await q.enqueue('p');
    const w = worker(r, q.name);
    setTimeout(async () => { const j = await w.claim(); await w.complete(id, j.epoch, Buffer.from('done\0')); }, 100);
    assert.ok((await q.wait(id, 10000)).equals(Buffer.from('done\0')));
  });

  await t.test('wait rejects with a dead job\'s error, not found, and a timeout', async () => {
    const q = open('js-wait-dead');
    const id = await q.enqueue('p');
    await assert.rejects(q.wait(id, 50), TimeoutError);
    const w = worker(r, q.name);
    const j = await w.claim();
    await w.failForGood(id, j.epoch, 'bad input');
    await assert.rejects(
      q.wait(id, 5000),
      (e) => e instanceof JobFailed && e.error.toString() === 'bad input' && e.attempts === 1 && e.message === `${id} died after 1 attempt: bad input`,
    );
    await assert.rejects(q.wait('JOB_none', 1000), JobNotFound);
  });

  await t.test('a queue that keeps events gets the entries of what the client writes', async () => {
    const q = open('js-events');
    await r.hset(q.keys.meta, 'events', '100');
    const id = await q.enqueue('p', { lane: 2 });
    const entries = await r.xrange(q.keys.events, '-', '+');
    assert.deepStrictEqual(entries.map(([, f]) => f), [['event', 'pending', 'id', id, 'attempt', '0']]);
    const other = open('js-no-events');
    await other.enqueue('p');
    assert.strictEqual(await r.exists(other.keys.events), 0);
  });

  const calls = async () => {
    const out = {};
    for (const line of (await r.info('commandstats')).split('\r\n')) {
      const m = /^cmdstat_([a-z|]+):calls=(\d+)/.exec(line);
      if (m) out[m[1]] = Number(m[2]);
    }
    return out;
  };

  await t.test('wait by the stream blocks without polling and wakes at the end', async () => {
    const q = open('js-wait-events');
    await r.hset(q.keys.meta, 'events', '100');
    const id = await q.enqueue('p');
    const j = await worker(r, q.name).claim();
    const before = await calls();
    const k = keys(q.name);
    setTimeout(() => new Scripts(r).run('complete', [k.rowRoot + id, k.active, k.stats, k.events],
      [id, j.epoch, '60000', Buffer.from('done'), '100']), 1000);
    assert.ok((await q.wait(id, 10000)).equals(Buffer.from('done')));
    const after = await calls();
    assert.ok((after.xread || 0) - (before.xread || 0) <= 2, 'one blocking read');
    assert.ok((after.hmget || 0) - (before.hmget || 0) <= 3, 'the row read again once, not polled');
  });

  await t.test('waitMany returns each end and leaves out the ones still running', async () => {
    const q = open('js-wait-many');
    await r.hset(q.keys.meta, 'events', '100');
    const [done, dead, running] = [await q.enqueue('a'), await q.enqueue('b'), await q.enqueue('c')];
    const w = worker(r, q.name);
    await w.complete(done, (await w.claim()).epoch, 'ok');
    await w.failForGood(dead, (await w.claim()).epoch, 'no');
    const ends = await q.waitMany([done, dead, running], 300);
    assert.deepStrictEqual([...ends.keys()].sort(), [done, dead].sort());
    assert.deepStrictEqual([ends.get(done).state, ends.get(done).result.toString()], ['completed', 'ok']);
    assert.deepStrictEqual([ends.get(dead).state, ends.get(dead).error.toString(), ends.get(dead).attempts], ['dead', 'no', 1]);
  });

  await t.test('stats, pause and resume', async () => {
    const q = open('js-stats');
    await q.enqueue('a');
    await q.enqueue('b', { delay: 100000 });
    await q.pause();
    let s = await q.stats();
    assert.deepStrictEqual([s.paused, s.pending, s.delayed, s.active, s.counters.claimed], [true, 1, 1, 0, 0]);
    assert.strictEqual(await worker(r, q.name).claim(), null);
    await q.resume();
    assert.notStrictEqual(await worker(r, q.name).claim(), null);
    s = await q.stats();
    assert.deepStrictEqual([s.paused, s.pending, s.active, s.counters.claimed], [false, 0, 1, 1]);
  });

  await t.test('a pause says who, why and until when; resume deletes all four', async () => {
    const q = open('js-pause-who');
    await q.enqueue('a');
    await q.pause({ by: 'ann@host-a', reason: 'deploy', forMs: 3600000 });
    const meta = await r.hgetall(q.keys.meta);
    assert.deepStrictEqual([meta.paused, meta.paused_by, meta.paused_reason], ['1', 'ann@host-a', 'deploy']);
    assert.ok(Math.abs(Number(meta.paused_until) - (await q.serverTimeMs()) - 3600000) < 5000);
    assert.strictEqual((await q.stats()).pause.by, 'ann@host-a');
    assert.strictEqual(await worker(r, q.name).claim(), null);
    await q.pause({ by: 'bob' });
    assert.deepStrictEqual(await r.hgetall(q.keys.meta), { paused: '1', paused_by: 'bob' });
    await assert.rejects(q.pause({ reason: 'r'.repeat(257) }), InvalidError);
    await q.resume();
    assert.deepStrictEqual(await r.hgetall(q.keys.meta), {});
    assert.notStrictEqual(await worker(r, q.name).claim(), null);
  });

  await t.test('a pause for a moment ends at the next claim by itself', async () => {
    const q = open('js-pause-ends');
    const id = await q.enqueue('a');
    await q.pause({ reason: 'blip', forMs: 300 });
    assert.strictEqual(await worker(r, q.name).claim(), null);
    const until = Number(await r.hget(q.keys.meta, 'paused_until'));
    while ((await q.serverTimeMs()) < until) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.strictEqual((await worker(r, q.name).claim()).id, id);
    assert.deepStrictEqual(await r.hgetall(q.keys.meta), {});
  });

  await t.test('a flow enqueues each parent before its children', async () => {
    const q = open('flowjs');
    const tree = await q.enqueueFlow({ payload: 'report', onChildFailure: 'ignore', children: [
      { payload: 'a' },
      { payload: 'b', queue: 'flowjs-other', lane: 2 },
      { payload: 'sub', children: [{ payload: 'leaf' }] },
    ] });
    const [a, b, sub] = tree.children;
    const root = await q.inspect(tree.id);
    assert.deepStrictEqual([root.state, root.children, root.on_child_failure], ['waiting', 3, 'ignore']);
    assert.deepStrictEqual((await r.smembers(`emq:{flowjs}:deps:${tree.id}`)).sort(),
      [`flowjs:${a.id}`, `flowjs-other:${b.id}`, `flowjs:${sub.id}`].sort());
    const other = await open('flowjs-other').inspect(b.id);
    assert.deepStrictEqual([other.state, other.lane, other.parent], ['pending', 2, `flowjs:${tree.id}`]);
    assert.strictEqual((await q.inspect(sub.children[0].id)).parent, `flowjs:${sub.id}`);
    assert.strictEqual(await r.hget('emq:{flowjs}:meta', 'flows'), '1');
    await assert.rejects(q.enqueueFlow({ payload: 'p', children: [{ payload: 'a', id: 'JOB_x' }, { payload: 'b', id: 'JOB_x' }] }), /twice/);
  });

  await t.test('a unix socket URL', async () => {
    const q = open('js-unix');
    const u = open('js-unix', `unix://${server.socket}?db=0`);
    const id = await u.enqueue('by socket');
    assert.strictEqual(await r.hget(q.keys.rowRoot + id, 'payload'), 'by socket');
  });

  await t.test('a script cache flushed under the queue is filled again', async () => {
    const q = open('js-flush');
    await q.enqueue('a');
    await r.script('FLUSH');
    await q.enqueue('b');
    assert.strictEqual((await q.stats()).pending, 2);
  });

  await t.test('another wire is refused', async () => {
    const other = await startServer();
    const c = other.client();
    await c.set('{emq}:version', 'emq/2');
    const q = new Queue(other.url, 'q');
    await assert.rejects(q.enqueue('x'), WireError);
    await q.close();
    c.disconnect();
    await other.stop();
  });
});

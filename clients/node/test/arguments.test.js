'use strict';
// Arguments of the wrong type are refused at once, naming what to pass, and
// nothing reaches the server: a queue name or id given as a Buffer, a wait
// timeout that is not a number of milliseconds.
const test = require('node:test');
const assert = require('node:assert');
const { Queue, keys, checkQueueName, validQueueName, validJobId, InvalidError, TimeoutError } = require('../lib');
const { serverWithQueues } = require('./server');

// What the promise settled with ('resolved' or its error), or 'still waiting' after ms.
async function settlesWithin(promise, ms) {
  let timer;
  const still = new Promise((resolve) => { timer = setTimeout(() => resolve('still waiting'), ms); });
  try {
    return await Promise.race([promise.then(() => 'resolved', (e) => e), still]);
  } finally {
    clearTimeout(timer);
  }
}

test('arguments', async (t) => {
  const { server, r, open } = await serverWithQueues(t);

  await t.test('a queue name given as a Buffer is refused and nothing is written', async () => {
    await r.flushall();
    for (const name of [Buffer.from('bq'), new Uint8Array([0x62, 0x71])]) {
      const said = /a queue name given as a Buffer \(bq\): pass a string/;
      assert.throws(() => new Queue(server.url, name), (e) => e instanceof InvalidError && said.test(e.message));
      assert.throws(() => keys(name), InvalidError);
      assert.throws(() => checkQueueName(name), InvalidError);
      assert.strictEqual(validQueueName(name), false);
    }
    assert.throws(() => new Queue(server.url, 7), /a queue name must be a string, not number/);
    assert.throws(() => new Queue(server.url, undefined), /a queue name must be a string, not undefined/);
    assert.deepStrictEqual(await r.keys('*'), []);
  });

  await t.test('a flow node whose queue is a Buffer is refused before anything is sent', async () => {
    await r.flushall();
    const q = open('flow_buffer');
    await assert.rejects(q.enqueueFlow({ payload: 'p', children: [{ payload: 'c', queue: Buffer.from('other') }] }),
      /a queue name given as a Buffer/);
    assert.deepStrictEqual(await r.keys('*'), []);
  });

  await t.test('a job id given as a Buffer is refused', async () => {
    await r.flushall();
    const q = open('id_buffer');
    const id = await q.enqueue('p');
    const asBuffer = Buffer.from(id);
    for (const call of [() => q.enqueue('p', { id: asBuffer }), () => q.inspect(asBuffer), () => q.wait(asBuffer, 1000)]) {
      await assert.rejects(call(), (e) => e instanceof InvalidError && /a job id given as a Buffer \(JOB_/.test(e.message));
    }
    assert.strictEqual(validJobId(asBuffer), false);
    assert.strictEqual(await r.zcard(q.keys.pending), 1);
  });

  await t.test('a wait timeout that is not a number of milliseconds is refused at once', async () => {
    const q = open('wait_args');
    const id = await q.enqueue('never claimed');
    // Issue 48 row 2: the values that ended emq wait at once (as seconds:
    // 1e10, 9.3e15, 1e308; as milliseconds 1e13 and up) are refused here,
    // naming the range.
    for (const bad of [{ timeout: 300 }, '300', NaN, Infinity, -1, 1e13, 9.3e15, 1e308, 1e10 * 1000, 10n, true]) {
      const got = await settlesWithin(q.wait(id, bad), 5000);
      assert.ok(got instanceof InvalidError, `wait(id, ${String(bad)}): ${got}`);
      assert.match(got.message, /timeoutMs must be milliseconds \(a number\) in 0\.\.10\^12/);
    }
  });

  await t.test('a number of milliseconds times out', async () => {
    const q = open('wait_ok');
    const id = await q.enqueue('never claimed');
    for (const good of [0, 50, 50.5]) assert.ok((await settlesWithin(q.wait(id, good), 5000)) instanceof TimeoutError, String(good));
  });
});

'use strict';
// daemons() against a real valkey-server: the fleet registry read as
// PROTOCOL.md ("Daemons: who runs what") writes it; ghosts are left out.
const test = require('node:test');
const assert = require('node:assert');
const { daemons } = require('../lib');
const { startServer } = require('./server');

test('daemons', async (t) => {
  const server = await startServer();
  const r = server.client();
  t.after(async () => { r.disconnect(); await server.stop(); });

  await t.test('lists the live with their jobs and leaves ghosts out', async () => {
    const [sec, usec] = await r.time();
    const now = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
    const id = 'js-host-88-0a1b2c';
    await r.multi()
      .hset(`{emq}:daemon:${id}`, 'host', 'js-host', 'pid', '88', 'version', '0.1.0', 'started_ms', String(now - 1000),
        'beat_ms', String(now), 'state', 'running', 'queues', JSON.stringify(['emails']), 'slots', '4', 'busy', '1',
        'executor', 'scripted')
      .pexpire(`{emq}:daemon:${id}`, 30000)
      .hset(`{emq}:daemon:${id}:work`, 'emails:JOB_e1',
        JSON.stringify({ queue: 'emails', id: 'JOB_e1', attempt: 2, started_ms: now - 500 }))
      .zadd('{emq}:daemons', now, id, now, 'gone-1-ffffff')
      .exec();
    const [d, ...rest] = await daemons(server.url, { jobs: true });
    assert.strictEqual(rest.length, 0, 'a ghost (its hash gone) is left out');
    assert.deepStrictEqual([d.id, d.host, d.pid, d.state, d.queues, d.slots, d.busy, d.ack],
      [id, 'js-host', 88, 'running', ['emails'], 4, 1, null]);
    assert.deepStrictEqual(d.jobs.map((j) => [j.queue, j.id, j.attempt]), [['emails', 'JOB_e1', 2]]);
    assert.strictEqual((await daemons(r))[0].jobs, undefined);
    assert.deepStrictEqual([d.prefetched, d.jobs[0].prefetched], [0, false], 'a beat without the field');
  });

  await t.test('jobs claimed ahead are apart from busy', async () => {
    const [sec, usec] = await r.time();
    const now = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
    const id = 'js-host-89-0d0e0f';
    await r.multi()
      .hset(`{emq}:daemon:${id}`, 'host', 'js-host', 'pid', '89', 'started_ms', String(now - 1000),
        'beat_ms', String(now), 'state', 'running', 'queues', '["emails"]', 'slots', '1', 'busy', '1', 'prefetched', '2')
      .pexpire(`{emq}:daemon:${id}`, 30000)
      .hset(`{emq}:daemon:${id}:work`,
        'emails:JOB_run', JSON.stringify({ queue: 'emails', id: 'JOB_run', attempt: 1, started_ms: now - 500 }),
        'emails:JOB_ahead', JSON.stringify({ queue: 'emails', id: 'JOB_ahead', attempt: 1, started_ms: now - 900, prefetched: true }))
      .zadd('{emq}:daemons', now, id)
      .exec();
    const d = (await daemons(server.url, { jobs: true })).find((each) => each.id === id);
    assert.deepStrictEqual([d.slots, d.busy, d.prefetched], [1, 1, 2]);
    assert.deepStrictEqual(d.jobs.map((j) => [j.id, j.prefetched]).sort(), [['JOB_ahead', true], ['JOB_run', false]]);
  });
});

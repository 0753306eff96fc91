// Idle wake latency with BullMQ, enqueue -> processor start, measured as
// bench/latency_plugin.c measures it for emqd: each job carries the
// CLOCK_MONOTONIC nanosecond it was sent at (process.hrtime is that clock
// on Linux), and the processor's first act is to read the clock again.
//
//   node latency.js --mode worker   --port P --queue Q --jobs N
//     prints "ready" once connected, then {"samples_ns":[...]} after N jobs
//   node latency.js --mode producer --port P --queue Q --jobs N --every-ms 5
//     one Queue.add at a time on a fixed schedule
'use strict';
const { Queue, Worker } = require('bullmq');
const { parseArgs, need, connection, report, run } = require('./common');

async function worker(args) {
  const jobs = Number(need(args, 'jobs'));
  const samples = [];
  let finish;
  const finished = new Promise((resolve) => (finish = resolve));
  const w = new Worker(
    need(args, 'queue'),
    async (job) => {
      const now = process.hrtime.bigint();
      samples.push(Number(now - BigInt(job.data.t)));
      if (samples.length === jobs) finish();
    },
    { connection: connection(args), concurrency: 1, removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } },
  );
  w.on('error', (err) => process.stderr.write(`latency.js: ${err && err.message}\n`));
  await w.waitUntilReady();
  process.stdout.write('ready\n');
  await finished;
  report({ samples_ns: samples });
  await w.close();
}

async function producer(args) {
  const jobs = Number(need(args, 'jobs'));
  const every = Number(args['every-ms'] || 5);
  const queue = new Queue(need(args, 'queue'), { connection: connection(args) });
  await queue.waitUntilReady();
  const opts = { removeOnComplete: true, removeOnFail: true };
  const start = Date.now() + every;
  for (let i = 0; i < jobs; ++i) {
    const wait = start + i * every - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await queue.add('j', { t: process.hrtime.bigint().toString() }, opts);
  }
  await queue.close();
}

run(async () => {
  const args = parseArgs(process.argv.slice(2));
  const mode = need(args, 'mode');
  if (mode === 'worker') return worker(args);
  if (mode === 'producer') return producer(args);
  throw new Error(`--mode is worker or producer, not ${mode}`);
});

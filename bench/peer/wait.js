// Completion to waitUntilFinished's return with BullMQ, as bench/wait_latency.cpp
// measures it for emqd: job after job, one Worker (concurrency 1) whose
// processor reads process.hrtime (CLOCK_MONOTONIC) as its last act, and
// job.waitUntilFinished(queueEvents) in the same process reading it again
// when it resolves. The worker's own completion (moveToCompleted) is
// inside the figure, as emqd's complete is inside ours.
//
//   node wait.js --port P --queue Q --jobs N
//     prints {"samples_ns":[...]}
'use strict';
const { Queue, QueueEvents, Worker } = require('bullmq');
const { parseArgs, need, connection, report, run } = require('./common');

run(async () => {
  const args = parseArgs(process.argv.slice(2));
  const name = need(args, 'queue');
  const jobs = Number(need(args, 'jobs'));
  const queue = new Queue(name, { connection: connection(args) });
  const events = new QueueEvents(name, { connection: connection(args) });
  let doneAt = 0n;
  const worker = new Worker(name, async () => { doneAt = process.hrtime.bigint(); return 'ok'; },
    { connection: connection(args), concurrency: 1 });
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady(), worker.waitUntilReady()]);
  const samples = [];
  for (let i = 0; i < jobs; ++i) {
    const job = await queue.add('j', {}, { removeOnComplete: 100, removeOnFail: 100 });
    await job.waitUntilFinished(events);
    samples.push(Number(process.hrtime.bigint() - doneAt));
  }
  report({ samples_ns: samples });
  await Promise.all([worker.close(), events.close(), queue.close()]);
});

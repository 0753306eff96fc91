// Bulk enqueue with BullMQ: `jobs` jobs through Queue.addBulk, `chunk` jobs
// per call, one call at a time. Jobs are removed when they complete or
// fail, as emqd deletes a completed row (keep_completed_s 0).
// Prints {"jobs":N,"seconds":S,"rate":R}; the clock starts once the queue's
// connection is ready.
'use strict';
const { Queue } = require('bullmq');
const { parseArgs, need, connection, seconds, report, run } = require('./common');

run(async () => {
  const args = parseArgs(process.argv.slice(2));
  const jobs = Number(need(args, 'jobs'));
  const chunk = Number(args.chunk || 64);
  const payload = args.payload || 'x';
  const queue = new Queue(need(args, 'queue'), { connection: connection(args) });
  await queue.waitUntilReady();
  const opts = { removeOnComplete: true, removeOnFail: true };
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < jobs; i += chunk) {
    const batch = [];
    for (let k = i; k < Math.min(i + chunk, jobs); ++k) batch.push({ name: 'j', data: { p: payload }, opts });
    await queue.addBulk(batch);
  }
  const t1 = process.hrtime.bigint();
  report({ jobs, seconds: seconds(t0, t1), rate: jobs / seconds(t0, t1) });
  await queue.close();
});

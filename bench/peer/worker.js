// A BullMQ worker that runs until `jobs` jobs have completed, then prints
// {"jobs":N,"seconds":S,"rate":R}. With no --processor, an in-process no-op
// (async () => {}); with --processor FILE, BullMQ's sandboxed processors
// (child processes running FILE). The clock starts just before the Worker
// is made, so it includes connecting and, when sandboxed, starting the
// children, as emqd's figure includes its start.
'use strict';
const path = require('path');
const { Worker } = require('bullmq');
const { parseArgs, need, connection, seconds, report, tally, run } = require('./common');

run(async () => {
  const args = parseArgs(process.argv.slice(2));
  const jobs = Number(need(args, 'jobs'));
  const concurrency = Number(need(args, 'concurrency'));
  const processor = args.processor ? path.resolve(args.processor) : async () => {};

  const t0 = process.hrtime.bigint();
  const worker = new Worker(need(args, 'queue'), processor, {
    connection: connection(args),
    concurrency,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
  });
  const { counts, finished } = tally([worker], jobs, 'worker.js');
  const t1 = await finished;
  report({ jobs: counts.done, failed: counts.failed, seconds: seconds(t0, t1), rate: counts.done / seconds(t0, t1) });
  await worker.close();
  if (counts.failed > 0) throw new Error(`${counts.failed} jobs failed`);
});

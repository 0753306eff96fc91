// A BullMQ worker that runs until `jobs` jobs have completed, then prints
// {"jobs":N,"seconds":S,"rate":R}. With no --processor, an in-process no-op
// (async () => {}); with --processor FILE, BullMQ's sandboxed processors
// (child processes running FILE). The clock starts just before the Worker
// is made, so it includes connecting and, when sandboxed, starting the
// children, as emqd's figure includes its start.
'use strict';
const path = require('path');
const { Worker } = require('bullmq');
const { parseArgs, need, connection, seconds, report, run } = require('./common');

run(async () => {
  const args = parseArgs(process.argv.slice(2));
  const jobs = Number(need(args, 'jobs'));
  const concurrency = Number(need(args, 'concurrency'));
  const processor = args.processor ? path.resolve(args.processor) : async () => {};

  let done = 0;
  let failed = 0;
  let finish;
  const finished = new Promise((resolve) => (finish = resolve));
  const t0 = process.hrtime.bigint();
  const worker = new Worker(need(args, 'queue'), processor, {
    connection: connection(args),
    concurrency,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
  });
  worker.on('completed', () => {
    if (++done === jobs) finish(process.hrtime.bigint());
  });
  worker.on('failed', (job, err) => {
    ++failed;
    process.stderr.write(`worker.js: job failed: ${err && err.message}\n`);
    if (done + failed === jobs) finish(process.hrtime.bigint());
  });
  worker.on('error', (err) => process.stderr.write(`worker.js: ${err && err.message}\n`));
  const t1 = await finished;
  report({ jobs: done, failed, seconds: seconds(t0, t1), rate: done / seconds(t0, t1) });
  await worker.close();
  if (failed > 0) throw new Error(`${failed} jobs failed`);
});

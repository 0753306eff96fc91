// BullMQ's flows, as the emqd flows rows run them: `flows` trees of a
// parent (queue `parents`) and `children` children (queue `children`).
//
//   --mode enqueue  FlowProducer.addBulk, 100 trees a call (not timed by
//                   bench/run, as emqd's enqueue is not)
//   --mode drain    a Worker on each queue with a no-op processor and
//                   `concurrency` each, until every job has completed;
//                   the clock starts just before the Workers are made,
//                   as emqd's starts at its own start
//
// Jobs are removed once completed, as emqd deletes a completed row; a
// child's result still reaches its parent (BullMQ records it before).
// Prints {"jobs":N,"seconds":S,"rate":R}.
'use strict';
const { FlowProducer, Worker } = require('bullmq');
const { parseArgs, need, connection, seconds, report, tally, run } = require('./common');

const PER_CALL = 100;
const opts = { removeOnComplete: true, removeOnFail: true };

async function enqueue(args, flows, children) {
  const producer = new FlowProducer({ connection: connection(args) });
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < flows; i += PER_CALL) {
    const trees = [];
    for (let f = i; f < Math.min(i + PER_CALL, flows); ++f) {
      const kids = [];
      for (let k = 0; k < children; ++k) kids.push({ name: 'child', queueName: 'children', data: { p: 'x' }, opts });
      trees.push({ name: 'parent', queueName: 'parents', data: { p: 'x' }, opts, children: kids });
    }
    await producer.addBulk(trees);
  }
  const t1 = process.hrtime.bigint();
  const jobs = flows * (1 + children);
  report({ jobs, seconds: seconds(t0, t1), rate: jobs / seconds(t0, t1) });
  await producer.close();
}

async function drain(args, flows, children) {
  const concurrency = Number(need(args, 'concurrency'));
  const jobs = flows * (1 + children);
  const t0 = process.hrtime.bigint();
  const workers = ['parents', 'children'].map(
    (queue) => new Worker(queue, async () => {}, { connection: connection(args), concurrency }),
  );
  const { counts, finished } = tally(workers, jobs, 'flows.js');
  const t1 = await finished;
  report({ jobs: counts.done, failed: counts.failed, seconds: seconds(t0, t1), rate: counts.done / seconds(t0, t1) });
  await Promise.all(workers.map((w) => w.close()));
  if (counts.failed > 0) throw new Error(`${counts.failed} jobs failed`);
}

run(async () => {
  const args = parseArgs(process.argv.slice(2));
  const flows = Number(need(args, 'flows'));
  const children = Number(need(args, 'children'));
  const mode = need(args, 'mode');
  if (mode === 'enqueue') return enqueue(args, flows, children);
  if (mode === 'drain') return drain(args, flows, children);
  throw new Error(`--mode enqueue or drain, not ${mode}`);
});

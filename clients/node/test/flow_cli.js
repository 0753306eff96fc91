'use strict';
// node flow_cli.js URL QUEUE TREE_JSON: enqueues the tree with
// Queue.enqueueFlow and prints the ids it returned, for a test in another
// language to inspect.
const path = require('node:path');
const { Queue } = require(path.join(__dirname, '..', 'lib'));

(async () => {
  const [url, queue, tree] = process.argv.slice(2);
  const q = new Queue(url, queue);
  const ids = await q.enqueueFlow(JSON.parse(tree));
  await q.close();
  process.stdout.write(`${JSON.stringify(ids)}\n`);
})().catch((e) => { process.stderr.write(`${e.stack}\n`); process.exit(1); });

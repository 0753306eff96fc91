'use strict';
// node inspect_cli.js URL QUEUE ID: prints Queue.inspect's view as one JSON
// line (Buffers as UTF-8 text), for a test in another language to read.
const path = require('node:path');
const { Queue } = require(path.join(__dirname, '..', 'lib'));

(async () => {
  const [url, queue, id] = process.argv.slice(2);
  const q = new Queue(url, queue);
  const job = await q.inspect(id);
  await q.close();
  const out = job && Object.fromEntries(Object.entries(job).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString('utf8') : v]));
  process.stdout.write(`${JSON.stringify(out)}\n`);
})().catch((e) => { process.stderr.write(`${e.stack}\n`); process.exit(1); });

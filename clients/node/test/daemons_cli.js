'use strict';
// node daemons_cli.js URL: prints daemons({ jobs: true }) as one JSON line,
// for a test in another language to read.
const path = require('node:path');
const { daemons } = require(path.join(__dirname, '..', 'lib'));

daemons(process.argv[2], { jobs: true })
  .then((list) => process.stdout.write(`${JSON.stringify(list)}\n`))
  .catch((e) => { process.stderr.write(`${e.stack}\n`); process.exit(1); });

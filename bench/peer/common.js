// What the peer scripts share: `--key value` arguments, the connection to
// the benchmark's server, and one JSON line of result on stdout.
'use strict';

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || i + 1 >= argv.length) {
      throw new Error(`expected --key value pairs, got: ${argv.slice(i).join(' ')}`);
    }
    out[argv[i].slice(2)] = argv[i + 1];
  }
  return out;
}

function need(args, key) {
  if (args[key] === undefined) throw new Error(`missing --${key}`);
  return args[key];
}

function connection(args) {
  // maxRetriesPerRequest null: what BullMQ asks of a worker's connection.
  return { host: '127.0.0.1', port: Number(need(args, 'port')), maxRetriesPerRequest: null };
}

function seconds(fromNs, toNs) {
  return Number(toNs - fromNs) / 1e9;
}

function report(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// Counts the jobs the workers complete or fail; `finished` resolves with
// the time (process.hrtime.bigint()) the last of `jobs` was.
function tally(workers, jobs, script) {
  const counts = { done: 0, failed: 0 };
  let finish;
  const finished = new Promise((resolve) => (finish = resolve));
  for (const w of workers) {
    w.on('completed', () => {
      if (++counts.done + counts.failed === jobs) finish(process.hrtime.bigint());
    });
    w.on('failed', (job, err) => {
      ++counts.failed;
      process.stderr.write(`${script}: job failed: ${err && err.message}\n`);
      if (counts.done + counts.failed === jobs) finish(process.hrtime.bigint());
    });
    w.on('error', (err) => process.stderr.write(`${script}: ${err && err.message}\n`));
  }
  return { counts, finished };
}

// Runs main() and turns any failure into a message and exit code 1.
function run(main) {
  main().then(
    () => process.exit(0),
    (e) => {
      process.stderr.write(`${process.argv[1]}: ${e && e.stack ? e.stack : e}\n`);
      process.exit(1);
    },
  );
}

module.exports = { parseArgs, need, connection, seconds, report, tally, run };

#!/usr/bin/env node
// An emqd pool handler in Node: upper-cases each job's payload.
//
// emqd writes one job per line to stdin and reads one reply per line from
// stdout (docs/handlers.md). A payload that is not UTF-8 arrives as
// payload_b64; its answer goes back as result_b64. Logs go to stderr.
'use strict';
const readline = require('readline');

// ASCII letters only, as Python's bytes.upper(): binary stays binary.
const upperBytes = (b) => b.map((c) => (c >= 0x61 && c <= 0x7a ? c - 0x20 : c));

function reply(job) {
  if (job.payload_b64 !== undefined) {
    const data = Buffer.from(job.payload_b64, 'base64');
    return { ok: true, result_b64: upperBytes(data).toString('base64') };
  }
  if (job.payload === '') {
    return { ok: false, error: 'empty payload: nothing to upper-case', permanent: true };
  }
  return { ok: true, result: job.payload.toUpperCase() };
}

readline.createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  const job = JSON.parse(line);
  let answer;
  try {
    answer = reply(job);
  } catch (e) { // a bug here fails this job, not the process
    console.error(`echo_upper.js: job ${job.id}: ${e}`);
    answer = { ok: false, error: String(e), permanent: false };
  }
  process.stdout.write(JSON.stringify({ id: job.id, ...answer }) + '\n');
});

'use strict';
// A pool handler written with echomq's handler.pool, for the end-to-end tests.
const path = require('node:path');
const { handler } = require(path.join(__dirname, '..', '..', 'lib'));

handler.pool(async (payload, job) => {
  if (job.children.length) { // a parent: its children's results, as a new user would join them
    return Buffer.concat([Buffer.from(job.children.map((c) => c.result.toString()).join('+')), Buffer.from('->'), payload]);
  }
  if (payload.toString() === 'poison') throw new handler.Permanent(`poison: refused on attempt ${job.attempt}`);
  return Buffer.from(payload.map((c) => (c >= 0x61 && c <= 0x7a ? c - 32 : c))); // ASCII letters only: bytes stay bytes
});

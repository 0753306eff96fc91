'use strict';
// Ids and names by the C++ library's rules (lib/src/job_id.cpp, keyspace.cpp).
const test = require('node:test');
const assert = require('node:assert');
const ids = require('../lib/ids');
const { InvalidError, KindError } = require('../lib/errors');

test('a minted id is JOB_ and a 26-digit ULID of its millisecond', () => {
  const id = ids.mintJobId(1700000000123);
  assert.match(id, /^JOB_[0-9A-HJKMNP-TV-Z]{26}$/);
  assert.strictEqual(ids.mintedAtMs(id), 1700000000123);
  assert.ok(ids.mintJobId(2 ** 47).startsWith('JOB_4000000000'));
});

test('ids within one millisecond, and after the clock steps back, sort in mint order', () => {
  const minted = [];
  for (let i = 0; i < 1000; i++) minted.push(ids.mintJobId(2000000000000));
  minted.push(ids.mintJobId(1999999999000));
  assert.deepStrictEqual([...minted].sort(), minted);
  assert.strictEqual(new Set(minted).size, minted.length);
});

test('the job id and queue name rules', () => {
  for (const good of ['JOB_a', `JOB_${'x'.repeat(128)}`, 'JOB_a.b:c-d_e']) assert.ok(ids.validJobId(good), good);
  for (const bad of ['JOB_', `JOB_${'x'.repeat(129)}`, 'JOB_a b', 'JOB_{x}', 'JOBa', 'job_a', 'JOB_é']) assert.ok(!ids.validJobId(bad), bad);
  assert.throws(() => ids.checkJobId('task_1'), KindError);
  assert.throws(() => ids.checkJobId('JOB_a b'), InvalidError);
  for (const good of ['q', 'a'.repeat(64), 'emails.v2-x_y']) assert.ok(ids.validQueueName(good), good);
  for (const bad of ['', 'a'.repeat(65), 'a:b', '{a}', 'a b', 'é']) assert.ok(!ids.validQueueName(bad), bad);
});

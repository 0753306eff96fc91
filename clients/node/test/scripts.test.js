'use strict';
// The scripts the package runs are the repository's lua/ files, byte for byte.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { names, source, takesStream } = require('../lib/scripts');
const { REPO } = require('./server');

const LUA = path.join(REPO, 'lua');
const files = () => fs.readdirSync(LUA).filter((f) => f.endsWith('.lua'));

test('the names are the files of lua/', () => {
  assert.deepStrictEqual(names(), files().map((f) => f.slice(0, -4)).sort());
});

test('a script takes the stream when its header says so and its body opens with the events prelude', () => {
  assert.ok(names().filter(takesStream).length > 10, 'the headers were not read');
  for (const f of files()) {
    const text = fs.readFileSync(path.join(LUA, f), 'latin1');
    assert.strictEqual(takesStream(f.slice(0, -4)), text.includes('-- Events (PROTOCOL.md'), f);
  }
  assert.ok(takesStream('claim'));
  assert.ok(!takesStream('extend'));
});

test('each script found is its lua/ file byte for byte', () => {
  for (const f of files()) assert.ok(source(f.slice(0, -4)).equals(fs.readFileSync(path.join(LUA, f))), f);
});

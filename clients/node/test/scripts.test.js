'use strict';
// The scripts the package runs are the repository's lua/ files, byte for byte.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { NAMES, source } = require('../lib/scripts');
const { REPO } = require('./server');

const LUA = path.join(REPO, 'lua');
const files = () => fs.readdirSync(LUA).filter((f) => f.endsWith('.lua'));

test('the names are the files of lua/', () => {
  assert.deepStrictEqual([...NAMES].sort(), files().map((f) => f.slice(0, -4)).sort());
});

test('each script found is its lua/ file byte for byte', () => {
  for (const f of files()) assert.ok(source(f.slice(0, -4)).equals(fs.readFileSync(path.join(LUA, f))), f);
});

'use strict';
// The shared wire cases, spoken by this package against a real valkey-server.
const test = require('node:test');
const assert = require('node:assert');
const { startServer, WIRE_CASES } = require('./server');
const { loadCases, runCase } = require('./wire_cases');
const { names } = require('../lib/scripts');
const { handshake } = require('../lib/connect');

test('the shared wire cases', async (t) => {
  const server = await startServer();
  const r = server.client();
  t.after(async () => { r.disconnect(); await server.stop(); });
  await handshake(r);
  const all = loadCases(WIRE_CASES);
  assert.deepStrictEqual(Object.keys(all).sort(), names(), 'one case file per script of lua/');
  for (const [script, cases] of Object.entries(all)) {
    for (const c of cases) {
      await t.test(`${script}: ${c.name}`, async () => {
        assert.strictEqual(c.call.script, script);
        assert.deepStrictEqual(await runCase(r, c), []);
      });
    }
  }
});

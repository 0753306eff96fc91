'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { clientOptions } = require('../lib/connect');
const { InvalidError } = require('../lib/errors');

test('the URL forms of emq', () => {
  const o = clientOptions('valkey://user:p%40ss@db.example:6380/2');
  assert.deepStrictEqual([o.host, o.port, o.db, o.username, o.password], ['db.example', 6380, 2, 'user', 'p@ss']);
  const r = clientOptions('redis://h');
  assert.deepStrictEqual([r.host, r.port, r.db, r.tls], ['h', 6379, 0, undefined]);
  const u = clientOptions('unix:///run/valkey.sock?db=3');
  assert.deepStrictEqual([u.path, u.db], ['/run/valkey.sock', 3]);
});

test('TLS always verifies the server', () => {
  for (const url of ['valkeys://h:6390/0', 'rediss://h']) {
    const o = clientOptions(url, { tls: { ca: 'PEM' } });
    assert.deepStrictEqual([o.tls.rejectUnauthorized, o.tls.ca, o.tls.servername], [true, 'PEM', 'h']);
  }
});

test('bad URLs say what is wrong and never the password', () => {
  for (const [url, says] of [['http://h', /scheme/], ['valkey://h/x', /db number/], ['valkey://u:secret@h/x', /db number/]]) {
    assert.throws(() => clientOptions(url), (e) => e instanceof InvalidError && says.test(e.message) && !e.message.includes('secret'));
  }
});

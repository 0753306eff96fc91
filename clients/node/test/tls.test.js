'use strict';
// valkeys:// and rediss://: TLS to a real valkey-server, its certificate verified.
const test = require('node:test');
const assert = require('node:assert');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Queue } = require('../lib');
const { startTlsServer } = require('./server');

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const openssl = (...args) => execFileSync('openssl', args, { stdio: 'ignore' });

function makePki() {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'echomq-pki-'));
  for (const ca of ['ca', 'other-ca']) openssl('req', '-x509', ...EC_KEY, '-keyout', `${d}/${ca}.key`, '-out', `${d}/${ca}.crt`, '-subj', `/CN=${ca}`, '-days', '2');
  openssl('req', ...EC_KEY, '-keyout', `${d}/server.key`, '-out', `${d}/server.csr`, '-subj', '/CN=localhost');
  fs.writeFileSync(`${d}/server.ext`, 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl('x509', '-req', '-in', `${d}/server.csr`, '-CA', `${d}/ca.crt`, '-CAkey', `${d}/ca.key`, '-CAcreateserial',
    '-days', '2', '-out', `${d}/server.crt`, '-extfile', `${d}/server.ext`);
  return d;
}

test('TLS', async (t) => {
  const d = makePki();
  const server = await startTlsServer({ cert: `${d}/server.crt`, key: `${d}/server.key`, ca: `${d}/ca.crt` });
  t.after(async () => { await server.stop(); fs.rmSync(d, { recursive: true, force: true }); });

  await t.test('a server the CA vouches for is spoken to', async () => {
    for (const scheme of ['valkeys', 'rediss']) {
      const q = new Queue(`${scheme}://localhost:${server.port}/0`, `tls_${scheme}`, { tls: { ca: fs.readFileSync(`${d}/ca.crt`) } });
      const id = await q.enqueue('over tls');
      assert.strictEqual((await q.inspect(id)).payload.toString(), 'over tls');
      await q.close();
    }
  });

  await t.test('the CA from EMQ_TLS_CA, as emq reads it', async () => {
    process.env.EMQ_TLS_CA = `${d}/ca.crt`;
    try {
      const q = new Queue(`valkeys://127.0.0.1:${server.port}`, 'tls_env');
      assert.match(await q.enqueue('x'), /^JOB_/);
      await q.close();
    } finally {
      delete process.env.EMQ_TLS_CA;
    }
  });

  await t.test('a server another CA signed is refused', async () => {
    const q = new Queue(`valkeys://localhost:${server.port}/0`, 'tls_other', { tls: { ca: fs.readFileSync(`${d}/other-ca.crt`) } });
    const errors = [];
    q.client.on('error', (e) => errors.push(e));
    await assert.rejects(q.enqueue('never sent'));
    q.client.disconnect();
    assert.ok(errors.some((e) => /certificate|self.signed|verify/i.test(e.message)), errors.map((e) => e.message).join('; '));
    const plain = server.client();
    assert.deepStrictEqual(await plain.keys('emq:{tls_other}:*'), []);
    plain.disconnect();
  });
});

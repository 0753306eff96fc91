'use strict';
// A real valkey-server for the tests: a free loopback port and a unix
// socket in a private directory, stopped and removed by stop().
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const Redis = require('ioredis');

const REPO = path.join(__dirname, '..', '..', '..');
const WIRE_CASES = path.join(REPO, 'tests', 'wire-cases');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

async function ping(socket) {
  const c = new Redis({ path: socket, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  c.on('error', () => {});
  try {
    await c.connect();
    return (await c.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    c.disconnect();
  }
}

// tls: {cert, key, ca} file paths serves TLS on the port, plaintext on the socket.
async function startTlsServer(tls) {
  return startServer('--port', '0', '--tls-cert-file', tls.cert, '--tls-key-file', tls.key,
    '--tls-ca-cert-file', tls.ca, '--tls-auth-clients', 'no', { tlsPort: true });
}

async function startServer(...extra) {
  const opts = typeof extra[extra.length - 1] === 'object' ? extra.pop() : {};
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'echomq-node-'));
  const socket = path.join(dir, 'valkey.sock');
  const binary = execFileSync('sh', ['-c', 'command -v valkey-server']).toString().trim();
  for (let tries = 0; tries < 5; tries++) {
    const port = await freePort();
    const listen = opts.tlsPort ? ['--tls-port', String(port)] : ['--port', String(port)];
    const proc = spawn(binary, [...listen, '--bind', '127.0.0.1', '--unixsocket', socket,
      '--save', '', '--appendonly', 'no', '--dir', dir, ...extra], { stdio: 'ignore' });
    let exited = false;
    proc.on('exit', () => { exited = true; });
    const deadline = Date.now() + 10000;
    while (!exited && Date.now() < deadline) {
      if (await ping(socket)) {
        return {
          port, socket, dir, url: `valkey://127.0.0.1:${port}/0`,
          client: () => new Redis({ path: socket }),
          stop: () => new Promise((resolve) => {
            proc.once('exit', () => { fs.rmSync(dir, { recursive: true, force: true }); resolve(); });
            proc.kill('SIGTERM');
          }),
        };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    proc.kill('SIGKILL');
  }
  throw new Error('valkey-server did not start');
}

// A server for the test `t`, a client of it (r), and open(name, url): a
// Queue on it (or on url); all closed and stopped when t ends.
async function serverWithQueues(t) {
  const { Queue } = require('../lib');
  const server = await startServer();
  const r = server.client();
  const queues = [];
  const open = (name, url = server.url) => { const q = new Queue(url, name); queues.push(q); return q; };
  t.after(async () => {
    for (const q of queues) await q.close();
    r.disconnect();
    await server.stop();
  });
  return { server, r, open };
}

module.exports = { startServer, startTlsServer, serverWithQueues, REPO, WIRE_CASES };

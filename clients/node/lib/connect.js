'use strict';
// Clients from the URL forms emq takes, and the wire handshake.
//   valkey://[user[:password]@]host[:port][/db]   (redis:// the same)
//   valkeys://..., rediss://...                   TLS, the server always verified
//   unix://[user[:password]@]/path/to/socket[?db=N]
// TLS files come from options.tls ({ca, cert, key} as Buffers or strings),
// or EMQ_TLS_CA / EMQ_TLS_CERT / EMQ_TLS_KEY (paths) as emq reads them.
// options.cluster connects to a cluster node's URL with Redis.Cluster.
const fs = require('node:fs');
const Redis = require('ioredis');
const { InvalidError, WireError } = require('./errors');
const { VERSION_KEY } = require('./keys');

const WIRE = 'emq/1';

const redacted = (u) => u.replace(/:\/\/([^:@/]*):[^@/]*@/, '://$1:***@');

function fileFromEnv(name) {
  return process.env[name] ? fs.readFileSync(process.env[name]) : undefined;
}

function clientOptions(url, options = {}) {
  let u;
  try {
    u = new URL(url);
  } catch {
    throw new InvalidError(`${redacted(url)}: not a URL; use valkey://host:port/db, valkeys://, unix:///path`);
  }
  const scheme = u.protocol.replace(/:$/, '');
  const common = {
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    connectTimeout: 2000,
    lazyConnect: false,
    maxRetriesPerRequest: 3,
  };
  if (scheme === 'unix') {
    if (!u.pathname) throw new InvalidError(`${redacted(url)}: a unix URL needs a socket path`);
    const db = u.searchParams.get('db') || '0';
    if (!/^\d+$/.test(db)) throw new InvalidError(`${redacted(url)}: db must be a number`);
    return { ...common, path: decodeURIComponent(u.pathname), db: Number(db) };
  }
  if (!['valkey', 'redis', 'valkeys', 'rediss'].includes(scheme)) {
    throw new InvalidError(`${redacted(url)}: the scheme must be valkey://, redis://, valkeys://, rediss:// or unix://`);
  }
  if (!u.hostname) throw new InvalidError(`${redacted(url)}: no host`);
  const path = u.pathname.replace(/^\/+|\/+$/g, '');
  if (path && !/^\d+$/.test(path)) throw new InvalidError(`${redacted(url)}: the path must be a db number`);
  const out = { ...common, host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port ? Number(u.port) : 6379, db: Number(path || 0) };
  if (scheme === 'valkeys' || scheme === 'rediss') {
    const tls = options.tls || {};
    out.tls = {
      rejectUnauthorized: true, // the server is always verified: there is no switch to turn that off
      ca: tls.ca || fileFromEnv('EMQ_TLS_CA'),
      cert: tls.cert || fileFromEnv('EMQ_TLS_CERT'),
      key: tls.key || fileFromEnv('EMQ_TLS_KEY'),
      servername: tls.servername || out.host,
    };
  }
  return out;
}

// An ioredis client for an emq URL; throws InvalidError naming what is wrong.
function clientFromUrl(url, options = {}) {
  const o = clientOptions(url, options);
  if (options.cluster) {
    if (o.db !== 0) throw new InvalidError(`${redacted(url)}: a cluster has only db 0`);
    const { host, port, db, ...redisOptions } = o;
    return new Redis.Cluster([{ host, port }], { redisOptions });
  }
  return new Redis(o);
}

// SET {emq}:version emq/1 NX; refuses a server that speaks another wire.
async function handshake(client) {
  await client.set(VERSION_KEY, WIRE, 'NX');
  const held = await client.get(VERSION_KEY);
  if (held !== WIRE) {
    throw new WireError(`EMQWIRE ${VERSION_KEY} holds ${JSON.stringify(held)}, not emq/1: this server speaks another wire`);
  }
}

module.exports = { clientFromUrl, clientOptions, handshake, WIRE, VERSION_KEY };

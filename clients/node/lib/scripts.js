'use strict';
// The emq/1 transitions: the repository's lua/ files, run by EVALSHA.
// The files are never copied into this source tree: a packed package
// carries the copy `npm pack` took (lib/copy_scripts.js), a checkout (and
// `npm install clients/node`, which links it) reads the repository's lua/;
// ECHOMQ_LUA_DIR overrides both. A test checks they are the repository's.
const fs = require('node:fs');
const path = require('node:path');
const { fromReply } = require('./errors');

function luaDir() {
  if (process.env.ECHOMQ_LUA_DIR) return process.env.ECHOMQ_LUA_DIR;
  for (const dir of [path.join(__dirname, '..', 'lua'), path.join(__dirname, '..', '..', '..', 'lua')]) {
    if (fs.existsSync(path.join(dir, 'enqueue.lua'))) return path.normalize(dir);
  }
  throw new Error('the emq/1 scripts were not found beside the package nor in the repository\'s lua/: ' +
                  'reinstall echomq from the repository, or set ECHOMQ_LUA_DIR');
}

// The transitions: one per .lua file of luaDir(), which is the only list of them.
function names() {
  return fs.readdirSync(luaDir()).filter((f) => f.endsWith('.lua')).map((f) => f.slice(0, -4)).sort();
}

const sources = new Map();
function source(name) {
  if (!sources.has(name)) sources.set(name, fs.readFileSync(path.join(luaDir(), `${name}.lua`)));
  return sources.get(name);
}

// A KEYS line of a script's header that names the queue's events stream.
const STREAM_KEY_LINE = /^[ \t]*KEYS\[\d+\][ \t]+emq:\{q\}:events\b/m;
const takesStreamOf = new Map();
// Whether the transition takes the events stream as its last KEY and its
// length as its last ARGV: its header (the comment it opens with) declares it.
function takesStream(name) {
  if (!takesStreamOf.has(name)) {
    const text = source(name).toString('latin1');
    takesStreamOf.set(name, STREAM_KEY_LINE.test(text.slice(0, text.indexOf(']]'))));
  }
  return takesStreamOf.get(name);
}

// Runs transitions by SHA on one client, loading a script on NOSCRIPT.
class Scripts {
  constructor(client) {
    this.client = client;
    this.shas = new Map();
  }

  async sha(name) {
    if (!this.shas.has(name)) this.shas.set(name, await this.client.script('LOAD', source(name)));
    return this.shas.get(name);
  }

  // The reply as the server gave it (bulk strings as Buffers); an error
  // reply rejects as ioredis rejects it. On NOSCRIPT the text goes by EVAL,
  // which caches it on the node that holds the keys: a cluster client sends
  // SCRIPT LOAD to any one node, and a promoted replica starts empty.
  async raw(name, keys, args) {
    try {
      return await this.client.evalshaBuffer(await this.sha(name), keys.length, ...keys, ...args);
    } catch (e) {
      if (!String(e.message).startsWith('NOSCRIPT')) throw e;
      return this.client.evalBuffer(source(name), keys.length, ...keys, ...args);
    }
  }

  // The reply; an EMQ error reply rejects as this package's error.
  async run(name, keys, args) {
    try {
      return await this.raw(name, keys, args);
    } catch (e) {
      throw fromReply(e);
    }
  }
}

module.exports = { names, luaDir, source, takesStream, Scripts };

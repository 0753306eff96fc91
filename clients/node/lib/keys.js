'use strict';
// The keys of emq/1, by the key rules of docs/protocol.md: the one place
// this package spells them. Requires nothing of the package but ids (which
// checks a queue's name), so every other module may require it.
const ids = require('./ids');

const VERSION_KEY = '{emq}:version';
const QUEUES_KEY = '{emq}:queues';
const DAEMONS_KEY = '{emq}:daemons';

const queueKey = (queue, kind) => `emq:{${queue}}:${kind}`;

// Every key of a queue.
function keys(queue) {
  ids.checkQueueName(queue);
  const out = {};
  for (const t of ['pending', 'active', 'delayed', 'dead', 'stats', 'meta', 'cron', 'waiting', 'outbox', 'events', 'gidx', 'rot', 'groups', 'gwait']) out[t] = queueKey(queue, t);
  return {
    ...out,
    rowRoot: queueKey(queue, 'job:'),
    depsRoot: queueKey(queue, 'deps:'),
    resultsRoot: queueKey(queue, 'results:'),
    uniqRoot: queueKey(queue, 'uniq:'),
    gqRoot: queueKey(queue, 'gq:'),
    grpRoot: queueKey(queue, 'grp:'),
    gactRoot: queueKey(queue, 'gact:'),
  };
}

const streamKey = (queue) => queueKey(queue, 'events');
const metaKey = (queue) => queueKey(queue, 'meta');
// A daemon's entry in the registry ({emq}:daemon:<id>), or a part of it (':work').
const daemonKey = (id, part = '') => `{emq}:daemon:${id}${part}`;

module.exports = { VERSION_KEY, QUEUES_KEY, DAEMONS_KEY, keys, streamKey, metaKey, daemonKey };

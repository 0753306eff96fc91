'use strict';
// echomq: a Node speaker of the EchoMQ wire (emq/1) over ioredis.
const { Queue } = require('./queue');
const { keys } = require('./keys');
const { clientFromUrl } = require('./connect');
const { daemons } = require('./fleet');
const ids = require('./ids');
const errors = require('./errors');
const handler = require('./handler');
const { FlowIncomplete } = require('./flows');

module.exports = { Queue, keys, clientFromUrl, daemons, handler, FlowIncomplete, ...ids, ...errors };

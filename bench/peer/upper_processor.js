// BullMQ's sandboxed processor for the pool comparison: the work of
// examples/handlers/pool/echo_upper.py, the payload upper-cased.
'use strict';
module.exports = async (job) => String(job.data.p).toUpperCase();

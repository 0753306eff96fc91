'use strict';
// The producer's side of a trace (docs/operations.md, "Tracing"): a job
// enqueued without a traceparent of its own carries the caller's context
// when @opentelemetry/api is installed (an optional peer dependency): a
// PRODUCER span `send <queue>` opens under the active span, and its
// context, injected by the registered propagator, is written in the row,
// so emqd's `process <queue>` span and the handler's own spans nest under
// it. Without the package, or without a registered SDK (whose propagator
// injects nothing), nothing is added.
let api = null;
try {
  api = require('@opentelemetry/api');
} catch (e) {
  api = null; // not installed: producers trace only what they are given
}

// send({traceparent, tracestate}) enqueues and resolves to something with
// the job's id (an enqueueResult, a flow's ids); it is given the caller's
// context unless `given` already has a traceparent.
async function sending(queue, given, send) {
  if (given.traceparent != null || api == null) return send(given);
  const tracer = api.trace.getTracer('echomq');
  const span = tracer.startSpan(`send ${queue}`, {
    kind: api.SpanKind.PRODUCER,
    attributes: {
      'messaging.system': 'echomq',
      'messaging.destination.name': queue,
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
    },
  });
  // Injected from a context made here, not the active one: without a
  // context manager, the active context would not hold the span.
  const carrier = {};
  api.propagation.inject(api.trace.setSpan(api.context.active(), span), carrier);
  try {
    const sent = await send({ traceparent: carrier.traceparent, tracestate: carrier.tracestate });
    span.setAttribute('messaging.message.id', sent.id);
    return sent;
  } catch (e) {
    span.recordException(e);
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: e.message });
    throw e;
  } finally {
    span.end();
  }
}

module.exports = { sending };

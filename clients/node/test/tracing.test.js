'use strict';
// Trace contexts from Node, against a real valkey-server: a given
// traceparent is written in the row; a flow's children carry their
// parent's context; and with OpenTelemetry's SDK registered (the real
// @opentelemetry/sdk-trace-base, spans kept in its in-memory exporter) an
// enqueue opens a PRODUCER span `send <queue>` whose context the row holds.
const test = require('node:test');
const assert = require('node:assert');
const api = require('@opentelemetry/api');
const { W3CTraceContextPropagator } = require('@opentelemetry/core');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { serverWithQueues } = require('./server');

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const GIVEN = `00-${TRACE}-00f067aa0ba902b7-01`;
const OWN = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

test('trace contexts', async (t) => {
  const { r, open } = await serverWithQueues(t);
  const context = (q, id) => r.hmget(q.keys.rowRoot + id, 'traceparent', 'tracestate');

  await t.test('without an SDK a job carries only the context it is given', async () => {
    const q = open('js-trace-given');
    const plain = await q.enqueue('p');
    assert.deepStrictEqual(await context(q, plain), [null, null], 'the API alone injects nothing');
    const given = await q.enqueue('g', { traceparent: GIVEN, tracestate: 'v=1' });
    assert.deepStrictEqual(await context(q, given), [GIVEN, 'v=1']);
    await assert.rejects(q.enqueue('x', { traceparent: '00-short' }), /traceparent must be a W3C traceparent/);
  });

  await t.test("a flow's children carry their parent's context unless given their own", async () => {
    const q = open('js-trace-flow');
    const ids = await q.enqueueFlow({
      payload: 'root', traceparent: GIVEN, tracestate: 'v=1',
      children: [{ payload: 'a', children: [{ payload: 'a1' }] }, { payload: 'b', traceparent: OWN }],
    });
    assert.deepStrictEqual(await context(q, ids.id), [GIVEN, 'v=1']);
    assert.deepStrictEqual(await context(q, ids.children[0].id), [GIVEN, 'v=1']);
    assert.deepStrictEqual(await context(q, ids.children[0].children[0].id), [GIVEN, 'v=1']);
    assert.deepStrictEqual(await context(q, ids.children[1].id), [OWN, null]);
  });

  await t.test('with the SDK registered an enqueue opens a PRODUCER span the row carries', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    api.trace.setGlobalTracerProvider(provider);
    api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    t.after(() => { api.trace.disable(); api.propagation.disable(); });
    const q = open('js-trace-sdk');

    const id = await q.enqueue('p');
    const spans = exporter.getFinishedSpans();
    assert.strictEqual(spans.length, 1);
    const [span] = spans;
    assert.strictEqual(span.name, 'send js-trace-sdk');
    assert.strictEqual(span.kind, api.SpanKind.PRODUCER);
    assert.deepStrictEqual(
      { ...span.attributes },
      { 'messaging.system': 'echomq', 'messaging.destination.name': 'js-trace-sdk', 'messaging.operation.type': 'send',
        'messaging.operation.name': 'send', 'messaging.message.id': id });
    const { traceId, spanId } = span.spanContext();
    assert.deepStrictEqual(await context(q, id), [`00-${traceId}-${spanId}-01`, null]);

    exporter.reset();
    const given = await q.enqueue('g', { traceparent: GIVEN });
    assert.strictEqual(exporter.getFinishedSpans().length, 0, 'a given context opens no span');
    assert.deepStrictEqual(await context(q, given), [GIVEN, null]);

    const tree = await q.enqueueFlow({ payload: 'root', children: [{ payload: 'c' }] });
    const [flowSpan] = exporter.getFinishedSpans();
    assert.strictEqual(flowSpan.spanContext().traceId === traceId, false, 'a new trace');
    const flowContext = `00-${flowSpan.spanContext().traceId}-${flowSpan.spanContext().spanId}-01`;
    assert.strictEqual(flowSpan.attributes['messaging.message.id'], tree.id);
    assert.deepStrictEqual(await context(q, tree.id), [flowContext, null]);
    assert.deepStrictEqual(await context(q, tree.children[0].id), [flowContext, null]);
  });
});

#!/usr/bin/env node
// An exec handler that continues the job's trace: emqd (tracing.enabled)
// runs each job in a span and passes its context in TRACEPARENT and
// TRACESTATE, OpenTelemetry's environment carrier; this handler's own span
// `upper` nests under it, whatever language the producer was written in.
// Reads the payload on stdin, prints it upper-cased.
//
// Needs: npm install @opentelemetry/api @opentelemetry/core
//   @opentelemetry/resources @opentelemetry/sdk-trace-base
//   @opentelemetry/exporter-trace-otlp-proto
// and exports where OTEL_EXPORTER_OTLP_ENDPOINT says (the handler's env:).
const { ROOT_CONTEXT, defaultTextMapGetter, trace } = require('@opentelemetry/api');
const { W3CTraceContextPropagator } = require('@opentelemetry/core');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { BasicTracerProvider, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');

const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'upper-handler' }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
});
const tracer = provider.getTracer('upper-handler');

// The job's span, from the environment; none when emqd does not trace.
const carrier = { traceparent: process.env.TRACEPARENT, tracestate: process.env.TRACESTATE };
const parent = new W3CTraceContextPropagator().extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);

async function main() {
  let payload = '';
  for await (const chunk of process.stdin) payload += chunk;
  const span = tracer.startSpan('upper', { attributes: { 'upper.bytes': payload.length } }, parent);
  process.stdout.write(payload.toUpperCase());
  span.end();
  // Sends the span before the process ends: emqd waits for the exit.
  await provider.shutdown();
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});

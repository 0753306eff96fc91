"""The producer's side of a trace (docs/operations.md, "Tracing"): a job
enqueued without a traceparent of its own carries the caller's context
when OpenTelemetry's API is installed (the package opentelemetry, an
optional dependency): a PRODUCER span `send <queue>` opens under the
current span, and its context, injected by the configured propagator, is
written in the row, so emqd's `process <queue>` span and the handler's own
spans nest under it. Without the package, or without a configured SDK
(whose propagator injects nothing), nothing is added."""
try:
    from opentelemetry import propagate as _propagate
    from opentelemetry import trace as _trace
except ImportError:  # not installed: producers trace only what they are given
    _trace = None


def sending(queue, traceparent, tracestate, send):
    """send(traceparent, tracestate) enqueues and returns the Enqueued (or a
    flow's ids, {"id": ...}); it is given the caller's context unless
    traceparent is already set."""
    if traceparent is not None or _trace is None:
        return send(traceparent, tracestate)
    tracer = _trace.get_tracer("echomq")
    attributes = {"messaging.system": "echomq", "messaging.destination.name": queue,
                  "messaging.operation.type": "send", "messaging.operation.name": "send"}
    with tracer.start_as_current_span("send " + queue, kind=_trace.SpanKind.PRODUCER, attributes=attributes) as span:
        carrier = {}
        _propagate.inject(carrier)
        job = send(carrier.get("traceparent"), carrier.get("tracestate") or None)
        span.set_attribute("messaging.message.id", job["id"] if isinstance(job, dict) else str(job))
        return job

#!/usr/bin/env python3
"""A test OTLP/HTTP receiver: what an OpenTelemetry Collector's otlp
receiver does for traces, and nothing more.

It decodes each POST /v1/traces body with the protocol's own definitions
(Debian's python3-opentelemetry-proto, on python3-protobuf), so a test sees
the spans exactly as a collector would, and writes one JSON line per span
to DIR/spans.ndjson. Each request, decoded or not, is a line of
DIR/requests.ndjson (its path, headers, status and span count).

  otlp_receiver.py --dir DIR [--mode accept|refuse|hang] [--count-only]

accept: 200 and an ExportTraceServiceResponse; refuse: 503 (a collector
shedding load); hang: reads the request and never answers (a collector
that froze). --count-only decodes every batch and counts its spans,
keeping only each request's line (bench/run's receiver: a collector's
work, not a test's records). It listens on a free loopback port and writes the port to
DIR/port once it accepts connections. Requests to any other path stand
for the service a handler calls (a shell handler's curl): they are
recorded with their headers and body and answered 200 "ok", so a test can
see the traceparent header a handler passed on.
"""

import argparse
import gzip
import json
import os
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

KINDS = {v: k for k, v in trace_pb2.Span.SpanKind.items()}
STATUS = {v: k for k, v in trace_pb2.Status.StatusCode.items()}


def value_of(v: common_pb2.AnyValue):
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value_of(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value_of(kv.value) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, kind) if kind else None


def attributes(kvs):
    return {kv.key: value_of(kv.value) for kv in kvs}


def spans_of(request: trace_service_pb2.ExportTraceServiceRequest):
    for rs in request.resource_spans:
        resource = attributes(rs.resource.attributes)
        for ss in rs.scope_spans:
            for s in ss.spans:
                yield {
                    "trace_id": s.trace_id.hex(),
                    "span_id": s.span_id.hex(),
                    "parent_span_id": s.parent_span_id.hex(),
                    "trace_state": s.trace_state,
                    "name": s.name,
                    "kind": KINDS.get(s.kind, str(s.kind)),
                    "start_ns": s.start_time_unix_nano,
                    "end_ns": s.end_time_unix_nano,
                    "attributes": attributes(s.attributes),
                    "status": {"code": STATUS.get(s.status.code, str(s.status.code)), "message": s.status.message},
                    "links": [{"trace_id": l.trace_id.hex(), "span_id": l.span_id.hex()} for l in s.links],
                    "resource": resource,
                    "scope": ss.scope.name,
                }


class Receiver(BaseHTTPRequestHandler):
    mode = "accept"
    count_only = False
    out_dir = "."
    lock = threading.Lock()
    never = threading.Event()

    def log_message(self, *args):  # the test reads the files, not stderr
        pass

    def record(self, name, obj):
        with self.lock, open(os.path.join(self.out_dir, name), "a", encoding="utf-8") as f:
            f.write(json.dumps(obj) + "\n")

    def service(self, body):
        self.record("requests.ndjson", {"method": self.command, "path": self.path, "headers": dict(self.headers.items()),
                                        "body": body.decode("utf-8", "replace"), "status": 200, "spans": 0})
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def do_GET(self):
        self.service(b"")

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length", "0")))
        chunks = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip(), 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailers
                    pass
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline()  # the CRLF after each chunk

    def do_POST(self):
        body = self.body()
        if self.path != "/v1/traces":
            self.service(body)
            return
        if self.headers.get("Content-Encoding", "") == "gzip":
            body = gzip.decompress(body)
        entry = {"method": "POST", "path": self.path, "headers": dict(self.headers.items()), "spans": 0}
        if self.mode == "hang":
            entry["status"] = "hung"
            self.record("requests.ndjson", entry)
            self.never.wait()
            return
        if self.mode == "refuse":
            entry["status"] = 503
            self.record("requests.ndjson", entry)
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        request = trace_service_pb2.ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except Exception as e:  # a body that is not the protocol's: the exporter is broken
            entry["status"] = 400
            entry["error"] = str(e)
            self.record("requests.ndjson", entry)
            self.send_response(400)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.count_only:
            entry["spans"] = sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
        else:
            spans = list(spans_of(request))
            for span in spans:
                self.record("spans.ndjson", span)
            entry["spans"] = len(spans)
        entry["status"] = 200
        self.record("requests.ndjson", entry)
        reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--mode", choices=["accept", "refuse", "hang"], default="accept")
    parser.add_argument("--count-only", action="store_true")
    args = parser.parse_args()
    Receiver.mode = args.mode
    Receiver.count_only = args.count_only
    Receiver.out_dir = args.dir
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    tmp = os.path.join(args.dir, "port.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, os.path.join(args.dir, "port"))
    server.serve_forever()


if __name__ == "__main__":
    main()

"""A small OTLP/HTTP receiver for Warden's trace tests.

Decodes each POST to /v1/traces with the official OpenTelemetry protobuf
definitions (opentelemetry-proto) and appends every span to the file named
on the command line, one JSON object per line. Prints `listening on PORT`
once it listens on 127.0.0.1 (an ephemeral port).
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

OUT = sys.argv[1]


def value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.path != "/v1/traces" or self.headers.get("content-type") != "application/x-protobuf":
            self.send_response(404)
            self.end_headers()
            return
        request = ExportTraceServiceRequest.FromString(body)
        with open(OUT, "a", encoding="utf-8") as out:
            for resource_spans in request.resource_spans:
                resource = {kv.key: value(kv.value) for kv in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        out.write(json.dumps({
                            "service": resource.get("service.name"),
                            "scope": scope_spans.scope.name,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_span_id": span.parent_span_id.hex(),
                            "trace_state": span.trace_state,
                            "name": span.name,
                            "kind": span.kind,
                            "start": span.start_time_unix_nano,
                            "end": span.end_time_unix_nano,
                            "attributes": {kv.key: value(kv.value) for kv in span.attributes},
                            "events": [
                                {"name": e.name, "time": e.time_unix_nano, "attributes": {kv.key: value(kv.value) for kv in e.attributes}}
                                for e in span.events
                            ],
                            "status": {"code": span.status.code, "message": span.status.message},
                            "header": self.headers.get("x-test-key"),
                        }) + "\n")
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
print(f"listening on {server.server_address[1]}", flush=True)
server.serve_forever()

"""A gRPC server in Python's grpcio (C core), the independent peer for GRPCInteropTests.

  grpc_peer.py PROTO EVENTS [--tls CERT KEY] [--json]

Compiles PROTO (from `switchboard export-proto`) with grpcio-tools, serves every service it
declares on 127.0.0.1 (h2c, or TLS with CERT/KEY), prints its port, and stops when stdin
closes. Each call appends one JSON line to EVENTS when it ends: the method, the metadata it
got, the time its deadline left, whether it was cancelled, the request's size and (for
requests up to 64 KiB) the request as grpcio re-serializes it, hex-encoded, so a test can
check that every field it set (path-, query- and header-bound ones too) reached the server.

What a call does is chosen by its `x-test` metadata:
  (none)          answers: a `hash` request field comes back hex-encoded in the first string
                  field of the response; otherwise that field says "ok <request bytes>"
  status:N:TEXT   fails with gRPC status N and message TEXT
  details:N:HEX:TEXT  the same, with the bytes HEX as `grpc-status-details-bin` in the
                  trailers (what grpcio-status's `abort_with_status` sends)
  sleep:MS        sleeps MS milliseconds (or until the call ends), then answers
  hold:MS         the same, logging an event with started=true when it begins
  wait            waits (10 s at most) until the client cancels
  big:N           answers with N bytes in the response's first bytes field
Initial metadata `x-server: grpcio` and trailing metadata `x-request-size: <n>` go with
every answer. With --json every method reads and writes its messages as protobuf JSON
(json_format), as a client sending `application/grpc+json` expects."""
import importlib
import importlib.resources
import json
import os
import sys
import tempfile
import threading
import time
from concurrent import futures

import grpc
from google.protobuf import json_format, message_factory
from grpc_tools import protoc

json_messages = "--json" in sys.argv
if json_messages:
    sys.argv.remove("--json")
# --max-streams N: the server's SETTINGS_MAX_CONCURRENT_STREAMS, so calls beyond N wait.
max_streams = None
if "--max-streams" in sys.argv:
    at = sys.argv.index("--max-streams")
    max_streams = int(sys.argv[at + 1])
    del sys.argv[at:at + 2]
proto_path, events_path = sys.argv[1], sys.argv[2]
tls = sys.argv[4:6] if len(sys.argv) > 5 and sys.argv[3] == "--tls" else None

out = tempfile.mkdtemp()
include = str(importlib.resources.files("grpc_tools") / "_proto")
if protoc.main(["protoc", f"-I{os.path.dirname(proto_path)}", f"-I{include}", f"--python_out={out}", os.path.basename(proto_path)]) != 0:
    sys.exit("protoc failed")
sys.path.insert(0, out)
module = importlib.import_module(os.path.basename(proto_path)[:-len(".proto")] + "_pb2")
events_lock = threading.Lock()


def log(event):
    with events_lock, open(events_path, "a") as f:
        f.write(json.dumps(event) + "\n")


def first_field(descriptor, kind):
    for field in descriptor.fields:
        repeated = field.is_repeated if hasattr(field, "is_repeated") else field.label == field.LABEL_REPEATED
        if field.type == kind and not repeated:
            return field.name
    return None


def make_handler(full_method, request_class, response_class):
    def handle(request, context):
        metadata = {k: v if isinstance(v, str) else v.hex() for k, v in context.invocation_metadata()}
        remaining = context.time_remaining()
        size = request.ByteSize()
        test = metadata.get("x-test", "")
        event = {"method": full_method, "metadata": metadata, "remaining": remaining, "size": size, "cancelled": False}
        if size <= 64 << 10:
            event["request"] = request.SerializeToString().hex()
        context.send_initial_metadata((("x-server", "grpcio"),))
        context.set_trailing_metadata((("x-request-size", str(size)),))
        response = response_class()
        try:
            if test.startswith("details:"):
                _, code, details, text = test.split(":", 3)
                status = next(s for s in grpc.StatusCode if s.value[0] == int(code))
                # Replaces the trailers set above, so both go: grpcio sends trailing metadata
                # set before `abort` with the status, as `rpc_status.to_status` relies on.
                context.set_trailing_metadata((("x-request-size", str(size)), ("grpc-status-details-bin", bytes.fromhex(details))))
                log(event)
                context.abort(status, text)
            if test.startswith("status:"):
                _, code, text = test.split(":", 2)
                status = next(s for s in grpc.StatusCode if s.value[0] == int(code))
                log(event)
                context.abort(status, text)
            if test.startswith("sleep:") or test.startswith("hold:"):
                if test.startswith("hold:"):
                    log(dict(event, started=True))  # so the client knows the call holds its stream
                end = time.monotonic() + int(test.split(":")[1]) / 1000
                while time.monotonic() < end and context.is_active():
                    time.sleep(0.01)
                event["cancelled"] = not context.is_active()
            if test == "wait":
                log(dict(event, started=True))  # so the client cancels a call the server has
                end = time.monotonic() + 10
                while time.monotonic() < end and context.is_active():
                    time.sleep(0.01)
                event["cancelled"] = not context.is_active()
            if test.startswith("big:"):
                field = first_field(response_class.DESCRIPTOR, 12)  # bytes
                setattr(response, field, b"\x5a" * int(test.split(":")[1]))
            text_field = first_field(response_class.DESCRIPTOR, 9)  # string
            if text_field:
                if "hash" in request_class.DESCRIPTOR.fields_by_name:
                    setattr(response, text_field, request.hash.hex())
                else:
                    setattr(response, text_field, f"ok {size}")
            log(event)
            return response
        except grpc.RpcError:
            raise

    if json_messages:
        return grpc.unary_unary_rpc_method_handler(
            handle, request_deserializer=lambda data: json_format.Parse(data, request_class()),
            response_serializer=lambda message: json_format.MessageToJson(message).encode())
    return grpc.unary_unary_rpc_method_handler(handle, request_deserializer=request_class.FromString,
                                               response_serializer=response_class.SerializeToString)


server_options = [("grpc.max_receive_message_length", 8 << 20), ("grpc.max_send_message_length", 8 << 20)]
if max_streams is not None:
    server_options.append(("grpc.max_concurrent_streams", max_streams))
server = grpc.server(futures.ThreadPoolExecutor(max_workers=120), options=server_options)
handlers = []
for service in module.DESCRIPTOR.services_by_name.values():
    methods = {}
    for method in service.methods:
        methods[method.name] = make_handler(f"/{service.full_name}/{method.name}",
                                            message_factory.GetMessageClass(method.input_type),
                                            message_factory.GetMessageClass(method.output_type))
    handlers.append(grpc.method_handlers_generic_handler(service.full_name, methods))
server.add_generic_rpc_handlers(handlers)
if tls:
    with open(tls[0], "rb") as c, open(tls[1], "rb") as k:
        credentials = grpc.ssl_server_credentials([(k.read(), c.read())])
    port = server.add_secure_port("127.0.0.1:0", credentials)
else:
    port = server.add_insecure_port("127.0.0.1:0")
server.start()
print(port, flush=True)
sys.stdin.read()
server.stop(0)

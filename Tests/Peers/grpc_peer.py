"""A gRPC server in Python's grpcio (C core), the independent peer for GRPCInteropTests (and for
GRPCEventTests, our client listening to its events).

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
(json_format), as a client sending `application/grpc+json` expects.

A service's events methods are served as GRPCServer serves them (always protobuf: a client
subscribes with `application/grpc`), so our client can listen to a server nobody here wrote:
  SwitchboardEvents       server-streaming; with `x-test: events:N:TAG` it pushes N
                          `PUT /api/v1/message`s (an Envelope whose serverGuid is TAG-n, header
                          X-Signal-Timestamp 1700000000000+n) with ids above 2^40, unique in the
                          process; then waits (30 s at most) for all N acknowledgements and ends
                          with OK. Without it, it ends with OK at once.
  SwitchboardAcknowledge  records the acknowledgement for the subscription that pushed its id.
The subscription's event, logged as it ends, adds its `peer` (grpcio's address of the client's
connection), what it `pushed` ([{"id", "guid"}]) and the `acks` it got ([{"id", "status",
"peer"}], in arrival order); each acknowledgement's own event adds `ack` ({"id", "status",
"known"}: whether it answered a push awaiting one)."""
import importlib
import importlib.resources
import itertools
import json
import os
import sys
import tempfile
import threading
import time
from concurrent import futures

import grpc
from google.protobuf import empty_pb2, json_format, message_factory
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


# Events: push ids awaiting an acknowledgement, each to its subscription's record. Ids are
# unique in the process (and above 2^40, so a 32-bit id anywhere on the way shows), so an
# acknowledgement finds its subscription whatever connection it comes on.
push_ids = itertools.count((1 << 40) + 1)
acknowledged = threading.Condition()
awaiting = {}


def make_events_handler(full_method, push_class):
    header_class = message_factory.GetMessageClass(push_class.DESCRIPTOR.fields_by_name["headers"].message_type)
    envelope_class = getattr(module, "Envelope", None)

    def handle(request, context):
        metadata = {k: v if isinstance(v, str) else v.hex() for k, v in context.invocation_metadata()}
        test = metadata.get("x-test", "")
        record = {"method": full_method, "metadata": metadata, "remaining": context.time_remaining(), "size": 0,
                  "cancelled": False, "peer": context.peer(), "pushed": [], "acks": []}
        count, tag = 0, ""
        if test.startswith("events:"):
            _, count, tag = test.split(":", 2)
            count = int(count)
        # Sent before any push: the client's `subscribe` returns once the stream is open.
        context.send_initial_metadata((("x-server", "grpcio"),))
        try:
            for n in range(1, count + 1):
                guid = f"{tag}-{n}"
                timestamp = 1700000000000 + n
                with acknowledged:
                    push_id = next(push_ids)
                    awaiting[push_id] = record
                    record["pushed"].append({"id": push_id, "guid": guid})
                if envelope_class is not None:
                    body = envelope_class(serverGuid=guid, content=f"payload {n}".encode(), timestamp=timestamp).SerializeToString()
                else:
                    body = guid.encode()
                yield push_class(id=push_id, verb="PUT", path="/api/v1/message",
                                 headers=[header_class(name="X-Signal-Timestamp", value=str(timestamp))], body=body)
            end = time.monotonic() + 30
            with acknowledged:
                while len(record["acks"]) < count and time.monotonic() < end and context.is_active():
                    acknowledged.wait(0.05)
        finally:
            # Logged before the stream ends (on return; or closed, the client having gone), so
            # a client that saw the end finds it.
            with acknowledged:
                for push in record["pushed"]:
                    awaiting.pop(push["id"], None)
                record["cancelled"] = not context.is_active()
                log(record)

    return handle


def make_acknowledge_handler(full_method):
    def handle(request, context):
        metadata = {k: v if isinstance(v, str) else v.hex() for k, v in context.invocation_metadata()}
        ack = {"id": request.id, "status": request.status, "peer": context.peer()}
        with acknowledged:
            record = awaiting.get(request.id)
            if record is not None:
                record["acks"].append(ack)
                acknowledged.notify_all()
        log({"method": full_method, "metadata": metadata, "remaining": context.time_remaining(), "size": request.ByteSize(),
             "cancelled": False, "request": request.SerializeToString().hex(),
             "ack": {"id": request.id, "status": request.status, "known": record is not None}})
        return empty_pb2.Empty()

    return handle


server_options = [("grpc.max_receive_message_length", 8 << 20), ("grpc.max_send_message_length", 8 << 20)]
if max_streams is not None:
    server_options.append(("grpc.max_concurrent_streams", max_streams))
server = grpc.server(futures.ThreadPoolExecutor(max_workers=120), options=server_options)
handlers = []
for service in module.DESCRIPTOR.services_by_name.values():
    methods = {}
    for method in service.methods:
        full_method = f"/{service.full_name}/{method.name}"
        if method.name == "SwitchboardEvents":
            push_class = message_factory.GetMessageClass(method.output_type)
            methods[method.name] = grpc.unary_stream_rpc_method_handler(
                make_events_handler(full_method, push_class), request_deserializer=empty_pb2.Empty.FromString,
                response_serializer=push_class.SerializeToString)
        elif method.name == "SwitchboardAcknowledge":
            methods[method.name] = grpc.unary_unary_rpc_method_handler(
                make_acknowledge_handler(full_method), request_deserializer=message_factory.GetMessageClass(method.input_type).FromString,
                response_serializer=empty_pb2.Empty.SerializeToString)
        else:
            methods[method.name] = make_handler(full_method, message_factory.GetMessageClass(method.input_type),
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

"""A gRPC client in Python's grpcio, calling a Switchboard GRPCServer that serves the sample
schema's Usernames and SealedSenderMessages handlers (GRPCServerTests).

  grpc_client_peer.py PROTO PORT [--tls CA] [--explicit-code | --large LIMIT | --cancel | --statuses]

Prints a JSON list of {"name", "code", "details", "response", "trailers"} per call.
With --explicit-code it makes only the calls of GRPCExplicitCodeTests, whose server also serves
Messages: Messages/SendMessage (with an `authorization` header) to "mismatch" ("explicit", the
409 the schema gives `grpc FAILED_PRECONDITION`) and to "sync" ("explicit-ok"), and
SealedSenderMessages/SendSealedMessage to "mismatch" ("default", 409 with no `grpc` code).

The other modes call GRPCServerTests' ProbeHandlers, whose lookups are told apart by the
hash's first byte:
  --large LIMIT  a request of exactly LIMIT encoded bytes, which the server echoes in base64
                 ("at-limit", a response larger still), one of LIMIT + 1 ("over-limit"), then
                 a small call on the same channel ("after-limit").
  --cancel       starts a slow call (0xfb), waits for a line on standard input (the test's
                 word that the handler has started), cancels it ("cancelled"), then makes a
                 small call on the same channel ("after-cancel").
  --statuses     undeclared statuses a handler throws (0xfa, the status, the body: named
                 "undeclared-STATUS"), declared errors without a `grpc` code, a malformed
                 request, a call on the wrong kind of connection, two messages and none on a
                 unary method, and a compressed request."""
import base64
import importlib
import importlib.resources
import json
import os
import sys
import tempfile
from concurrent import futures

import grpc
from google.protobuf import json_format
from grpc_tools import protoc


def option(name, takes_value=False):
    """Takes `name` (and the value after it) out of the arguments: its value, True, or None."""
    if name not in sys.argv:
        return None
    at = sys.argv.index(name)
    value = sys.argv[at + 1] if takes_value else True
    del sys.argv[at:at + (2 if takes_value else 1)]
    return value


explicit_code = option("--explicit-code")
large_limit = option("--large", takes_value=True)
cancel = option("--cancel")
statuses = option("--statuses")
ca = option("--tls", takes_value=True)
proto_path, port = sys.argv[1], int(sys.argv[2])
out = tempfile.mkdtemp()
include = str(importlib.resources.files("grpc_tools") / "_proto")
if protoc.main(["protoc", f"-I{os.path.dirname(proto_path)}", f"-I{include}", f"--python_out={out}", os.path.basename(proto_path)]) != 0:
    sys.exit("protoc failed")
sys.path.insert(0, out)
pb = importlib.import_module(os.path.basename(proto_path)[:-len(".proto")] + "_pb2")

# The echo of a request at the server's limit is larger than grpcio's own 4 MiB default.
channel_options = [("grpc.max_receive_message_length", 64 << 20)] if large_limit else []
if ca:
    with open(ca, "rb") as f:
        credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
    channel = grpc.secure_channel(f"127.0.0.1:{port}", credentials,
                                  options=[("grpc.ssl_target_name_override", "localhost")] + channel_options)
else:
    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=channel_options)


def method(path, request_class, response_class):
    return channel.unary_unary(path, request_serializer=request_class.SerializeToString,
                               response_deserializer=response_class.FromString)


lookup = method("/signal.chat.Usernames/LookUpUsernameHash", pb.LookUpUsernameHashRequest, pb.LookUpUsernameHashResponse)
sealed = method("/signal.chat.SealedSenderMessages/SendSealedMessage", pb.SendMessageRequest, pb.SendMessageResponse)
unknown = method("/signal.chat.Nowhere/Nothing", pb.SendMessageRequest, pb.SendMessageResponse)
key = (("unidentified-access-key", "BwcHBwcHBwcHBwcHBwcHBw=="),)
results = []


def record(name, call, request, metadata=(), timeout=10, summary=None, **options):
    """Makes one call and appends its outcome; `summary` stands in for a response too large
    to print, `options` go to the call (compression)."""
    entry = {"name": name}
    try:
        response, info = call.with_call(request, metadata=metadata, timeout=timeout, **options)
        entry["code"] = "OK"
        if summary:
            entry["response"] = summary(response)
        else:
            entry["response"] = {k: str(v) for k, v in json_format.MessageToDict(response).items()}
        entry["trailers"] = dict(info.trailing_metadata() or ())
    except grpc.RpcError as error:
        entry["code"] = error.code().name
        entry["details"] = error.details()
        entry["trailers"] = {k: (v if isinstance(v, str) else v.hex()) for k, v in (error.trailing_metadata() or ())}
    results.append(entry)


def finish():
    channel.close()
    print(json.dumps(results))
    sys.exit(0)


if explicit_code:
    send = method("/signal.chat.Messages/SendMessage", pb.SendMessageRequest, pb.SendMessageResponse)
    account = (("authorization", "Basic dXNlcjpwYXNz"),)
    record("explicit", send, pb.SendMessageRequest(destination="mismatch"), metadata=account)
    record("explicit-ok", send, pb.SendMessageRequest(destination="sync"), metadata=account)
    record("default", sealed, pb.SendMessageRequest(destination="mismatch"), metadata=key)
    finish()

if large_limit:
    limit = int(large_limit)

    def hash_for(size):
        """A 0xfc hash (echo) whose request encodes to exactly `size` bytes: tag, length, bytes."""
        length = size - 6
        while pb.LookUpUsernameHashRequest(hash=bytes(length)).ByteSize() < size:
            length += 1
        pattern = bytes(range(256)) * (length // 256 + 1)
        value = b"\xfc" + pattern[:length - 1]
        assert pb.LookUpUsernameHashRequest(hash=value).ByteSize() == size, f"no hash encodes to exactly {size} bytes"
        return value

    at_limit = pb.LookUpUsernameHashRequest(hash=hash_for(limit))
    record("at-limit", lookup, at_limit, timeout=60,
           summary=lambda r: {"requestBytes": str(at_limit.ByteSize()), "responseBytes": str(r.ByteSize()),
                              "echoed": str(base64.b64decode(r.uuid) == at_limit.hash)})
    record("over-limit", lookup, pb.LookUpUsernameHashRequest(hash=hash_for(limit + 1)), timeout=60)
    record("after-limit", lookup, pb.LookUpUsernameHashRequest(hash=b"\x01\x02"))
    finish()

if cancel:
    # A deadline far past the test's bound: only the cancellation can end the call that soon.
    slow = lookup.future(pb.LookUpUsernameHashRequest(hash=b"\xfb"), timeout=120)
    sys.stdin.readline()
    cancelled = slow.cancel()
    results.append({"name": "cancelled", "code": slow.code().name, "details": slow.details(),
                    "response": {"cancel": str(cancelled)}})
    record("after-cancel", lookup, pb.LookUpUsernameHashRequest(hash=b"\x01\x02"))
    finish()

if statuses:
    def undeclared(status, body):
        """A lookup whose handler throws `.unrecognized(status:body:)`."""
        return pb.LookUpUsernameHashRequest(hash=bytes([0xfa, status >> 8, status & 0xff]) + body)

    for status in (500, 501, 503, 504, 403, 418, 404, 409, 502):
        record(f"undeclared-{status}", lookup, undeclared(status, b"boom"))
    # A 400's body is its grpc-message: percent-encoded on the wire, cut to 1 KiB.
    record("undeclared-400", lookup, undeclared(400, " naïve 100% ünïcode ".encode()))
    record("undeclared-400-long", lookup, undeclared(400, b"e" * 2000))
    record("declared-410", sealed, pb.SendMessageRequest(destination="stale"), metadata=key)
    record("declared-404", sealed, pb.SendMessageRequest(destination="nobody"), metadata=key)
    raw = channel.unary_unary("/signal.chat.Usernames/LookUpUsernameHash", response_deserializer=pb.LookUpUsernameHashResponse.FromString)
    record("malformed", raw, b"\x0a\x05ab")
    record("wrong-connection", lookup, pb.LookUpUsernameHashRequest(hash=b"\x01"), metadata=(("authorization", "Basic dXNlcjpwYXNz"),))
    streaming = channel.stream_unary("/signal.chat.Usernames/LookUpUsernameHash",
                                     request_serializer=pb.LookUpUsernameHashRequest.SerializeToString,
                                     response_deserializer=pb.LookUpUsernameHashResponse.FromString)
    one = pb.LookUpUsernameHashRequest(hash=b"\x01")
    record("two-messages", streaming, iter([one, one]))
    record("no-message", streaming, iter([]))
    # Zeros, so gzip shrinks them and grpcio does send them compressed.
    record("compressed", lookup, pb.LookUpUsernameHashRequest(hash=bytes(1024)), compression=grpc.Compression.Gzip)
    finish()

record("found", lookup, pb.LookUpUsernameHashRequest(hash=b"\x01\x02"))
record("missing", lookup, pb.LookUpUsernameHashRequest(hash=b"\xff"))
record("limited", lookup, pb.LookUpUsernameHashRequest(hash=b"\xfe"))
record("deadline", lookup, pb.LookUpUsernameHashRequest(hash=b"\xfd"), timeout=0.3)
record("sync", sealed, pb.SendMessageRequest(destination="sync"), metadata=key)
record("no-key", sealed, pb.SendMessageRequest(destination="sync"))
record("mismatch", sealed, pb.SendMessageRequest(destination="mismatch"), metadata=key)
record("unknown-method", unknown, pb.SendMessageRequest())

with futures.ThreadPoolExecutor(max_workers=100) as pool:
    calls = [pool.submit(lookup, pb.LookUpUsernameHashRequest(hash=bytes([n])), timeout=20) for n in range(100)]
    answers = [c.result().uuid for c in calls]
ok = answers == [bytes([n]).hex() for n in range(100)]
results.append({"name": "concurrent", "code": "OK" if ok else "WRONG", "details": str(answers[:3])})
finish()

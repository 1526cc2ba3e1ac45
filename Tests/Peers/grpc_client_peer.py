"""A gRPC client in Python's grpcio, calling a Switchboard GRPCServer that serves the sample
schema's Usernames and SealedSenderMessages handlers (GRPCServerTests).

  grpc_client_peer.py PROTO PORT [--tls CA] [--explicit-code]

Prints a JSON list of {"name", "code", "details", "response", "trailers"} per call.
With --explicit-code it makes only the calls of GRPCExplicitCodeTests, whose server also serves
Messages: Messages/SendMessage (with an `authorization` header) to "mismatch" ("explicit", the
409 the schema gives `grpc FAILED_PRECONDITION`) and to "sync" ("explicit-ok"), and
SealedSenderMessages/SendSealedMessage to "mismatch" ("default", 409 with no `grpc` code)."""
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

explicit_code = "--explicit-code" in sys.argv
if explicit_code:
    sys.argv.remove("--explicit-code")
proto_path, port = sys.argv[1], int(sys.argv[2])
ca = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--tls" else None
out = tempfile.mkdtemp()
include = str(importlib.resources.files("grpc_tools") / "_proto")
if protoc.main(["protoc", f"-I{os.path.dirname(proto_path)}", f"-I{include}", f"--python_out={out}", os.path.basename(proto_path)]) != 0:
    sys.exit("protoc failed")
sys.path.insert(0, out)
pb = importlib.import_module(os.path.basename(proto_path)[:-len(".proto")] + "_pb2")

if ca:
    with open(ca, "rb") as f:
        credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
    channel = grpc.secure_channel(f"127.0.0.1:{port}", credentials, options=[("grpc.ssl_target_name_override", "localhost")])
else:
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")


def method(path, request_class, response_class):
    return channel.unary_unary(path, request_serializer=request_class.SerializeToString,
                               response_deserializer=response_class.FromString)


lookup = method("/signal.chat.Usernames/LookUpUsernameHash", pb.LookUpUsernameHashRequest, pb.LookUpUsernameHashResponse)
sealed = method("/signal.chat.SealedSenderMessages/SendSealedMessage", pb.SendMessageRequest, pb.SendMessageResponse)
unknown = method("/signal.chat.Nowhere/Nothing", pb.SendMessageRequest, pb.SendMessageResponse)
key = (("unidentified-access-key", "BwcHBwcHBwcHBwcHBwcHBw=="),)
results = []


def record(name, call, request, metadata=(), timeout=10):
    entry = {"name": name}
    try:
        response, info = call.with_call(request, metadata=metadata, timeout=timeout)
        entry["code"] = "OK"
        entry["response"] = {k: str(v) for k, v in json_format.MessageToDict(response).items()}
        entry["trailers"] = dict(info.trailing_metadata() or ())
    except grpc.RpcError as error:
        entry["code"] = error.code().name
        entry["details"] = error.details()
        entry["trailers"] = {k: (v if isinstance(v, str) else v.hex()) for k, v in (error.trailing_metadata() or ())}
    results.append(entry)


if explicit_code:
    send = method("/signal.chat.Messages/SendMessage", pb.SendMessageRequest, pb.SendMessageResponse)
    account = (("authorization", "Basic dXNlcjpwYXNz"),)
    record("explicit", send, pb.SendMessageRequest(destination="mismatch"), metadata=account)
    record("explicit-ok", send, pb.SendMessageRequest(destination="sync"), metadata=account)
    record("default", sealed, pb.SendMessageRequest(destination="mismatch"), metadata=key)
    channel.close()
    print(json.dumps(results))
    sys.exit(0)

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
channel.close()
print(json.dumps(results))

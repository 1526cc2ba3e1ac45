"""A grpcio client listening to a Switchboard GRPCServer's events (GRPCEventTests):
  grpc_events_peer.py PROTO PORT COUNT [--tls CA]
subscribes to signal.chat.Messages/SwitchboardEvents, acknowledges each of COUNT pushes with
status 200 through SwitchboardAcknowledge, and prints [{"id", "path", "guid"}] in order.
With --tls it connects over TLS (ALPN h2), trusting CA, for the name `localhost` (the test
certificate's)."""
import importlib
import importlib.resources
import json
import os
import sys
import tempfile

import grpc
from google.protobuf import empty_pb2
from grpc_tools import protoc

proto_path, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ca = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--tls" else None
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
events = channel.unary_stream("/signal.chat.Messages/SwitchboardEvents", request_serializer=empty_pb2.Empty.SerializeToString,
                              response_deserializer=pb.SwitchboardPush.FromString)
acknowledge = channel.unary_unary("/signal.chat.Messages/SwitchboardAcknowledge", request_serializer=pb.SwitchboardPushAck.SerializeToString,
                                  response_deserializer=empty_pb2.Empty.FromString)
stream = events(empty_pb2.Empty(), metadata=(("authorization", "Basic YTpi"),), timeout=30)
seen = []
for push in stream:
    envelope = pb.Envelope.FromString(push.body)
    seen.append({"id": push.id, "path": push.path, "guid": envelope.serverGuid})
    acknowledge(pb.SwitchboardPushAck(id=push.id, status=200), timeout=10)
    if len(seen) == count:
        break
stream.cancel()
channel.close()
print(json.dumps(seen))

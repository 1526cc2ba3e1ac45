"""A Signal-style chat server written with Python `websockets` and the `protobuf` package,
for interop tests. Nothing here shares code with Switchboard: the envelope and payload
classes come from a descriptor set that protoc built from `switchboard export-proto`.

usage: chat_server.py DESCRIPTOR_SET
Prints its port, serves until stdin closes (bounded to 120 s), then prints one JSON line:
what it received, the acknowledgements, and any frame whose bytes differ from protobuf's
own serialization of the parsed message.
"""
import asyncio
import base64
import json
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from websockets.asyncio.server import serve

descriptor_set = descriptor_pb2.FileDescriptorSet()
with open(sys.argv[1], "rb") as handle:
    descriptor_set.ParseFromString(handle.read())
pool = descriptor_pool.DescriptorPool()
for file_proto in descriptor_set.file:
    pool.Add(file_proto)


def message_class(name):
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("signal.chat." + name))


WebSocketMessage = message_class("WebSocketMessage")
RequestMessage = message_class("WebSocketRequestMessage")
ResponseMessage = message_class("WebSocketResponseMessage")
Envelope = message_class("Envelope")
LookUpUsernameHashResponse = message_class("LookUpUsernameHashResponse")
SendMessageRequest = message_class("SendMessageRequest")
SendMessageResponse = message_class("SendMessageResponse")
REQUEST = WebSocketMessage.Type.Value("REQUEST")
RESPONSE = WebSocketMessage.Type.Value("RESPONSE")

report = {"connections": [], "requests": [], "acks": [], "pushed": [], "mismatches": [], "sent": []}


def respond(request):
    """Answers one client request the way Signal's server would."""
    if request.verb == "GET" and request.path.startswith("/v1/accounts/username_hash/"):
        encoded = request.path.rsplit("/", 1)[1]
        digest = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        if digest != bytes([1, 2, 3]):
            return ResponseMessage(id=request.id, status=404, message="Not Found")
        body = json_format.MessageToJson(LookUpUsernameHashResponse(uuid="py-alice")).encode()
        return ResponseMessage(id=request.id, status=200, message="OK", headers=["Content-Type:application/json"], body=body)
    if request.verb == "PUT" and request.path.startswith("/v1/messages/"):
        sent = SendMessageRequest()
        sent.ParseFromString(request.body)
        report["sent"].append({
            "destination": request.path.rsplit("/", 1)[1],
            "timestamp": sent.timestamp,
            "contents": [m.content.hex() for m in sent.messages],
            "urgent": sent.urgent,
        })
        body = SendMessageResponse(needsSync=len(sent.messages) == 2).SerializeToString()
        return ResponseMessage(id=request.id, status=200, message="OK", headers=["Content-Type:application/x-protobuf"], body=body)
    return ResponseMessage(id=request.id, status=404, message="Not Found")


async def handler(connection):
    headers = connection.request.headers
    authorization = headers.get("Authorization")
    report["connections"].append({"path": connection.request.path, "authorization": authorization,
                                  "userAgent": headers.get("User-Agent")})
    if authorization:
        # Pipelined, as Signal delivers: every push is sent before any acknowledgement.
        for number in range(1, 6):
            envelope = Envelope(type=1, serverGuid=f"py-{number}", content=bytes([number, 0xFF]),
                                timestamp=1700000000000 + number, sourceDevice=number)
            body = envelope.SerializeToString()
            report["pushed"].append(body.hex())
            frame = WebSocketMessage(type=REQUEST, request=RequestMessage(
                verb="PUT", path="/api/v1/message", body=body, id=number, headers=["X-Signal-Key:false"]))
            await connection.send(frame.SerializeToString())
        empty = WebSocketMessage(type=REQUEST, request=RequestMessage(verb="PUT", path="/api/v1/queue/empty", id=6))
        await connection.send(empty.SerializeToString())
    async for data in connection:
        frame = WebSocketMessage()
        frame.ParseFromString(data)
        if frame.SerializeToString() != data:
            report["mismatches"].append(data.hex())
        if frame.type == RESPONSE:
            report["acks"].append([frame.response.id, frame.response.status, frame.response.message])
        elif frame.type == REQUEST:
            request = frame.request
            report["requests"].append({"verb": request.verb, "path": request.path, "headers": list(request.headers)})
            answer = WebSocketMessage(type=RESPONSE, response=respond(request))
            await connection.send(answer.SerializeToString())


async def main():
    async with serve(handler, "127.0.0.1", 0, compression=None,
                     process_response=lambda connection, request, response: response.headers.update(
                         {"X-Signal-Timestamp": "1700000000123"}) or None) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        try:
            await asyncio.wait_for(reader.read(), timeout=120)
        except asyncio.TimeoutError:
            pass
    print(json.dumps(report, sort_keys=True), flush=True)


asyncio.run(main())

"""A chat server whose every string is an attack on the terminal of whoever prints it:
escape sequences (ESC, BEL), DEL, C1 controls, a bidirectional override and line breaks.
Signal's envelope is built by hand (WebSocketMessage: type 1, request 2, response 3).
  push    push an unknown event with a hostile path, then a real incomingMessage whose
          serverGuid is hostile, then close with a hostile reason
  answer  answer the first request 200 with a LookUpUsernameHashResponse (JSON) whose uuid is hostile
  close   close with a hostile reason when the first request arrives
Prints its port; stops when stdin closes (bounded to 60 s)."""
import asyncio
import json
import sys

from websockets.asyncio.server import serve

from signal_envelope import field, request_id, varint

mode = sys.argv[1]
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x7f\u0085\u202e\r\nFAKE LINE"


def push(path, body, push_id):
    request = field(1, b"PUT") + field(2, path.encode()) + field(3, body) + varint(4 << 3) + varint(push_id)
    return varint(1 << 3) + varint(1) + field(2, request)


def response(ident, status, body):
    inner = varint(1 << 3) + varint(ident) + varint(2 << 3) + varint(status) + field(3, b"OK") + field(4, body)
    return varint(1 << 3) + varint(2) + field(3, inner)


async def main():
    async def handler(connection):
        if mode == "push":
            await connection.send(push("/evil/" + HOSTILE, b"", 1))
            envelope = field(9, HOSTILE.encode())  # Envelope.serverGuid
            await connection.send(push("/api/v1/message", envelope, 2))
            await asyncio.sleep(0.5)
            await connection.close(4000, HOSTILE[:60])
            return
        async for frame in connection:
            if isinstance(frame, str):
                continue
            ident = request_id(frame)
            if ident is None:
                continue
            if mode == "answer":
                # Usernames speaks JSON: the hostile characters arrive escaped or raw, as JSON allows.
                body = json.dumps({"uuid": HOSTILE}, ensure_ascii=False).encode()
                await connection.send(response(ident, 200, body))
            else:
                await connection.close(4000, HOSTILE[:60])
                return

    async with serve(handler, "127.0.0.1", 0, compression=None) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(None, sys.stdin.read), timeout=60)


asyncio.run(main())

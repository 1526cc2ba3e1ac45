"""A hostile chat server: over Python `websockets`, it pushes `count` request envelopes,
each carrying `headers` tiny header lines ("a:b", 5 bytes on the wire), and ignores the
client's answers. The envelopes are built by hand from Signal's WebSocketMessage layout
(type 1, request 2; request: verb 1, path 2, id 4, headers 5); push n goes to
/api/v1/message/n. Prints its port, then
"pushed <n> close <code>" when the client goes (waiting 120 s at most)."""
import asyncio
import sys

from websockets.asyncio.server import serve

from signal_envelope import field, varint

count = int(sys.argv[1]) if len(sys.argv) > 1 else 100
headers = int(sys.argv[2]) if len(sys.argv) > 2 else 80000


def envelope(push_id):
    header_lines = field(5, b"a:b") * headers
    path = b"/api/v1/message/%d" % push_id
    request = field(1, b"PUT") + field(2, path) + varint(4 << 3) + varint(push_id) + header_lines
    return varint(1 << 3) + varint(1) + field(2, request)


async def main():
    done = asyncio.get_running_loop().create_future()

    async def handler(connection):
        pushed = 0
        try:
            for push_id in range(1, count + 1):
                await connection.send(envelope(push_id))
                pushed += 1
            async for _ in connection:
                pass
        except Exception:
            pass
        if not done.done():
            done.set_result((pushed, connection.close_code))

    async with serve(handler, "127.0.0.1", 0, max_size=1 << 22, compression=None) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        pushed, code = await asyncio.wait_for(done, timeout=120)
        print(f"pushed {pushed} close {code}", flush=True)


asyncio.run(main())

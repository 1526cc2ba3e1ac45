"""A Python `websockets` echo server for conformance tests: text back as text,
binary back as binary. Prints its port, serves until stdin closes (bounded to 120 s).
With arguments, they are the subprotocols it supports, and it echoes the chosen one first."""
import asyncio
import sys

from websockets.asyncio.server import serve


async def echo(connection):
    if connection.subprotocol is not None:
        await connection.send("subprotocol " + connection.subprotocol)
    async for message in connection:
        await connection.send(message)


async def main():
    subprotocols = sys.argv[1:] or None
    async with serve(echo, "127.0.0.1", 0, max_size=4 * 1024 * 1024, compression=None, subprotocols=subprotocols) as server:
        port = server.sockets[0].getsockname()[1]
        print(port, flush=True)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        try:
            await asyncio.wait_for(reader.read(), timeout=120)
        except asyncio.TimeoutError:
            pass


asyncio.run(main())

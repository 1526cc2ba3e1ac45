"""A Python `websockets` server that takes nothing for a while: it accepts one connection,
keeps at most one message waiting (so TCP backs up and the client must queue its writes),
waits `delay` seconds, then reads every message until the close handshake. Prints its
port, then one line: "received <count> <bytes> close <code>"."""
import asyncio
import sys

from websockets.asyncio.server import serve

delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5


async def main():
    done = asyncio.get_running_loop().create_future()

    async def handler(connection):
        await asyncio.sleep(delay)
        count = total = 0
        async for message in connection:
            count += 1
            total += len(message)
        if not done.done():
            done.set_result((count, total, connection.close_code))

    async with serve(handler, "127.0.0.1", 0, max_queue=1, max_size=1 << 20, compression=None) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        count, total, code = await asyncio.wait_for(done, timeout=60)
        print(f"received {count} {total} close {code}", flush=True)


asyncio.run(main())

"""Drives a Switchboard echo server with the Python `websockets` client and checks
every answer. usage: ws_client_check.py PORT. Exits 0 when every check passes."""
import asyncio
import sys

from websockets.asyncio.client import connect
from websockets.frames import CloseCode


async def main(port):
    failures = []
    async with connect(f"ws://127.0.0.1:{port}/echo", max_size=4 * 1024 * 1024, compression=None, open_timeout=10) as ws:
        for size in [0, 1, 125, 126, 127, 65535, 65536, 1024 * 1024]:
            text = ("é" * (size // 2)) + ("a" * (size % 2))
            await ws.send(text)
            if await asyncio.wait_for(ws.recv(), 10) != text:
                failures.append(f"text echo of {size} bytes")
            blob = bytes(i % 251 for i in range(size))
            await ws.send(blob)
            if await asyncio.wait_for(ws.recv(), 10) != blob:
                failures.append(f"binary echo of {size} bytes")
        # A fragmented message: websockets sends an iterable as fragments.
        await ws.send(["frag", "men", "ted ✓"])
        if await asyncio.wait_for(ws.recv(), 10) != "fragmented ✓":
            failures.append("fragmented text")
        await ws.send([b"\x00\x01", b"\x02"])
        if await asyncio.wait_for(ws.recv(), 10) != b"\x00\x01\x02":
            failures.append("fragmented binary")
        pong = await ws.ping(b"are you there")
        await asyncio.wait_for(pong, 10)
        await ws.close(CloseCode.NORMAL_CLOSURE, "done")
        if ws.close_code != 1000:
            failures.append(f"close code {ws.close_code}")
    for failure in failures:
        print("FAIL", failure)
    sys.exit(1 if failures else 0)


asyncio.run(main(int(sys.argv[1])))

"""A raw WebSocket server that writes hand-made frames, mirroring the Autobahn|Testsuite
client categories (1.x framing ... 7.x close). The client under test connects to
/case/<name> and echoes every message. The server checks what the client sends back
and prints one verdict line per case: "PASS <name>" or "FAIL <name>: <why>".
It prints its port first and serves until stdin closes (bounded to 300 s)."""
import asyncio
import base64
import hashlib
import os
import struct
import sys

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def frame(opcode, payload=b"", fin=True, rsv=0, length=None):
    head = bytes([(0x80 if fin else 0) | (rsv << 4) | opcode])
    n = len(payload) if length is None else length
    if n < 126:
        head += bytes([n])
    elif n < 65536:
        head += bytes([126]) + struct.pack("!H", n)
    else:
        head += bytes([127]) + struct.pack("!Q", n)
    return head + payload


def masked_frame(opcode, payload):
    """A frame masked as only a client may send it (RFC 6455 5.1: a client fails on it)."""
    key = b"\x37\xfa\x21\x3d"
    head = bytes([0x80 | opcode, 0x80 | len(payload)])
    return head + key + bytes(c ^ key[i % 4] for i, c in enumerate(payload))


def close_frame(code=None, reason=b""):
    return frame(8, b"" if code is None else struct.pack("!H", code) + reason)


TEXT, BINARY, CLOSE, PING, PONG, CONT = 1, 2, 8, 9, 10, 0

# Each case: a list of steps (bytes to send, or ("sleep", seconds), or ("chop", bytes, size))
# and what the client must send back: echoed messages, pongs, then a close with one of `close`.
CASES = {
    # 1.x framing
    "1.1.1-text-empty": dict(send=[frame(TEXT, b"")], echo=[(TEXT, b"")]),
    "1.1.2-text-125": dict(send=[frame(TEXT, b"*" * 125)], echo=[(TEXT, b"*" * 125)]),
    "1.1.3-text-126": dict(send=[frame(TEXT, b"*" * 126)], echo=[(TEXT, b"*" * 126)]),
    "1.1.6-text-65535": dict(send=[frame(TEXT, b"*" * 65535)], echo=[(TEXT, b"*" * 65535)]),
    "1.1.7-text-65536": dict(send=[frame(TEXT, b"*" * 65536)], echo=[(TEXT, b"*" * 65536)]),
    "1.1.8-text-65536-chopped": dict(send=[("chop", frame(TEXT, b"*" * 65536), 997)], echo=[(TEXT, b"*" * 65536)]),
    "1.2.1-binary-empty": dict(send=[frame(BINARY, b"")], echo=[(BINARY, b"")]),
    "1.x-masked-from-server": dict(send=[masked_frame(TEXT, b"Hello")], close=[1002]),
    "1.2.8-binary-65536": dict(send=[frame(BINARY, bytes(range(256)) * 256)], echo=[(BINARY, bytes(range(256)) * 256)]),
    # 2.x pings and pongs
    "2.1-ping-empty": dict(send=[frame(PING, b"")], pongs=[b""]),
    "2.3-ping-binary": dict(send=[frame(PING, b"\x00\xff\xfe\xfd")], pongs=[b"\x00\xff\xfe\xfd"]),
    "2.4-ping-125": dict(send=[frame(PING, b"\xfe" * 125)], pongs=[b"\xfe" * 125]),
    "2.5-ping-126": dict(send=[frame(PING, b"\xfe" * 126)], close=[1002]),
    "2.6-ping-125-octetwise": dict(send=[("chop", frame(PING, b"\xfe" * 125), 1)], pongs=[b"\xfe" * 125]),
    "2.7-unsolicited-pong": dict(send=[frame(PONG, b""), frame(TEXT, b"after pong")], echo=[(TEXT, b"after pong")]),
    "2.10-ten-pings": dict(send=[frame(PING, b"%d" % i) for i in range(10)], pongs=[b"%d" % i for i in range(10)]),
    # 3.x reserved bits
    "3.1-rsv1-text": dict(send=[frame(TEXT, b"hello", rsv=1)], close=[1002]),
    # The error may be found before the application echoes the valid frame: Autobahn's NON-STRICT.
    "3.2-rsv2-after-valid": dict(send=[frame(TEXT, b"hello"), frame(TEXT, b"hello", rsv=2), frame(PING, b"")], echo=[(TEXT, b"hello")], close=[1002], nopong=True),
    # A valid message and a violation in one write: the message is echoed, then the 1002 close.
    "3.3-rsv-after-valid-one-write": dict(send=[frame(TEXT, b"hello") + frame(TEXT, b"x", rsv=3) + frame(PING, b"")], echo=[(TEXT, b"hello")], close=[1002], nopong=True),
    "3.7-rsv7-close": dict(send=[frame(CLOSE, b"", rsv=7)], close=[1002]),
    # 4.x opcodes
    "4.1.1-opcode-3": dict(send=[frame(3, b"")], close=[1002]),
    "4.1.3-opcode-5-after-valid": dict(send=[frame(TEXT, b"hello"), frame(5, b""), frame(PING, b"")], echo=[(TEXT, b"hello")], close=[1002], nopong=True),
    "4.1.4-opcode-6-after-valid-one-write": dict(send=[frame(TEXT, b"hello") + frame(6, b"") + frame(PING, b"")], echo=[(TEXT, b"hello")], close=[1002], nopong=True),
    "4.2.6-opcode-11-after-valid-one-write": dict(send=[frame(BINARY, b"\x00\x01") + frame(11, b"x")], echo=[(BINARY, b"\x00\x01")], close=[1002]),
    "4.2.1-opcode-11": dict(send=[frame(11, b"")], close=[1002]),
    "4.2.5-opcode-15-payload": dict(send=[frame(15, b"reserved")], close=[1002]),
    # 5.x fragmentation
    "5.1-fragmented-ping": dict(send=[frame(PING, b"frag", fin=False), frame(CONT, b"ment")], close=[1002]),
    "5.3-text-two-fragments": dict(send=[frame(TEXT, b"frag", fin=False), frame(CONT, b"ment")], echo=[(TEXT, b"fragment")]),
    "5.6-ping-between-fragments": dict(send=[frame(TEXT, b"frag", fin=False), frame(PING, b"mid"), frame(CONT, b"ment")], pongs=[b"mid"], echo=[(TEXT, b"fragment")]),
    "5.8-fragments-octetwise": dict(send=[("chop", frame(TEXT, b"frag", fin=False) + frame(PING, b"p") + frame(CONT, b"ment"), 1)], pongs=[b"p"], echo=[(TEXT, b"fragment")]),
    "5.9-continuation-first": dict(send=[frame(CONT, b"x"), frame(TEXT, b"y")], close=[1002]),
    "5.9.1-continuation-after-valid-one-write": dict(send=[frame(TEXT, b"hello") + frame(CONT, b"x")], echo=[(TEXT, b"hello")], close=[1002]),
    # The upgrade selects what the client never offered (RFC 6455 4.1): it must refuse.
    "4.3-extension-not-offered": dict(send=[frame(TEXT, b"hello")], headers="Sec-WebSocket-Extensions: permessage-deflate\r\n", refuse=True),
    "4.4-subprotocol-not-offered": dict(send=[frame(TEXT, b"hello")], headers="Sec-WebSocket-Protocol: chat\r\n", refuse=True),
    "5.15-text-inside-fragmented": dict(send=[frame(TEXT, b"a", fin=False), frame(CONT, b"b", fin=False), frame(TEXT, b"c"), frame(CONT, b"d")], close=[1002]),
    "5.19-fragments-with-pauses": dict(send=[frame(TEXT, b"a", fin=False), ("sleep", 0.5), frame(PING, b"1"), frame(CONT, b"b", fin=False), ("sleep", 0.5), frame(CONT, b"c")], pongs=[b"1"], echo=[(TEXT, b"abc")]),
    # 6.x UTF-8
    "6.2.3-utf8-byte-frames": dict(send=[frame(TEXT if i == 0 else CONT, bytes([b]), fin=(i == len("Hello-µ@ßöäüàá-UTF-8!!".encode()) - 1)) for i, b in enumerate("Hello-µ@ßöäüàá-UTF-8!!".encode())], echo=[(TEXT, "Hello-µ@ßöäüàá-UTF-8!!".encode())]),
    "6.3.1-invalid-utf8": dict(send=[frame(TEXT, b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80\x65\x64\x69\x74\x65\x64")], close=[1007]),
    "6.4.1-fail-fast-fragments": dict(send=[frame(TEXT, "κόσμε".encode(), fin=False), ("sleep", 0.3), frame(CONT, b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4\x90\x80\x80", fin=False), ("sleep", 1.0), ("expect-closed",), frame(CONT, b"edited")], close=[1007]),
    "6.4.3-fail-fast-chops": dict(send=[("chop-sleep", frame(TEXT, b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5" + b"\xf4\x90\x80\x80" + b"\x65\x64\x69\x74\x65\x64"), [11, 4], 1.0)], close=[1007]),
    "6.6.1-lone-continuation-byte": dict(send=[frame(TEXT, b"\x80")], close=[1007]),
    "6.8.1-overlong-slash": dict(send=[frame(TEXT, b"\xc0\xaf")], close=[1007]),
    "6.11.1-surrogate": dict(send=[frame(TEXT, b"\xed\xa0\x80")], close=[1007]),
    "6.23.1-noncharacter-is-valid": dict(send=[frame(TEXT, b"\xef\xbf\xbf")], echo=[(TEXT, b"\xef\xbf\xbf")]),
    # 7.x close
    "7.1.1-echo-then-close": dict(send=[frame(TEXT, b"Hello"), close_frame(1000)], echo=[(TEXT, b"Hello")], close=[1000]),
    # Messages and the close in one write: every echo goes out before the close reply.
    "7.1.7-messages-and-close-one-write": dict(send=[frame(TEXT, b"one") + frame(BINARY, b"two") + close_frame(1000)], echo=[(TEXT, b"one"), (BINARY, b"two")], close=[1000]),
    "7.1.3-ping-after-close": dict(send=[close_frame(1000), frame(PING, b"late")], close=[1000], nopong=True),
    "7.1.5-text-after-close": dict(send=[frame(TEXT, b"frag", fin=False), close_frame(1000), frame(CONT, b"ment")], close=[1000, 1002]),
    "7.3.1-close-empty": dict(send=[close_frame()], close=[1000], local=[1005]),
    "7.3.2-close-one-byte": dict(send=[frame(CLOSE, b"\x03")], close=[1002]),
    "7.3.4-close-with-reason": dict(send=[close_frame(1000, b"reason")], close=[1000]),
    "7.3.6-close-reason-124": dict(send=[close_frame(1000, b"*" * 124)], close=[1002]),
    "7.5.1-close-invalid-utf8-reason": dict(send=[close_frame(1000, b"\xce\xba\xed\xa0\x80")], close=[1002, 1007]),
    "7.7.1-close-1000": dict(send=[close_frame(1000)], close=[1000]),
    # RFC 6455 7.1.1: after the close handshake the server closes TCP first (so that it
    # holds TIME_WAIT): the client must wait for it, not close its end right away.
    "7.1.x-server-closes-tcp-first": dict(send=[close_frame(1000)], close=[1000], server_closes_first=True),
    "7.7.6-close-1011": dict(send=[close_frame(1011)], close=[1011, 1000]),
    "7.7.10-close-3000": dict(send=[close_frame(3000)], close=[3000, 1000]),
    "7.7.13-close-4999": dict(send=[close_frame(4999)], close=[4999, 1000]),
    "7.7.x-close-4401-signal": dict(send=[close_frame(4401)], close=[4401, 1000]),
    "7.9.1-close-0": dict(send=[close_frame(0)], close=[1002]),
    "7.9.3-close-1004": dict(send=[close_frame(1004)], close=[1002]),
    "7.9.4-close-1005": dict(send=[close_frame(1005)], close=[1002]),
    "7.9.5-close-1006": dict(send=[close_frame(1006)], close=[1002]),
    "7.9.9-close-2999": dict(send=[close_frame(2999)], close=[1002]),
    "7.13.1-close-5000": dict(send=[close_frame(5000)], close=[1002]),
}


def unmask(data):
    """Parses the client's masked frames; returns (frames, rest)."""
    frames = []
    while len(data) >= 2:
        b0, b1 = data[0], data[1]
        n = b1 & 0x7F
        pos = 2
        if n == 126:
            if len(data) < 4:
                break
            n = struct.unpack("!H", data[2:4])[0]
            pos = 4
        elif n == 127:
            if len(data) < 10:
                break
            n = struct.unpack("!Q", data[2:10])[0]
            pos = 10
        if not b1 & 0x80:
            return frames, None  # the client must mask
        if len(data) < pos + 4 + n:
            break
        key = data[pos:pos + 4]
        payload = bytes(c ^ key[i % 4] for i, c in enumerate(data[pos + 4:pos + 4 + n]))
        frames.append((b0 & 0x0F, b0 & 0x80 != 0, payload))
        data = data[pos + 4 + n:]
    return frames, data


async def handle(reader, writer):
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    except Exception:
        writer.close()
        return
    lines = head.decode().split("\r\n")
    path = lines[0].split(" ")[1]
    key = next(l.split(":", 1)[1].strip() for l in lines if l.lower().startswith("sec-websocket-key:"))
    accept = base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()
    name = path.rsplit("/", 1)[-1]
    case = CASES.get(name)
    extra = case.get("headers", "") if case else ""
    writer.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  "Sec-WebSocket-Accept: %s\r\n%s\r\n" % (accept, extra)).encode())
    if case is None:
        writer.close()
        return
    if case.get("refuse"):
        # The client must drop the connection without a frame.
        try:
            data = await asyncio.wait_for(reader.read(65536), 5)
        except asyncio.TimeoutError:
            data = b"timeout"
        print(("PASS %s" % name) if data == b"" else "FAIL %s: the client accepted the upgrade (%r)" % (name, data[:20]), flush=True)
        writer.close()
        return
    received = bytearray()
    closed_early = False

    async def pump(timeout):
        nonlocal received
        try:
            chunk = await asyncio.wait_for(reader.read(65536), timeout)
        except asyncio.TimeoutError:
            return True
        if not chunk:
            return False
        received += chunk
        return True

    async def close_arrives(within):
        # Whether the client's CLOSE frame arrives within `within` seconds: waited for, not
        # assumed after a fixed pause, so a loaded machine only makes the case slower.
        deadline = asyncio.get_running_loop().time() + within
        while True:
            frames, _ = unmask(bytes(received))
            if any(op == CLOSE for op, _, _ in frames):
                return True
            if asyncio.get_running_loop().time() >= deadline or not await pump(0.05):
                frames, _ = unmask(bytes(received))
                return any(op == CLOSE for op, _, _ in frames)

    for step in case["send"]:
        if isinstance(step, tuple) and step[0] == "sleep":
            await asyncio.sleep(step[1])
            while await pump(0.01) and len(received) and False:
                pass
            continue
        if isinstance(step, tuple) and step[0] == "expect-closed":
            closed_early = await close_arrives(5)
            continue
        if isinstance(step, tuple) and step[0] == "chop":
            data, size = step[1], step[2]
            for i in range(0, len(data), size):
                writer.write(data[i:i + size])
                await writer.drain()
            continue
        if isinstance(step, tuple) and step[0] == "chop-sleep":
            data, sizes, pause = step[1], step[2], step[3]
            offset = 0
            for size in sizes:
                writer.write(data[offset:offset + size])
                await writer.drain()
                offset += size
                await asyncio.sleep(pause)
            closed_early = await close_arrives(5)
            writer.write(data[offset:])
            continue
        try:
            writer.write(step)
            await writer.drain()
        except ConnectionError:
            break
    # Collect the client's answers for a while: long enough for a client on a loaded
    # machine (a case that passes stops waiting at once).
    deadline = asyncio.get_running_loop().time() + 20
    while asyncio.get_running_loop().time() < deadline:
        frames, _ = unmask(bytes(received))
        if frames and frames[-1][0] == CLOSE:
            break
        # Everything expected has arrived and the case ends with a normal close: stop waiting.
        if frames and "close" not in case and check(name, case, frames, b"", True).startswith("PASS"):
            break
        if not await pump(0.2):
            break
    frames, rest = unmask(bytes(received))
    verdict = check(name, case, frames, rest, closed_early)
    if case.get("server_closes_first") and verdict.startswith("PASS"):
        # A while without the client's end of stream: it is waiting for ours. (Short: the
        # client gives up waiting after 2 s, which a loaded machine must not reach first.)
        until = asyncio.get_running_loop().time() + 0.3
        while asyncio.get_running_loop().time() < until:
            if not await pump(0.1):
                verdict = "FAIL %s: the client closed TCP before the server did" % name
                break
    print(verdict, flush=True)
    try:
        if not any(op == CLOSE for op, _, _ in frames):
            writer.write(close_frame(1000))
            await writer.drain()
            # Wait briefly for the client's answer so the close is clean.
            for _ in range(30):
                if not await pump(0.1):
                    break
                answered, _ = unmask(bytes(received))
                if any(op == CLOSE for op, _, _ in answered):
                    break
    except Exception:
        pass
    writer.close()


def check(name, case, frames, rest, closed_early):
    if rest is None:
        return "FAIL %s: unmasked frame from the client" % name
    messages, pongs, close = [], [], None
    current, buffer = None, b""
    for opcode, fin, payload in frames:
        if close is not None:
            return "FAIL %s: frame after close" % name
        if opcode == PONG:
            pongs.append(payload)
        elif opcode == CLOSE:
            close = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
        elif opcode in (TEXT, BINARY, CONT):
            if opcode != CONT:
                current, buffer = opcode, b""
            buffer += payload
            if fin:
                messages.append((current, buffer))
    if messages != case.get("echo", []):
        return "FAIL %s: echoed %r" % (name, [(o, p[:20]) for o, p in messages])
    expected_pongs = case.get("pongs", [])
    if case.get("nopong") and pongs:
        return "FAIL %s: answered a ping after the connection failed" % name
    if not case.get("nopong") and pongs != expected_pongs:
        return "FAIL %s: pongs %r" % (name, pongs)
    allowed = case.get("close", [1000, None])
    if close not in allowed and not (close is None and None in allowed):
        return "FAIL %s: close %r, wanted %r" % (name, close, allowed)
    if name.startswith("6.4") and not closed_early:
        return "FAIL %s: did not fail fast" % name
    return "PASS %s" % name


PENDING = set()


async def tracked(reader, writer):
    task = asyncio.current_task()
    PENDING.add(task)
    try:
        await handle(reader, writer)
    finally:
        PENDING.discard(task)


async def main():
    server = await asyncio.start_server(tracked, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        await asyncio.wait_for(reader.read(), timeout=300)
    except asyncio.TimeoutError:
        pass
    # Let cases still being judged print their verdicts.
    if PENDING:
        await asyncio.wait(list(PENDING), timeout=10)
    server.close()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--list":
        # Each case with the close codes the client may report locally: the one it failed
        # with, or the server's (1005 when the server's close carries none).
        for name, case in CASES.items():
            if case.get("refuse"):
                print(name, "refused")
                continue
            local = case.get("local", case.get("close", [1000]))
            print(name, ",".join(str(code) for code in local))
    else:
        asyncio.run(main())

#!/usr/bin/env python3
"""ws_hostile_client.py - an Autobahn|Testsuite "fuzzingclient"-style conformance
check for a WebSocket ECHO server (RFC 6455), written from scratch after Autobahn's case
list. ConformanceTests runs it against our WebSocketServer; every case must pass.

Usage:
    python3 ws_hostile_client.py ws://127.0.0.1:PORT/path [--only PREFIX[,PREFIX...]]
                                 [--non-strict] [-v]

Every case opens its own TCP connection, performs the HTTP/1.1 upgrade by hand
(checks "101", Upgrade, Connection and Sec-WebSocket-Accept), sends hand-built
frames (masked, as a client must, unless a case deliberately sends an unmasked
frame), then judges everything the server sends back.

The server under test must echo every text/binary message (same opcode, same
payload; it may fragment its echo), answer every ping with a pong carrying the
identical payload, ignore unsolicited pongs, and:

  * mode "normal": after the expected echoes/pongs arrived the client starts the
    closing handshake with 1000; the server must answer with a close (code 1000)
    and then close TCP itself.  The server must not close first.
  * mode "fail": the case contains a protocol violation; the server must send a
    close frame with the required code (1002 protocol error, 1007 invalid
    UTF-8, ...) and then close TCP itself.  The client answers the server's
    close like a well-behaved client (unless it is stuck in the middle of a
    frame).  A bare TCP drop without close frame is a FAIL here (Autobahn would
    accept "or drop TCP"; we are strict).
  * mode "reply": the case itself sends a close frame (7.x); the server must
    answer it with a close frame carrying one of the accepted codes, then close
    TCP.

In all modes the server must send nothing after its close frame, must not mask
its frames, must not set RSV bits, and must close the TCP connection first
(if the client has to drop the connection after the timeout the case FAILs,
like Autobahn's "FAILED BY CLIENT").

Strictness: by default the verdict is Autobahn's strict "OK": e.g. a valid
message sent right before a violation must be echoed before the server fails
the connection.  Outcomes Autobahn rates NON-STRICT or INFORMATIONAL are listed
per case ("nonstrict=" alternatives) and only accepted with --non-strict; the
FAIL line says "(Autobahn: NON-STRICT)" when such an outcome was observed.
UTF-8 fail-fast (6.4.x): the server must fail no later than the end of the
offending FRAME.  6.4.1/6.4.2 (offending frame = 2nd frame) therefore require
the failure before the 3rd frame is sent; 6.4.3/6.4.4 (one frame sent in 3
chops) accept failing at the 2nd chop (Autobahn OK) or at the end of the frame
(Autobahn NON-STRICT, accepted by the end-of-frame rule).

Cases: 1.x framing sizes, 2.x ping/pong, 3.x RSV bits, 4.x reserved opcodes,
5.x fragmentation, 6.x UTF-8, 7.x closing handshake and codes, 9.x (limited
to <= 1 MiB messages), plus x.* extras not in Autobahn (unmasked client frames,
close code 1015, 64-bit length with MSB set).  10.x and 12.x/13.x are skipped.

Output: one "PASS <id> <description>" / "FAIL <id> <description>: <why>" line
per case, then a TOTAL line.  Exit status 0 only if every selected case passed
(1 otherwise, 2 on usage errors).
"""

import argparse
import base64
import hashlib
import os
import random
import select
import socket
import struct
import sys
import time
from urllib.parse import urlsplit

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

OP_CONT, OP_TEXT, OP_BINARY = 0x0, 0x1, 0x2
OP_CLOSE, OP_PING, OP_PONG = 0x8, 0x9, 0xA
OPNAMES = {0: "cont", 1: "text", 2: "binary", 8: "close", 9: "ping", 10: "pong"}

T_CONNECT = 3.0     # TCP connect + opening handshake
T_ECHO = 3.0        # waiting for the expected echoes/pongs
T_CLOSE = 2.0       # waiting for close frame and TCP close from the server
T_WRITE = 5.0       # a single write must make progress within this time
FAILFAST_WAIT = 1.0  # like Autobahn's 1 s waits between the 6.4.x parts

HELLO = b"Hello, world!"


# --------------------------------------------------------------------------
# frame construction (by hand, with struct)
# --------------------------------------------------------------------------

def xor_mask(payload, key):
    n = len(payload)
    if n == 0:
        return b""
    stream = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(stream, "little")).to_bytes(n, "little")


def F(opcode, payload=b"", fin=True, rsv=0, masked=True, length=None):
    """Build one frame.  `length` overrides the announced payload length."""
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    b0 = (0x80 if fin else 0) | ((rsv & 7) << 4) | (opcode & 0xF)
    n = len(payload) if length is None else length
    mbit = 0x80 if masked else 0
    if n < 126:
        hdr = struct.pack("!BB", b0, mbit | n)
    elif n < 65536:
        hdr = struct.pack("!BBH", b0, mbit | 126, n)
    else:
        hdr = struct.pack("!BBQ", b0, mbit | 127, n)
    if masked:
        key = os.urandom(4)
        return hdr + key + xor_mask(payload, key)
    return hdr + payload


def close_payload(code=None, reason=b""):
    if code is None:
        return b""
    if isinstance(reason, str):
        reason = reason.encode("utf-8")
    return struct.pack("!H", code) + reason


def CLOSE(code=None, reason=b"", **kw):
    return F(OP_CLOSE, close_payload(code, reason), **kw)


def short(b, n=32):
    if len(b) <= n:
        s = repr(bytes(b))
    else:
        s = repr(bytes(b[:n]))[:-1] + "...'"
    return s


def fmt_ev(e):
    kind = e[0]
    if kind in ("text", "binary", "pong", "ping"):
        return "%s[%d]%s" % (kind, len(e[1]), short(e[1]) if len(e[1]) <= 40 else "")
    if kind == "close":
        return "close(%s%s)" % (e[1], (", " + short(e[2])) if e[2] else "")
    return repr(e)


def fmt_list(evs):
    if len(evs) > 6:
        return "[%s, ... %d events in total]" % (", ".join(fmt_ev(e) for e in evs[:3]), len(evs))
    return "[" + ", ".join(fmt_ev(e) for e in evs) + "]"


def describe_diff(got, exp):
    if len(got) > 6 or len(exp) > 6:
        for i, (g, x) in enumerate(zip(got, exp)):
            if g != x:
                return "event #%d is %s, expected %s (%d events received, %d expected)" % (
                    i + 1, fmt_ev(g), fmt_ev(x), len(got), len(exp))
        return "%d events received, %d expected" % (len(got), len(exp))
    return "received %s, expected %s" % (fmt_list(got), fmt_list(exp))


# --------------------------------------------------------------------------
# one client connection
# --------------------------------------------------------------------------

class HandshakeError(Exception):
    pass


class Conn:
    def __init__(self, host, port, path, verbose=False):
        self.host, self.port, self.path = host, port, path
        self.verbose = verbose
        self.t0 = time.monotonic()
        self.log = []
        self.buf = bytearray()
        self.events = []          # ('text'|'binary'|'pong', payload) and ('close', code, reason)
        self.frag = None          # (opcode, [parts]) of a fragmented message from the server
        self.server_close = None  # (code, reason) of the server's close frame
        self.server_closed_first = False
        self.after_close = []     # frames received after the server's close frame
        self.errors = []          # framing violations committed by the server
        self.eof = None           # None | 'eof' | 'reset'
        self.sent_close = False
        self.mid_frame = False    # our outgoing stream stops inside a frame
        self.need_close_reply = False
        self.client_dropped = False
        self.write_stalled = False
        self.skipped_sends = 0
        self.flags = {}
        self.sock = None

    # ---- logging
    def _log(self, what):
        self.log.append("%7.3f %s" % (time.monotonic() - self.t0, what))

    # ---- handshake
    def handshake(self):
        self.sock = socket.create_connection((self.host, self.port), timeout=T_CONNECT)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16))
        hostport = self.host if self.port == 80 else "%s:%d" % (self.host, self.port)
        req = ("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
               "User-Agent: ws_hostile_client\r\n\r\n") % (self.path, hostport, key.decode())
        self.sock.sendall(req.encode("ascii"))
        deadline = time.monotonic() + T_CONNECT
        data = b""
        while b"\r\n\r\n" not in data:
            if time.monotonic() > deadline:
                raise HandshakeError("no complete HTTP response within %.0fs" % T_CONNECT)
            chunk = self.sock.recv(4096)
            if not chunk:
                raise HandshakeError("connection closed during opening handshake (got %r)" % data[:200])
            data += chunk
            if len(data) > 65536:
                raise HandshakeError("HTTP response header too large")
        head, rest = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = lines[0].split(" ", 2)
        if len(status) < 2 or status[0] != "HTTP/1.1" or status[1] != "101":
            raise HandshakeError("expected 'HTTP/1.1 101', got %r" % lines[0])
        headers = {}
        for ln in lines[1:]:
            if ":" not in ln:
                raise HandshakeError("malformed header line %r" % ln)
            k, v = ln.split(":", 1)
            headers.setdefault(k.strip().lower(), []).append(v.strip())
        up = ",".join(headers.get("upgrade", []))
        if up.lower() != "websocket":
            raise HandshakeError("Upgrade header is %r" % up)
        conn_tokens = [t.strip().lower() for t in ",".join(headers.get("connection", [])).split(",")]
        if "upgrade" not in conn_tokens:
            raise HandshakeError("Connection header lacks 'upgrade': %r" % headers.get("connection"))
        want = base64.b64encode(hashlib.sha1(key + GUID).digest()).decode()
        got = headers.get("sec-websocket-accept", [])
        if got != [want]:
            raise HandshakeError("Sec-WebSocket-Accept %r, expected %r" % (got, want))
        if headers.get("sec-websocket-extensions"):
            raise HandshakeError("server accepted extensions although none were offered: %r"
                                 % headers["sec-websocket-extensions"])
        self.sock.setblocking(False)
        self._log("handshake ok")
        if rest:
            self.buf.extend(rest)
            self._parse()

    # ---- reading
    def closed_by_peer(self):
        return self.server_close is not None or self.eof is not None

    def _read(self):
        try:
            chunk = self.sock.recv(1 << 18)
        except (BlockingIOError, InterruptedError):
            return
        except (ConnectionResetError, ConnectionAbortedError):
            if not self.eof:
                self.eof = "reset"
                self._log("recv: TCP reset by server")
            return
        except OSError as e:
            if not self.eof:
                self.eof = "reset"
                self._log("recv: error %s" % e)
            return
        if not chunk:
            if not self.eof:
                self.eof = "eof"
                self._log("recv: TCP FIN from server")
            return
        self.buf.extend(chunk)
        self._parse()

    def _parse(self):
        buf = self.buf
        while True:
            if len(buf) < 2:
                return
            b0, b1 = buf[0], buf[1]
            n = b1 & 0x7F
            pos = 2
            if n == 126:
                if len(buf) < 4:
                    return
                n = struct.unpack_from("!H", buf, 2)[0]
                pos = 4
            elif n == 127:
                if len(buf) < 10:
                    return
                n = struct.unpack_from("!Q", buf, 2)[0]
                pos = 10
                if n >> 63:
                    self.errors.append("server frame with 64-bit length MSB set")
                    del buf[:]
                    return
            masked = bool(b1 & 0x80)
            if masked:
                pos += 4
            if len(buf) < pos + n:
                return
            payload = bytes(buf[pos:pos + n])
            if masked:
                payload = xor_mask(payload, bytes(buf[pos - 4:pos]))
                self.errors.append("server sent a MASKED frame")
            del buf[:pos + n]
            self._frame(bool(b0 & 0x80), (b0 >> 4) & 7, b0 & 0xF, payload)

    def _frame(self, fin, rsv, op, payload):
        self._log("recv: %s%s%s len=%d %s" % (OPNAMES.get(op, "op%d" % op), "" if fin else " (fin=0)",
                                              " rsv=%d" % rsv if rsv else "", len(payload), short(payload)))
        if self.server_close is not None:
            self.after_close.append((op, payload))
            return
        if rsv:
            self.errors.append("server frame with RSV=%d" % rsv)
        if op >= 8:
            if not fin or len(payload) > 125:
                self.errors.append("server sent an invalid control frame (fin=%d, len=%d)" % (fin, len(payload)))
            if op == OP_PING:
                # not expected from an echo server, answer it and ignore it for the verdict
                if not self.sent_close and not self.mid_frame:
                    self._raw_send_small(F(OP_PONG, payload))
            elif op == OP_PONG:
                self.events.append(("pong", payload))
            elif op == OP_CLOSE:
                if len(payload) == 1:
                    self.errors.append("server close frame with 1-byte payload")
                    code, reason = None, payload
                elif payload:
                    code, reason = struct.unpack("!H", payload[:2])[0], payload[2:]
                else:
                    code, reason = None, b""
                try:
                    reason.decode("utf-8")
                except UnicodeDecodeError:
                    self.errors.append("server close reason is not valid UTF-8")
                self.server_close = (code, reason)
                self.events.append(("close", code, reason))
                if not self.sent_close:
                    self.server_closed_first = True
                    self.need_close_reply = True
            else:
                self.errors.append("server sent reserved opcode %d" % op)
            return
        if op == OP_CONT:
            if self.frag is None:
                self.errors.append("server sent a continuation frame without a started message")
                return
            self.frag[1].append(payload)
            if fin:
                self.events.append((OPNAMES[self.frag[0]], b"".join(self.frag[1])))
                self.frag = None
        elif op in (OP_TEXT, OP_BINARY):
            if self.frag is not None:
                self.errors.append("server started a new message inside a fragmented one")
            if fin:
                self.events.append((OPNAMES[op], payload))
                self.frag = None
            else:
                self.frag = (op, [payload])
        else:
            self.errors.append("server sent reserved opcode %d" % op)

    def pump(self, timeout, until=None):
        """Read for up to `timeout` seconds, or until `until()` holds.  Returns until() (or False)."""
        deadline = time.monotonic() + timeout
        while True:
            self._maybe_reply_close()
            if until is not None and until():
                return True
            if self.eof:
                return bool(until and until())
            rem = deadline - time.monotonic()
            if rem <= 0:
                return bool(until and until())
            r, _, _ = select.select([self.sock], [], [], rem)
            if r:
                self._read()

    # ---- writing
    def _raw_send_small(self, data):
        """Best-effort small write (close reply / pong) outside the data stream."""
        try:
            sent = 0
            deadline = time.monotonic() + 1.0
            while sent < len(data) and time.monotonic() < deadline:
                try:
                    sent += self.sock.send(data[sent:])
                except (BlockingIOError, InterruptedError):
                    select.select([], [self.sock], [], 0.05)
            return sent == len(data)
        except OSError:
            return False

    def _maybe_reply_close(self):
        if self.need_close_reply and not self.sent_close and not self.mid_frame:
            self.need_close_reply = False
            code = self.server_close[0] if self.server_close else None
            if code is not None and (code < 1000 or code > 4999 or code in (1004, 1005, 1006, 1015)):
                code = 1000
            self.sent_close = True
            self._log("send: close reply (%s)" % code)
            self._raw_send_small(CLOSE(code))

    def _write_stream(self, data, bounds, chop=None, delay=0.0):
        """Write `data` (whose frame boundaries are `bounds`), optionally in chops of `chop`
        bytes with `delay` seconds between chops.  Reads concurrently.  Stops writing as soon
        as the server has closed (close frame or TCP close)."""
        if self.closed_by_peer():
            self.skipped_sends += 1
            self._log("send: skipped %d bytes (server already closed)" % len(data))
            return False
        view = memoryview(data)
        total = len(data)
        pos = 0
        step = chop or total or 1
        ok = True
        while pos < total:
            end = min(pos + step, total)
            deadline = time.monotonic() + T_WRITE
            while pos < end:
                if self.closed_by_peer():
                    ok = False
                    break
                rem = deadline - time.monotonic()
                if rem <= 0:
                    self.write_stalled = True
                    ok = False
                    break
                r, w, _ = select.select([self.sock], [self.sock], [], rem)
                if r:
                    self._read()
                    continue
                if w:
                    try:
                        pos += self.sock.send(view[pos:end])
                    except (BlockingIOError, InterruptedError):
                        pass
                    except OSError as e:
                        if not self.eof:
                            self.eof = "reset"
                            self._log("send: error %s" % e)
                        ok = False
                        break
            if not ok:
                break
            if delay and pos < total:
                self.pump(delay)
                if self.closed_by_peer():
                    ok = False
                    break
        if pos > 0:
            self.mid_frame = pos not in bounds
        self._log("send: %d/%d bytes%s%s" % (pos, total, " in chops of %d" % chop if chop else "",
                                             "" if ok else " (aborted)"))
        self._maybe_reply_close()
        return ok

    def send(self, frames, mode="whole"):
        """Send a list of frames.  mode: 'whole' (one write), 'frame' (one write per frame, 20 ms
        apart), 'octet' (1-byte writes, 1 ms apart), or an int N (chops of N bytes, no pause)."""
        if isinstance(frames, (bytes, bytearray)):
            frames = [frames]
        for fr in frames:
            if fr[0] & 0x0F == OP_CLOSE:
                self.sent_close = True   # any close frame (even a bogus one) counts
        if mode == "frame":
            for i, fr in enumerate(frames):
                if not self._write_stream(fr, {0, len(fr)}):
                    return False
                if i + 1 < len(frames):
                    self.pump(0.02)
            return True
        data = b"".join(frames)
        bounds = {0}
        acc = 0
        for fr in frames:
            acc += len(fr)
            bounds.add(acc)
        if mode == "whole":
            return self._write_stream(data, bounds)
        if mode == "octet":
            return self._write_stream(data, bounds, chop=1, delay=0.001)
        return self._write_stream(data, bounds, chop=int(mode))

    def send_close(self, code=1000, reason=b""):
        self.sent_close = True
        self._log("send: close(%s)" % code)
        self._raw_send_small(CLOSE(code, reason))

    def messages(self):
        return [e for e in self.events if e[0] != "close"]

    def shutdown(self):
        if self.sock is None:
            return
        try:
            self.sock.close()
        except OSError:
            pass


# --------------------------------------------------------------------------
# cases
# --------------------------------------------------------------------------

class Case:
    def __init__(self, cid, desc, act, expect=(), mode="normal", codes=(1000,), nonstrict=None,
                 nonstrict_codes=None, timeout=T_ECHO, check=None, accept_note=None):
        self.cid, self.desc, self.act = cid, desc, act
        self.expect = list(expect)
        self.mode = mode
        self.codes = tuple(codes)
        self.nonstrict = nonstrict or []          # alternative message lists (Autobahn NON-STRICT/INFORMATIONAL)
        self.nonstrict_codes = tuple(nonstrict_codes or ())
        self.timeout = timeout
        self.check = check                        # extra judge: f(conn, args) -> (problems, notes)
        self.accept_note = accept_note


def sender(frames, mode="whole"):
    def act(c):
        c.send(frames, mode)
    return act


def T(payload, **kw):
    return F(OP_TEXT, payload, **kw)


def B(payload, **kw):
    return F(OP_BINARY, payload, **kw)


def text(p):
    return ("text", p.encode() if isinstance(p, str) else p)


def binary(p):
    return ("binary", p)


def pong(p):
    return ("pong", p.encode() if isinstance(p, str) else p)


def echo_case(cid, desc, frames, expect, mode="whole", **kw):
    return Case(cid, desc, sender(frames, mode), expect=expect, **kw)


def fail_case(cid, desc, frames, code=1002, expect=(), mode="whole", nonstrict=None, **kw):
    if expect and nonstrict is None:
        nonstrict = [[]]   # Autobahn: NON-STRICT if the echo of the preceding valid message is missing
    return Case(cid, desc, sender(frames, mode), expect=expect, mode="fail", codes=(code,),
                nonstrict=nonstrict, **kw)


def reply_case(cid, desc, frames, codes, expect=(), mode="whole", **kw):
    return Case(cid, desc, sender(frames, mode), expect=expect, mode="reply", codes=codes, **kw)


def pattern(n, seed, textual):
    rnd = random.Random(seed)
    if textual:
        alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,-*&%$#@!"
        base = bytes(rnd.choice(alphabet) for _ in range(4093))   # odd length: no alignment with frame sizes
    else:
        base = bytes(rnd.getrandbits(8) for _ in range(4093))
    return (base * (n // len(base) + 1))[:n]


def fragmented(opcode, payload, size):
    frames = []
    chunks = [payload[i:i + size] for i in range(0, len(payload), size)] or [b""]
    for i, ch in enumerate(chunks):
        frames.append(F(opcode if i == 0 else OP_CONT, ch, fin=(i == len(chunks) - 1)))
    return frames


def h(s):
    return bytes.fromhex(s.replace(" ", ""))


KOSME = h("ce ba e1 bd b9 cf 83 ce bc ce b5")          # "κόσμε"
UTF8_HELLO = "Hello-\u00b5@\u00df\u00f6\u00e4\u00fc\u00e0\u00e1-UTF-8!!".encode("utf-8")
INVALID_PAYLOAD = KOSME + h("ed a0 80") + b"edited"    # a lone surrogate inside


def utf8_vectors():
    """Groups (6.5 ... 6.23) of (valid?, bytes), after Markus Kuhn's UTF-8 decoder stress test."""
    groups = []
    groups.append(("valid UTF-8 samples", [
        (True, b"hello$world"), (True, "hello\u00a2world".encode()), (True, "hello\u20acworld".encode()),
        (True, "hello\U00024b62world".encode()), (True, KOSME)]))
    bounds = {2, 5, 7, 9, 11}
    groups.append(("prefixes of a multi-byte string", [(i in bounds, KOSME[:i]) for i in range(1, 12)]))
    groups.append(("first sequence of each length", [
        (True, h("00")), (True, h("c2 80")), (True, h("e0 a0 80")), (True, h("f0 90 80 80"))]))
    groups.append(("first 5/6-byte sequences (invalid)", [
        (False, h("f8 88 80 80 80")), (False, h("fc 84 80 80 80 80"))]))
    groups.append(("last sequence of each length", [
        (True, h("7f")), (True, h("df bf")), (True, h("ef bf bf")), (True, h("f4 8f bf bf"))]))
    groups.append(("last 4/5/6-byte sequences above U+10FFFF (invalid)", [
        (False, h("f7 bf bf bf")), (False, h("fb bf bf bf bf")), (False, h("fd bf bf bf bf bf"))]))
    groups.append(("other boundaries", [
        (True, h("ed 9f bf")), (True, h("ee 80 80")), (True, h("ef bf bd")), (True, h("f4 8f bf bf")),
        (False, h("f4 90 80 80"))]))
    groups.append(("unexpected continuation bytes", [
        (False, h("80")), (False, h("bf")), (False, h("80 bf")), (False, h("80 bf 80")),
        (False, h("80 bf 80 bf")), (False, h("80 bf 80 bf 80")), (False, h("80 bf 80 bf 80 bf")),
        (False, bytes(range(0x80, 0xc0)))]))
    lonely = []
    for lo, hi in ((0xc0, 0xdf), (0xe0, 0xef), (0xf0, 0xf7), (0xf8, 0xfb), (0xfc, 0xfd)):
        lonely.append((False, b"".join(bytes([c, 0x20]) for c in range(lo, hi + 1))))
    groups.append(("lonely start bytes", lonely))
    missing = [h("c0"), h("e0 80"), h("f0 80 80"), h("f8 80 80 80"), h("fc 80 80 80 80"),
               h("df"), h("ef bf"), h("f7 bf bf"), h("fb bf bf bf"), h("fd bf bf bf bf")]
    groups.append(("last continuation byte missing", [(False, m) for m in missing]))
    groups.append(("concatenated incomplete sequences", [(False, b"".join(missing))]))
    groups.append(("impossible bytes", [(False, h("fe")), (False, h("ff")), (False, h("fe fe ff ff"))]))
    groups.append(("overlong '/'", [(False, h(x)) for x in (
        "c0 af", "e0 80 af", "f0 80 80 af", "f8 80 80 80 af", "fc 80 80 80 80 af")]))
    groups.append(("maximum overlong sequences", [(False, h(x)) for x in (
        "c1 bf", "e0 9f bf", "f0 8f bf bf", "f8 87 bf bf bf", "fc 83 bf bf bf bf")]))
    groups.append(("overlong NUL", [(False, h(x)) for x in (
        "c0 80", "e0 80 80", "f0 80 80 80", "f8 80 80 80 80", "fc 80 80 80 80 80")]))

    def sur(cp):
        return bytes([0xED, 0x80 | ((cp >> 6) & 0x3F), 0x80 | (cp & 0x3F)])
    singles = [0xD800, 0xDB7F, 0xDB80, 0xDBFF, 0xDC00, 0xDF80, 0xDFFF]
    groups.append(("single UTF-16 surrogates", [(False, sur(s)) for s in singles]))
    pairs = [(hi, lo) for hi in (0xD800, 0xDB7F, 0xDB80, 0xDBFF) for lo in (0xDC00, 0xDFFF)]
    groups.append(("paired UTF-16 surrogates", [(False, sur(a) + sur(b)) for a, b in pairs]))
    nonchars = [0xFFFE, 0xFFFF] + [p * 0x10000 + x for p in range(1, 17) for x in (0xFFFE, 0xFFFF)]
    groups.append(("non-characters (valid UTF-8)", [(True, chr(c).encode()) for c in nonchars]))
    groups.append(("specials U+FFF9..U+FFFF (valid)", [(True, chr(c).encode()) for c in range(0xFFF9, 0x10000)]))
    # self-check against Python's strict decoder
    for name, vs in groups:
        for valid, b in vs:
            try:
                b.decode("utf-8")
                ok = True
            except UnicodeDecodeError:
                ok = False
            assert ok == valid, (name, b)
    return groups


def failfast_case(cid, desc, parts, one_frame, strict_fast):
    """6.4.x: part1 (valid) .. wait .. part2 (makes it invalid) .. wait .. part3."""
    def act(c):
        if one_frame:
            whole = F(OP_TEXT, b"".join(parts))
            hlen = len(whole) - sum(len(p) for p in parts)
            a = hlen + len(parts[0])
            b = a + len(parts[1])
            chunks = [(whole[:a], False), (whole[a:b], False), (whole[b:], True)]
        else:
            chunks = [(F(OP_TEXT, parts[0], fin=False), True), (F(OP_CONT, parts[1], fin=False), True),
                      (F(OP_CONT, parts[2], fin=True), True)]
        data, ends = chunks[0]
        c._write_stream(data, {0, len(data)} if ends else {0})
        if c.pump(FAILFAST_WAIT, until=c.closed_by_peer):
            c.flags["ff"] = "A"
            return
        data, ends = chunks[1]
        c._write_stream(data, {0, len(data)} if ends else {0})
        if c.pump(FAILFAST_WAIT, until=c.closed_by_peer):
            c.flags["ff"] = "fast"
            return
        c.flags["ff"] = "late"
        data, ends = chunks[2]
        c._write_stream(data, {0, len(data)} if ends else {0})

    def check(c, args):
        ff = c.flags.get("ff")
        if ff == "A":
            return ["server failed the connection on the first part, which is valid UTF-8"], []
        if ff == "late":
            if strict_fast and not args.non_strict:
                return ["server did not fail within %.1fs after the frame with the invalid sequence "
                        "(it must fail no later than the end of that frame) (Autobahn: NON-STRICT)"
                        % FAILFAST_WAIT], []
            return [], ["failed only after the complete message/frame (Autobahn NON-STRICT)"]
        if ff == "fast":
            return [], []
        return ["internal: fail-fast step not reached"], []

    return Case(cid, desc, act, mode="fail", codes=(1007,), check=check)


def build_cases():
    cases = []
    add = cases.append

    # ---- 1.x framing
    sizes = [0, 125, 126, 127, 128, 65535, 65536]
    for i, n in enumerate(sizes, 1):
        p = b"*" * n
        add(echo_case("1.1.%d" % i, "text message, payload %d bytes" % n, [T(p)], [text(p)]))
    p = b"*" * 65536
    add(echo_case("1.1.8", "text message, payload 65536 bytes, written in chops of 997 bytes", [T(p)],
                  [text(p)], mode=997))
    for i, n in enumerate(sizes, 1):
        p = b"\xfe" * n
        add(echo_case("1.2.%d" % i, "binary message, payload %d bytes" % n, [B(p)], [binary(p)]))
    p = b"\xfe" * 65536
    add(echo_case("1.2.8", "binary message, payload 65536 bytes, written in chops of 997 bytes", [B(p)],
                  [binary(p)], mode=997))

    # ---- 2.x ping / pong
    bin8 = b"\x00\xff\xfe\xfd\xfc\xfb\x00\xff"
    add(echo_case("2.1", "ping without payload", [F(OP_PING)], [pong(b"")]))
    add(echo_case("2.2", "ping with small text payload", [F(OP_PING, HELLO)], [pong(HELLO)]))
    add(echo_case("2.3", "ping with small binary payload", [F(OP_PING, bin8)], [pong(bin8)]))
    add(echo_case("2.4", "ping with 125-byte payload", [F(OP_PING, b"\xfe" * 125)], [pong(b"\xfe" * 125)]))
    add(fail_case("2.5", "ping with 126-byte payload (control frame too long)", [F(OP_PING, b"\xfe" * 126)]))
    add(echo_case("2.6", "ping with 125-byte payload, written octet-wise", [F(OP_PING, b"\xfe" * 125)],
                  [pong(b"\xfe" * 125)], mode="octet"))
    add(echo_case("2.7", "unsolicited pong without payload (must be ignored)", [F(OP_PONG)], []))
    add(echo_case("2.8", "unsolicited pong with payload (must be ignored)",
                  [F(OP_PONG, b"unsolicited pong payload")], []))
    add(echo_case("2.9", "unsolicited pong, then ping", [F(OP_PONG, b"unsolicited pong payload"),
                                                        F(OP_PING, b"ping payload")], [pong("ping payload")]))
    pings = [F(OP_PING, "payload-%d" % i) for i in range(10)]
    add(echo_case("2.10", "10 pings with payload, all answered in order", pings,
                  [pong("payload-%d" % i) for i in range(10)]))
    pings = [F(OP_PING, "payload-%d" % i) for i in range(10)]
    add(echo_case("2.11", "10 pings with payload, written octet-wise", pings,
                  [pong("payload-%d" % i) for i in range(10)], mode="octet"))

    # ---- 3.x reserved bits
    add(fail_case("3.1", "text message with RSV=1", [T(HELLO, rsv=1)]))
    add(fail_case("3.2", "text, then text with RSV=2, then ping", [T(HELLO), T(HELLO, rsv=2), F(OP_PING)],
                  expect=[text(HELLO)]))
    add(fail_case("3.3", "text, then text with RSV=3, then ping (frame-wise writes)",
                  [T(HELLO), T(HELLO, rsv=3), F(OP_PING)], expect=[text(HELLO)], mode="frame"))
    add(fail_case("3.4", "text, then text with RSV=4, then ping (octet-wise writes)",
                  [T(HELLO), T(HELLO, rsv=4), F(OP_PING)], expect=[text(HELLO)], mode="octet"))
    add(fail_case("3.5", "binary message with RSV=5", [B(bin8, rsv=5)]))
    add(fail_case("3.6", "ping with RSV=6 (no pong expected)", [F(OP_PING, HELLO, rsv=6)]))
    add(fail_case("3.7", "close with RSV=7", [CLOSE(1000, rsv=7)]))

    # ---- 4.x reserved opcodes
    rp = b"reserved opcode payload"
    for i, op in enumerate((3, 4, 5, 6, 7), 1):
        kind = "non-control"
        payload = rp if i in (2, 4, 5) else b""
        desc = "reserved %s opcode %d%s" % (kind, op, " with payload" if payload else "")
        if i <= 2:
            add(fail_case("4.1.%d" % i, desc, [F(op, payload)]))
        else:
            add(fail_case("4.1.%d" % i, "text, then " + desc + ", then ping",
                          [T(HELLO), F(op, payload), F(OP_PING)], expect=[text(HELLO)]))
    for i, op in enumerate((11, 12, 13, 14, 15), 1):
        payload = rp if i in (2, 4, 5) else b""
        desc = "reserved control opcode %d%s" % (op, " with payload" if payload else "")
        if i <= 2:
            add(fail_case("4.2.%d" % i, desc, [F(op, payload)]))
        else:
            add(fail_case("4.2.%d" % i, "text, then " + desc + ", then ping",
                          [T(HELLO), F(op, payload), F(OP_PING)], expect=[text(HELLO)]))

    # ---- 5.x fragmentation
    f1, f2 = b"fragment1", b"fragment2"
    add(fail_case("5.1", "ping fragmented into 2 frames", [F(OP_PING, f1, fin=False), F(OP_CONT, f2)]))
    add(fail_case("5.2", "pong fragmented into 2 frames", [F(OP_PONG, f1, fin=False), F(OP_CONT, f2)]))
    for cid, mode, how in (("5.3", "whole", "one write"), ("5.4", "frame", "frame-wise writes"),
                           ("5.5", "octet", "octet-wise writes")):
        add(echo_case(cid, "text in 2 fragments (%s)" % how, [T(f1, fin=False), F(OP_CONT, f2)],
                      [text(f1 + f2)], mode=mode))
    for cid, mode, how in (("5.6", "whole", "one write"), ("5.7", "frame", "frame-wise writes"),
                           ("5.8", "octet", "octet-wise writes")):
        add(echo_case(cid, "text in 2 fragments with a ping in between (%s)" % how,
                      [T(f1, fin=False), F(OP_PING, b"ping payload"), F(OP_CONT, f2)],
                      [pong("ping payload"), text(f1 + f2)], mode=mode))
    for cid, mode, how in (("5.9", "whole", "one write"), ("5.10", "frame", "frame-wise writes"),
                           ("5.11", "octet", "octet-wise writes")):
        add(fail_case(cid, "continuation (fin=1) with nothing to continue, then text (%s)" % how,
                      [F(OP_CONT, b"non-continuation payload"), T(HELLO)], mode=mode))
    for cid, mode, how in (("5.12", "whole", "one write"), ("5.13", "frame", "frame-wise writes"),
                           ("5.14", "octet", "octet-wise writes")):
        add(fail_case(cid, "continuation (fin=0) with nothing to continue, then text (%s)" % how,
                      [F(OP_CONT, b"non-continuation payload", fin=False), T(HELLO)], mode=mode))
    add(fail_case("5.15", "text in 2 fragments, then continuation (fin=0) with nothing to continue, then text",
                  [T(f1, fin=False), F(OP_CONT, f2), F(OP_CONT, b"fragment3", fin=False), T(b"fragment4")],
                  expect=[text(f1 + f2)]))
    add(fail_case("5.16", "2x: continuation (fin=0) with nothing to continue, then text in 2 fragments",
                  [F(OP_CONT, f1, fin=False), T(f2, fin=False), F(OP_CONT, b"fragment3")] * 2))
    add(fail_case("5.17", "2x: continuation (fin=1) with nothing to continue, then text in 2 fragments",
                  [F(OP_CONT, f1), T(f2, fin=False), F(OP_CONT, b"fragment3")] * 2))
    add(fail_case("5.18", "text in 2 fragments, both with opcode text (new message inside a fragmented one)",
                  [T(f1, fin=False), T(f2)]))

    def act_5_19(mode):
        def act(c):
            fr = [b"fragment1", b"fragment2", b"fragment3", b"fragment4", b"fragment5"]
            c.send([T(fr[0], fin=False), F(OP_CONT, fr[1], fin=False), F(OP_PING, b"pongme 1!")], mode)
            c.pump(1.0)
            c.send([F(OP_CONT, fr[2], fin=False), F(OP_CONT, fr[3], fin=False), F(OP_PING, b"pongme 2!"),
                    F(OP_CONT, fr[4])], mode)
        return act
    exp519 = [pong("pongme 1!"), pong("pongme 2!"), text(b"fragment1fragment2fragment3fragment4fragment5")]
    add(Case("5.19", "text in 5 fragments with 2 pings in between and a 1 s pause", act_5_19("whole"),
             expect=exp519))
    add(Case("5.20", "as 5.19, frame-wise writes", act_5_19("frame"), expect=exp519))

    # ---- 6.x UTF-8
    add(echo_case("6.1.1", "empty text message", [T(b"")], [text(b"")]))
    add(echo_case("6.1.2", "text message in 3 empty fragments",
                  [T(b"", fin=False), F(OP_CONT, b"", fin=False), F(OP_CONT, b"")], [text(b"")]))
    add(echo_case("6.1.3", "text in 3 fragments, first and last empty",
                  [T(b"", fin=False), F(OP_CONT, b"middle frame payload", fin=False), F(OP_CONT, b"")],
                  [text(b"middle frame payload")]))
    add(echo_case("6.2.1", "valid multi-byte UTF-8 text in one frame", [T(UTF8_HELLO)], [text(UTF8_HELLO)]))
    cut = UTF8_HELLO.index("\u00fc".encode())
    add(echo_case("6.2.2", "valid UTF-8 text in 2 fragments split at a code point boundary",
                  [T(UTF8_HELLO[:cut], fin=False), F(OP_CONT, UTF8_HELLO[cut:])], [text(UTF8_HELLO)]))
    add(echo_case("6.2.3", "valid UTF-8 text in 1-byte fragments (split inside code points)",
                  fragmented(OP_TEXT, UTF8_HELLO, 1), [text(UTF8_HELLO)]))
    add(echo_case("6.2.4", "valid UTF-8 'kosme' (Greek) in 1-byte fragments",
                  fragmented(OP_TEXT, KOSME, 1), [text(KOSME)]))
    add(fail_case("6.3.1", "invalid UTF-8 (surrogate) text in one frame", [T(INVALID_PAYLOAD)], code=1007))
    add(fail_case("6.3.2", "invalid UTF-8 (surrogate) text in 1-byte fragments",
                  fragmented(OP_TEXT, INVALID_PAYLOAD, 1), code=1007))
    p1, p2, p3 = KOSME, h("f4 90 80 80"), b"edited"
    full = p1 + p2 + p3
    add(failfast_case("6.4.1", "fail-fast: 3 frames, 2nd frame carries U+110000 (f4 90 80 80); must fail "
                      "before the 3rd frame", [p1, p2, p3], one_frame=False, strict_fast=True))
    add(failfast_case("6.4.2", "fail-fast: 3 frames, 2nd frame is the single invalid byte 0x90; must fail "
                      "before the 3rd frame", [full[:12], full[12:13], full[13:]], one_frame=False,
                      strict_fast=True))
    add(failfast_case("6.4.3", "fail-fast: one frame in 3 chops, 2nd chop carries f4 90 80 80; must fail "
                      "by the end of the frame", [p1, p2, p3], one_frame=True, strict_fast=False))
    add(failfast_case("6.4.4", "fail-fast: one frame in 3 chops, 2nd chop is the single invalid byte 0x90; "
                      "must fail by the end of the frame", [full[:12], full[12:13], full[13:]],
                      one_frame=True, strict_fast=False))
    for gi, (name, vs) in enumerate(utf8_vectors(), 5):
        for vi, (valid, b) in enumerate(vs, 1):
            cid = "6.%d.%d" % (gi, vi)
            hx = b.hex() if len(b) <= 24 else b[:24].hex() + "...(%d bytes)" % len(b)
            if valid:
                add(echo_case(cid, "%s: valid text %s" % (name, hx), [T(b)], [text(b)]))
            else:
                add(fail_case(cid, "%s: invalid text %s" % (name, hx), [T(b)], code=1007))

    # ---- 7.x closing handshake
    def act_7_1_1(c):
        c.send([T(b"Hello World")])
    add(Case("7.1.1", "text message, await its echo, then close", act_7_1_1, expect=[text(b"Hello World")]))
    add(reply_case("7.1.2", "two close frames back to back", [CLOSE(1000), CLOSE(1000)], codes=(1000,)))
    add(reply_case("7.1.3", "close, then ping (no pong expected)", [CLOSE(1000), F(OP_PING, b"ping")],
                   codes=(1000,)))
    add(reply_case("7.1.4", "close, then text (no echo expected)", [CLOSE(1000), T(HELLO)], codes=(1000,)))
    add(reply_case("7.1.5", "text fragment 1, close, text fragment 2 (no echo expected)",
                   [T(f1, fin=False), CLOSE(1000), F(OP_CONT, f2)], codes=(1000,)))
    big = (b"BAsd7&jh23" * 26215)[:256 * 1024]
    add(reply_case("7.1.6", "256 KiB text, small text, close, ping back to back: both echoed, then close",
                   [T(big), T(b"Hello World!"), CLOSE(1000), F(OP_PING)], codes=(1000,),
                   expect=[text(big), text(b"Hello World!")], nonstrict=[[], [text(big)]]))
    add(reply_case("7.3.1", "close with empty payload", [CLOSE()], codes=(None, 1000)))
    add(reply_case("7.3.2", "close with 1-byte payload", [F(OP_CLOSE, b"\x2a")], codes=(1002,)))
    add(reply_case("7.3.3", "close 1000 without reason", [CLOSE(1000)], codes=(1000,)))
    add(reply_case("7.3.4", "close 1000 with short reason", [CLOSE(1000, b"Hello World!")], codes=(1000,)))
    add(reply_case("7.3.5", "close 1000 with 123-byte reason", [CLOSE(1000, b"*" * 123)], codes=(1000,)))
    add(reply_case("7.3.6", "close 1000 with 124-byte reason (control payload 126 > 125)",
                   [CLOSE(1000, b"*" * 124)], codes=(1002,)))
    add(reply_case("7.5.1", "close 1000 with invalid UTF-8 reason", [CLOSE(1000, INVALID_PAYLOAD)],
                   codes=(1007,)))
    for i, code in enumerate([1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999], 1):
        add(reply_case("7.7.%d" % i, "close with valid code %d: clean close, 1000 or echoed code" % code,
                       [CLOSE(code)], codes=(1000, code)))
    for i, code in enumerate([0, 999, 1004, 1005, 1006, 1016, 1100, 2000, 2999], 1):
        add(reply_case("7.9.%d" % i, "close with invalid code %d" % code, [CLOSE(code)], codes=(1002,)))
    add(reply_case("7.13.1", "close with code 5000 (undefined; 1002 expected, 1000 only with --non-strict)",
                   [CLOSE(5000)], codes=(1002,), nonstrict_codes=(1000,)))
    add(reply_case("7.13.2", "close with code 65535 (undefined; 1002 expected, 1000 only with --non-strict)",
                   [CLOSE(65535)], codes=(1002,), nonstrict_codes=(1000,)))

    # ---- 9.x limited sizes (<= 1 MiB)
    KI, MI = 1024, 1024 * 1024
    for i, n in enumerate([64 * KI, 256 * KI, MI], 1):
        p = pattern(n, n, True)
        add(echo_case("9.1.%d" % i, "text message of %d KiB" % (n // KI), [T(p)], [text(p)], timeout=10))
    for i, n in enumerate([64 * KI, 256 * KI, MI], 1):
        p = pattern(n, n, False)
        add(echo_case("9.2.%d" % i, "binary message of %d KiB" % (n // KI), [B(p)], [binary(p)], timeout=10))
    fsizes = [64, 256, KI, 4 * KI, 16 * KI, 64 * KI, 256 * KI, MI]
    pt, pb = pattern(MI, 1, True), pattern(MI, 2, False)
    for i, fs in enumerate(fsizes, 1):
        add(echo_case("9.3.%d" % i, "1 MiB text message in %d-byte frames" % fs, fragmented(OP_TEXT, pt, fs),
                      [text(pt)], timeout=10))
    for i, fs in enumerate(fsizes, 1):
        add(echo_case("9.4.%d" % i, "1 MiB binary message in %d-byte frames" % fs,
                      fragmented(OP_BINARY, pb, fs), [binary(pb)], timeout=10))
    for i, ch in enumerate([64, 128, 256, 512, 1024, 2048], 1):
        add(echo_case("9.5.%d" % i, "1 MiB text message, one frame, written in chops of %d bytes" % ch,
                      [T(pt)], [text(pt)], mode=ch, timeout=10))
    for i, ch in enumerate([64, 128, 256, 512, 1024, 2048], 1):
        add(echo_case("9.6.%d" % i, "1 MiB binary message, one frame, written in chops of %d bytes" % ch,
                      [B(pb)], [binary(pb)], mode=ch, timeout=10))

    def roundtrips(op, payload, count):
        def act(c):
            for k in range(count):
                c.send([F(op, payload)])
                if not c.pump(T_ECHO, until=lambda: len(c.messages()) > k or c.closed_by_peer()):
                    return
                if c.closed_by_peer():
                    return
        return act
    for i, n in enumerate([0, 16, 64, 256, 1024, 4096], 1):
        p = pattern(n, 7, True)
        add(Case("9.7.%d" % i, "1000 text messages of %d bytes, one at a time (round trips)" % n,
                 roundtrips(OP_TEXT, p, 1000), expect=[text(p)] * 1000, timeout=10))
    for i, n in enumerate([0, 16, 64, 256, 1024, 4096], 1):
        p = pattern(n, 8, False)
        add(Case("9.8.%d" % i, "1000 binary messages of %d bytes, one at a time (round trips)" % n,
                 roundtrips(OP_BINARY, p, 1000), expect=[binary(p)] * 1000, timeout=10))

    # ---- extras (not in Autobahn)
    add(fail_case("x.1.1", "UNMASKED text frame from the client", [T(HELLO, masked=False)]))
    add(fail_case("x.1.2", "text, then UNMASKED text frame", [T(HELLO), T(HELLO, masked=False)],
                  expect=[text(HELLO)]))
    add(fail_case("x.1.3", "UNMASKED ping from the client (no pong expected)", [F(OP_PING, HELLO, masked=False)]))
    add(reply_case("x.2.1", "close with code 1015 (reserved, must not appear on the wire)", [CLOSE(1015)],
                   codes=(1002,)))
    add(Case("x.3.1", "binary frame whose 64-bit length has the most significant bit set "
             "(1002, or 1009 as 'too big')",
             sender([struct.pack("!BBQ", 0x82, 0xFF, (1 << 63) | 5) + os.urandom(4) + b"hello"]),
             mode="fail", codes=(1002, 1009)))
    return cases


# --------------------------------------------------------------------------
# running and judging
# --------------------------------------------------------------------------

def run_case(case, target, args):
    host, port, path = target
    c = Conn(host, port, path, args.verbose)
    problems, notes = [], []
    try:
        try:
            c.handshake()
        except (HandshakeError, OSError) as e:
            return ["opening handshake failed: %s" % e], [], c
        case.act(c)
        c._maybe_reply_close()
        if case.mode == "normal":
            n = len(case.expect)
            c.pump(case.timeout, until=lambda: len(c.messages()) >= n or c.closed_by_peer())
            if n == 0:
                c.pump(0.3, until=c.closed_by_peer)   # give a wrong answer (e.g. to a pong) time to show up
            if not c.closed_by_peer():
                c.send_close(1000)
        elif case.mode in ("fail", "reply"):
            # wait for the close frame (and the TCP close) from the server
            if case.expect:
                c.pump(case.timeout, until=lambda: len(c.messages()) >= len(case.expect) or c.closed_by_peer())
        c.pump(T_CLOSE, until=lambda: c.eof is not None)
        if c.eof is None:
            c.client_dropped = True
            c._log("client drops TCP (server did not close it within %.1fs)" % T_CLOSE)
    except Exception as e:  # a bug in this script, or an unexpected socket error
        problems.append("client exception %s: %s" % (type(e).__name__, e))
    finally:
        c.shutdown()

    # --- messages
    got = c.messages()
    if got != case.expect:
        if any(got == alt for alt in case.nonstrict):
            if args.non_strict:
                notes.append("accepted non-strict outcome %s" % fmt_list(got))
            else:
                problems.append(describe_diff(got, case.expect) + " (Autobahn: NON-STRICT)")
        else:
            problems.append(describe_diff(got, case.expect))
    # --- close
    if case.mode == "normal" and c.server_closed_first:
        problems.append("server initiated a close (%s) although nothing invalid was sent"
                        % fmt_ev(("close",) + c.server_close))
    elif c.server_close is None:
        if c.eof:
            how = ("reset the TCP connection (RST: frames in flight, e.g. its close frame, may have been "
                   "discarded)" if c.eof == "reset" else "closed TCP")
            problems.append("server %s without a close frame reaching the client%s" % (
                how, "; expected close code %s" % "/".join(map(str, case.codes)) if case.mode != "normal" else ""))
        else:
            problems.append("no close frame from the server within the timeout (expected code %s)"
                            % "/".join(map(str, case.codes)))
    else:
        code = c.server_close[0]
        if code not in case.codes:
            if code in case.nonstrict_codes and args.non_strict:
                notes.append("accepted non-strict close code %s" % code)
            else:
                problems.append("server close code %s, expected %s%s" % (
                    code, "/".join("empty" if x is None else str(x) for x in case.codes),
                    " (Autobahn: INFORMATIONAL)" if code in case.nonstrict_codes else ""))
    if c.after_close:
        problems.append("server sent %d frame(s) after its close frame (%s)" % (
            len(c.after_close), ", ".join(OPNAMES.get(op, str(op)) for op, _ in c.after_close[:3])))
    if c.errors:
        problems.extend(sorted(set(c.errors)))
    if c.write_stalled:
        problems.append("server stopped reading (a write stalled for %.0fs)" % T_WRITE)
    if c.client_dropped and c.server_close is not None:
        problems.append("server did not close the TCP connection within %.1fs after the close frames "
                        "(client had to drop it)" % T_CLOSE)
    elif c.client_dropped and not any("no close frame" in p for p in problems):
        problems.append("server did not close the TCP connection (client had to drop it)")
    if case.check is not None and not problems:
        p2, n2 = case.check(c, args)
        problems.extend(p2)
        notes.extend(n2)
    return problems, notes, c


def parse_target(url):
    u = urlsplit(url)
    if u.scheme != "ws":
        raise ValueError("only ws:// URLs are supported")
    if not u.hostname:
        raise ValueError("missing host")
    path = u.path or "/"
    if u.query:
        path += "?" + u.query
    return u.hostname, u.port or 80, path


def selected(cid, prefixes):
    if not prefixes:
        return True
    for p in prefixes:
        p = p.strip()
        if not p:
            continue
        if cid == p or cid.startswith(p if p.endswith(".") else p + "."):
            return True
    return False


def main():
    ap = argparse.ArgumentParser(description="Autobahn-style hostile client for a WebSocket echo server")
    ap.add_argument("url", help="ws://host:port/path of the echo server")
    ap.add_argument("--only", default="", help="comma-separated case-id prefixes, e.g. '5' or '6.4,7.9.2' "
                    "('6.2' selects 6.2.x, not 6.20.x)")
    ap.add_argument("--non-strict", action="store_true",
                    help="also accept outcomes Autobahn rates NON-STRICT / INFORMATIONAL")
    ap.add_argument("-v", "--verbose", action="store_true", help="print a frame timeline for every case")
    args = ap.parse_args()
    try:
        target = parse_target(args.url)
    except ValueError as e:
        ap.error(str(e))
    prefixes = [p for p in args.only.split(",") if p.strip()]
    cases = [cs for cs in build_cases() if selected(cs.cid, prefixes)]
    if not cases:
        print("no case matches --only %r" % args.only, file=sys.stderr)
        return 2
    passed = failed = 0
    t_start = time.monotonic()
    for case in cases:
        t0 = time.monotonic()
        problems, notes, c = run_case(case, target, args)
        dt = time.monotonic() - t0
        if problems:
            failed += 1
            print("FAIL %s %s: %s" % (case.cid, case.desc, "; ".join(problems)), flush=True)
        else:
            passed += 1
            print("PASS %s %s%s" % (case.cid, case.desc, (" [%s]" % "; ".join(notes)) if notes else ""),
                  flush=True)
        if args.verbose:
            for line in c.log:
                print("      " + line)
            print("      (%.3fs)" % dt, flush=True)
    print("TOTAL %d cases: %d passed, %d failed (%.1fs)%s" % (
        len(cases), passed, failed, time.monotonic() - t_start, " [non-strict]" if args.non_strict else ""))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

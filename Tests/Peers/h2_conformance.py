#!/usr/bin/env python3
"""h2spec-style HTTP/2 (RFC 9113 / RFC 7540) + HPACK (RFC 7541) conformance check of a
server: the case list of h2spec (github.com/summerwind/h2spec: http2, hpack and generic
sections) written anew here against a gRPC server, plus cases of our own ("extra/").
scripts/cli-tests.sh runs it against `switchboard mock-server --grpc-port`; every case must pass.

Usage: python3 h2_conformance.py PORT [--host 127.0.0.1] [--timeout 3] [--only PREFIX] [-v]

Speaks h2c with prior knowledge over raw sockets.  Every frame (valid or deliberately
malformed) is written byte-exactly with struct, and received frames are parsed by
hand too, so nothing normalises a malformed frame; header blocks are produced with
the `hpack` package (one stateful encoder/decoder per connection), or by hand where
the block itself must be malformed.

Each case opens its own connection, performs the h2spec handshake (preface,
SETTINGS{INITIAL_WINDOW_SIZE=65535}, wait for the server SETTINGS and the ACK of
ours, ACK theirs), sends the case's frames and classifies what the server does:
GOAWAY(+code), RST_STREAM(+code), connection closed (EOF/RST) without GOAWAY,
normal answer (HEADERS ...), or nothing until the timeout.

Verdicts follow h2spec's verifier semantics:
  connection error : GOAWAY with an expected code, or the connection closed
                     without any GOAWAY.  (A GOAWAY with a *wrong* code is a FAIL
                     here, even though h2spec's loop would accept it if the
                     socket closes afterwards; the note says so.)
  stream error     : RST_STREAM or GOAWAY with an expected code, or the
                     connection closed without GOAWAY.
  answer / frame   : the expected frame arrives before the timeout.
Every verdict line carries what was observed and how long the server took.
"""

import argparse
import socket
import struct
import sys
import time

from hpack import Encoder, Decoder, NeverIndexedHeaderTuple

# ---------------------------------------------------------------- constants
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, \
    WINDOW_UPDATE, CONTINUATION = range(10)
FNAME = {0: "DATA", 1: "HEADERS", 2: "PRIORITY", 3: "RST_STREAM", 4: "SETTINGS",
         5: "PUSH_PROMISE", 6: "PING", 7: "GOAWAY", 8: "WINDOW_UPDATE",
         9: "CONTINUATION"}
F_ES, F_ACK, F_EH, F_PADDED, F_PRIO = 0x1, 0x1, 0x4, 0x8, 0x20

NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR, SETTINGS_TIMEOUT, \
    STREAM_CLOSED, FRAME_SIZE_ERROR, REFUSED_STREAM, CANCEL, COMPRESSION_ERROR, \
    CONNECT_ERROR, ENHANCE_YOUR_CALM, INADEQUATE_SECURITY, HTTP_1_1_REQUIRED = range(14)
ENAME = {0: "NO_ERROR", 1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR",
         3: "FLOW_CONTROL_ERROR", 4: "SETTINGS_TIMEOUT", 5: "STREAM_CLOSED",
         6: "FRAME_SIZE_ERROR", 7: "REFUSED_STREAM", 8: "CANCEL",
         9: "COMPRESSION_ERROR", 10: "CONNECT_ERROR", 11: "ENHANCE_YOUR_CALM",
         12: "INADEQUATE_SECURITY", 13: "HTTP_1_1_REQUIRED"}

S_HEADER_TABLE_SIZE, S_ENABLE_PUSH, S_MAX_CONCURRENT_STREAMS, \
    S_INITIAL_WINDOW_SIZE, S_MAX_FRAME_SIZE, S_MAX_HEADER_LIST_SIZE = range(1, 7)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
GRPC_PATH = "/signal.chat.SealedSenderMessages/SendSealedMessage"
GRPC_EMPTY_MSG = b"\x00\x00\x00\x00\x00"      # one empty, uncompressed gRPC message
MAX_HEADER_LEN = 4000                          # h2spec's default dummy header length

TIMEOUT = 3.0
SLOW = 2.0


def ename(code):
    return ENAME.get(code, "0x%x" % code)


# ---------------------------------------------------------------- framing
def frame(ftype, flags, sid, payload=b"", length=None):
    """Byte-exact frame; `length` overrides the length field (for lies)."""
    if length is None:
        length = len(payload)
    return struct.pack(">I", length)[1:] + bytes([ftype, flags]) + \
        struct.pack(">I", sid) + payload


def settings_payload(pairs):
    return b"".join(struct.pack(">HI", k, v) for k, v in pairs)


def priority_payload(dep, weight, exclusive=False):
    return struct.pack(">IB", (dep | (0x80000000 if exclusive else 0)), weight)


class Event:
    def __init__(self, kind, t, ftype=None, flags=0, sid=0, payload=b"", note=""):
        self.kind = kind          # 'frame', 'eof', 'reset', 'timeout', 'error'
        self.t = t
        self.ftype, self.flags, self.sid, self.payload = ftype, flags, sid, payload
        self.note = note
        self.headers = None

    # convenience accessors
    def is_frame(self, ftype=None):
        return self.kind == "frame" and (ftype is None or self.ftype == ftype)

    @property
    def code(self):
        if self.ftype == RST_STREAM and len(self.payload) >= 4:
            return struct.unpack(">I", self.payload[:4])[0]
        if self.ftype == GOAWAY and len(self.payload) >= 8:
            return struct.unpack(">I", self.payload[4:8])[0]
        return None

    def describe(self):
        if self.kind != "frame":
            return {"eof": "EOF(closed)", "reset": "TCP-RST(closed)",
                    "timeout": "timeout", "error": "error:" + self.note}[self.kind]
        n = FNAME.get(self.ftype, "UNKNOWN(0x%x)" % self.ftype)
        fl = []
        if self.ftype in (DATA, HEADERS) and self.flags & F_ES:
            fl.append("ES")
        if self.ftype in (SETTINGS, PING) and self.flags & F_ACK:
            fl.append("ACK")
        if self.ftype == GOAWAY:
            last = struct.unpack(">I", self.payload[:4])[0] & 0x7fffffff
            dbg = self.payload[8:][:60]
            return "GOAWAY(last=%d,%s%s)" % (last, ename(self.code),
                                             (",%r" % dbg.decode("latin1")) if dbg else "")
        if self.ftype == RST_STREAM:
            return "RST_STREAM(sid=%d,%s)" % (self.sid, ename(self.code))
        if self.ftype == WINDOW_UPDATE:
            inc = struct.unpack(">I", self.payload[:4])[0] if len(self.payload) >= 4 else -1
            return "WINDOW_UPDATE(sid=%d,+%d)" % (self.sid, inc)
        if self.ftype == DATA:
            return "DATA(sid=%d,len=%d%s)" % (self.sid, len(self.payload),
                                              ",ES" if self.flags & F_ES else "")
        if self.ftype == HEADERS:
            h = ""
            if self.headers is not None:
                keep = [(k, v) for k, v in self.headers
                        if k in (":status", "grpc-status", "content-type")]
                h = " " + " ".join("%s=%s" % kv for kv in keep)
            return "HEADERS(sid=%d%s%s)" % (self.sid, ",ES" if self.flags & F_ES else "", h)
        if self.ftype == PING:
            return "PING(%s%r)" % ("ACK," if self.flags & F_ACK else "", self.payload)
        if self.ftype == SETTINGS:
            if self.flags & F_ACK:
                return "SETTINGS(ACK)"
            return "SETTINGS(%s)" % ",".join("%d=%d" % struct.unpack(">HI", self.payload[i:i + 6])
                                             for i in range(0, len(self.payload) - 5, 6))
        return "%s(sid=%d,flags=0x%x,len=%d)" % (n, self.sid, self.flags, len(self.payload))


class Conn:
    def __init__(self, host, port, timeout=TIMEOUT):
        self.timeout = timeout
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.closed = False
        self.enc = Encoder()
        self.dec = Decoder()
        self.dec.max_header_list_size = 1 << 20
        self.server_settings = {}
        self.events = []          # every event received after mark()
        self.mark_t = time.time()
        self.send_failed = None
        self.hblock = None        # (sid, bytes) header block being assembled

    # ------------------------------------------------------------ sending
    def send(self, data):
        if self.closed:
            return
        try:
            self.sock.sendall(data)
        except OSError as e:       # peer already closed: not fatal for the verdict
            self.send_failed = str(e)

    def mark(self):
        """Start measuring the server's reaction from now."""
        self.events = []
        self.mark_t = time.time()

    def encode(self, headers):
        return self.enc.encode(headers)

    def headers(self, sid, hdrs, end_stream=True, end_headers=True, prio=None, pad=None,
                block=None):
        flags = (F_ES if end_stream else 0) | (F_EH if end_headers else 0)
        body = block if block is not None else self.encode(hdrs)
        pre = b""
        if prio is not None:
            flags |= F_PRIO
            pre = priority_payload(*prio)
        if pad is not None:
            flags |= F_PADDED
            return self.send(frame(HEADERS, flags, sid, bytes([pad]) + pre + body + b"\0" * pad))
        self.send(frame(HEADERS, flags, sid, pre + body))

    def data(self, sid, payload, end_stream=True, pad=None):
        if pad is not None:
            self.send(frame(DATA, F_PADDED | (F_ES if end_stream else 0), sid,
                            bytes([len(pad)]) + payload + pad))
        else:
            self.send(frame(DATA, F_ES if end_stream else 0, sid, payload))

    def continuation(self, sid, block, end_headers=True):
        self.send(frame(CONTINUATION, F_EH if end_headers else 0, sid, block))

    def settings(self, pairs, ack=False):
        self.send(frame(SETTINGS, F_ACK if ack else 0, 0, settings_payload(pairs)))

    def ping(self, data=b"\0" * 8, ack=False):
        self.send(frame(PING, F_ACK if ack else 0, 0, data))

    def priority(self, sid, dep=0, weight=255, exclusive=False):
        self.send(frame(PRIORITY, 0, sid, priority_payload(dep, weight, exclusive)))

    def rst(self, sid, code):
        self.send(frame(RST_STREAM, 0, sid, struct.pack(">I", code)))

    def window_update(self, sid, inc):
        self.send(frame(WINDOW_UPDATE, 0, sid, struct.pack(">I", inc)))

    def goaway(self, last, code, dbg=b""):
        self.send(frame(GOAWAY, 0, 0, struct.pack(">II", last, code) + dbg))

    # ------------------------------------------------------------ receiving
    def _parse_one(self):
        if len(self.buf) < 9:
            return None
        ln = int.from_bytes(self.buf[:3], "big")
        if len(self.buf) < 9 + ln:
            return None
        ftype, flags = self.buf[3], self.buf[4]
        sid = struct.unpack(">I", self.buf[5:9])[0] & 0x7fffffff
        payload = self.buf[9:9 + ln]
        self.buf = self.buf[9 + ln:]
        ev = Event("frame", time.time() - self.mark_t, ftype, flags, sid, payload)
        self._decode_headers(ev)
        return ev

    def _decode_headers(self, ev):
        """Keep the HPACK decoder in sync with the server's encoder."""
        if ev.ftype in (HEADERS, PUSH_PROMISE):
            p = ev.payload
            if ev.flags & F_PADDED:
                padlen = p[0]
                p = p[1:len(p) - padlen]
            if ev.ftype == HEADERS and ev.flags & F_PRIO:
                p = p[5:]
            if ev.ftype == PUSH_PROMISE:
                p = p[4:]
            self.hblock = (ev, p)
        elif ev.ftype == CONTINUATION and self.hblock:
            self.hblock = (self.hblock[0], self.hblock[1] + ev.payload)
        else:
            return
        if ev.flags & F_EH:
            first, block = self.hblock
            self.hblock = None
            try:
                first.headers = self.dec.decode(block, raw=False)
            except Exception as e:  # noqa
                first.headers = [("!hpack-error", str(e))]

    def next_event(self, deadline):
        while True:
            ev = self._parse_one()
            if ev is not None:
                self.events.append(ev)
                return ev
            if self.closed:
                return Event("eof", time.time() - self.mark_t)
            left = deadline - time.time()
            if left <= 0:
                ev = Event("timeout", time.time() - self.mark_t)
                self.events.append(ev)
                return ev
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                self.closed = True
                ev = Event("reset", time.time() - self.mark_t)
                self.events.append(ev)
                return ev
            except OSError as e:
                self.closed = True
                ev = Event("error", time.time() - self.mark_t, note=str(e))
                self.events.append(ev)
                return ev
            if not chunk:
                self.closed = True
                ev = Event("eof", time.time() - self.mark_t)
                self.events.append(ev)
                return ev
            self.buf += chunk

    def handshake(self):
        self.send(PREFACE)
        self.settings([(S_INITIAL_WINDOW_SIZE, 65535)])
        got_settings = got_ack = False
        deadline = time.time() + self.timeout
        self.first_frame = None
        while not (got_settings and got_ack):
            ev = self.next_event(deadline)
            if not ev.is_frame():
                raise RuntimeError("handshake failed: " + ev.describe())
            if self.first_frame is None:
                self.first_frame = ev
            if ev.ftype == SETTINGS:
                if ev.flags & F_ACK:
                    got_ack = True
                else:
                    got_settings = True
                    for i in range(0, len(ev.payload) - 5, 6):
                        k, v = struct.unpack(">HI", ev.payload[i:i + 6])
                        self.server_settings[k] = v
                    self.settings([], ack=True)
        self.mark()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# ---------------------------------------------------------------- requests
def grpc_headers(path=GRPC_PATH):
    return [(":method", "POST"), (":scheme", "http"), (":path", path),
            (":authority", "127.0.0.1"), ("content-type", "application/grpc"),
            ("te", "trailers")]


def plain_headers(method="GET", path="/"):
    return [(":method", method), (":scheme", "http"), (":path", path),
            (":authority", "127.0.0.1")]


def dummy_headers(n=1):
    return [("x-dummy%d" % i, "x" * MAX_HEADER_LEN) for i in range(n)]


# ---------------------------------------------------------------- verifiers
class Result:
    def __init__(self, ok, observed, expected, t=None, note=""):
        self.ok, self.observed, self.expected, self.t, self.note = ok, observed, expected, t, note


def summarize(events, limit=8):
    out = []
    for e in events:
        if e.is_frame(WINDOW_UPDATE) and e.sid == 0:
            continue                     # connection-level credit: noise
        out.append(e.describe())
    if len(out) > limit:
        out = out[:limit - 1] + ["...(+%d)" % (len(out) - limit + 1)]
    return " -> ".join(out) if out else "(nothing)"


CLOSE_WAIT = 2.5


def drain_after_goaway(conn, secs=CLOSE_WAIT):
    """After a GOAWAY, see whether the TCP connection gets closed (RFC 9113 5.4.1).
    Returns a note for the verdict line."""
    t0 = time.time()
    deadline = t0 + secs
    while True:
        ev = conn.next_event(deadline)
        if ev.kind in ("eof", "reset", "error"):
            return "TCP closed %.2fs after GOAWAY" % (time.time() - t0)
        if ev.kind == "timeout":
            conn.events.pop()  # not interesting
            return "GOAWAY sent but TCP connection NOT closed within %.1fs" % secs


def _err_frames(conn):
    return [e for e in conn.events if e.is_frame(GOAWAY) or e.is_frame(RST_STREAM)]


def _wrong_code_result(conn, exp, closed):
    bad = _err_frames(conn)
    note = "wrong error code; " + ("connection then closed (h2spec's verifier loop would accept this)"
                                   if closed else "connection NOT closed within %.1fs (h2spec: FAIL)" % CLOSE_WAIT)
    return Result(False, summarize(conn.events), exp, bad[0].t, note)


def verify_connection_error(conn, *codes):
    exp = "GOAWAY(%s) or connection close" % "|".join(ename(c) for c in codes)
    deadline = time.time() + conn.timeout
    while True:
        ev = conn.next_event(deadline)
        if ev.kind in ("eof", "reset", "error"):
            if _err_frames(conn):
                return _wrong_code_result(conn, exp, True)
            return Result(True, summarize(conn.events), exp, ev.t, "closed without GOAWAY")
        if ev.kind == "timeout":
            if _err_frames(conn):
                return _wrong_code_result(conn, exp, False)
            return Result(False, summarize(conn.events), exp, None)
        if ev.is_frame(GOAWAY):
            t = ev.t
            if ev.code in codes:
                note = drain_after_goaway(conn)
                return Result(True, summarize(conn.events), exp, t, note)
            # wrong code: keep reading (bounded) to see whether the socket closes
            deadline = max(deadline, time.time() + CLOSE_WAIT)


def verify_stream_error(conn, *codes, sid=None):
    exp = "RST_STREAM(%s) or GOAWAY(same) or connection close" % "|".join(ename(c) for c in codes)
    deadline = time.time() + conn.timeout
    while True:
        ev = conn.next_event(deadline)
        if ev.kind in ("eof", "reset", "error"):
            if _err_frames(conn):
                return _wrong_code_result(conn, exp, True)
            return Result(True, summarize(conn.events), exp, ev.t, "closed without GOAWAY")
        if ev.kind == "timeout":
            if _err_frames(conn):
                return _wrong_code_result(conn, exp, False)
            return Result(False, summarize(conn.events), exp, None)
        if ev.is_frame(RST_STREAM) and ev.code in codes:
            return Result(True, summarize(conn.events), exp, ev.t)
        if ev.is_frame(GOAWAY) and ev.code in codes:
            t = ev.t
            note = drain_after_goaway(conn)
            return Result(True, summarize(conn.events), exp, t, "connection error used; " + note)
        if ev.is_frame(RST_STREAM) or ev.is_frame(GOAWAY):
            # wrong code.  h2spec keeps waiting; we wait (bounded) to see whether it closes.
            deadline = max(deadline, time.time() + CLOSE_WAIT)


def verify_frame(conn, pred, expected):
    deadline = time.time() + conn.timeout
    while True:
        ev = conn.next_event(deadline)
        if ev.kind != "frame":
            return Result(False, summarize(conn.events), expected, None if ev.kind == "timeout" else ev.t)
        if pred(ev):
            return Result(True, summarize(conn.events), expected, ev.t)


def verify_ping_ack(conn, data=b"\0" * 8):
    return verify_frame(conn, lambda e: e.is_frame(PING) and e.flags & F_ACK and e.payload == data,
                        "PING(ACK) with identical payload")


def verify_headers(conn, sid=1):
    return verify_frame(conn, lambda e: e.is_frame(HEADERS) and e.sid == sid,
                        "HEADERS response on stream %d" % sid)


def verify_settings_ack(conn):
    return verify_frame(conn, lambda e: e.is_frame(SETTINGS) and e.flags & F_ACK, "SETTINGS(ACK)")


def verify_connection_close(conn):
    exp = "connection close"
    deadline = time.time() + conn.timeout
    while True:
        ev = conn.next_event(deadline)
        if ev.kind in ("eof", "reset", "error"):
            return Result(True, summarize(conn.events), exp, ev.t)
        if ev.kind == "timeout":
            return Result(False, summarize(conn.events), exp, None)


def verify_stream_close(conn, sid=1):
    """Wait for the server to end the stream (h2spec VerifyStreamClose)."""
    deadline = time.time() + conn.timeout
    while True:
        ev = conn.next_event(deadline)
        if ev.kind != "frame":
            return False
        if ev.sid == sid and ev.ftype in (DATA, HEADERS) and ev.flags & F_ES:
            return True


def verify_data_len(conn, length, sid=1):
    """The first DATA frame on `sid` must carry exactly `length` octets."""
    exp = "DATA(sid=%d,len=%d)" % (sid, length)
    deadline = time.time() + conn.timeout
    while True:
        ev = conn.next_event(deadline)
        if ev.kind != "frame":
            return Result(False, summarize(conn.events), exp, None if ev.kind == "timeout" else ev.t)
        if ev.is_frame(DATA) and ev.sid == sid:
            return Result(len(ev.payload) == length, summarize(conn.events), exp, ev.t)


# ---------------------------------------------------------------- case registry
CASES = []


def case(cid, desc, requirement):
    def deco(fn):
        CASES.append((cid, desc, requirement, fn))
        return fn
    return deco


def handshake_settings_ack(c, pairs):
    """Send SETTINGS and wait for its ACK (h2spec VerifyEventType(SettingsFrame))."""
    c.settings(pairs)
    r = verify_frame(c, lambda e: e.is_frame(SETTINGS), "SETTINGS")
    if not r.ok:
        raise RuntimeError("no SETTINGS ACK: " + r.observed)
    c.mark()


def grpc_request(c, sid=1):
    """Unary gRPC call that the server answers with HEADERS, DATA(5), trailers."""
    c.headers(sid, grpc_headers(), end_stream=False)
    c.data(sid, GRPC_EMPTY_MSG, end_stream=True)


# ======================================================== http2 / 3.5
@case("http2/3.5/1", "Sends client connection preface",
      "RFC9113 3.4: the server connection preface (a SETTINGS frame) MUST be the first frame the server sends")
def _(c):
    c.send(PREFACE + frame(SETTINGS, 0, 0, settings_payload([(S_INITIAL_WINDOW_SIZE, 65535)])))
    deadline = time.time() + c.timeout
    ev = c.next_event(deadline)
    ok = ev.is_frame(SETTINGS) and not ev.flags & F_ACK
    return Result(ok, summarize(c.events), "first frame SETTINGS (non-ACK)", ev.t)


@case("http2/3.5/2", "Sends invalid connection preface",
      "RFC9113 3.4: clients and servers MUST treat an invalid connection preface as a connection error of type PROTOCOL_ERROR (h2spec: TCP connection closed)")
def _(c):
    c.send(b"INVALID CONNECTION PREFACE\r\n\r\n")
    return verify_connection_close(c)


# ======================================================== http2 / 4.1
@case("http2/4.1/1", "Sends a frame with unknown type",
      "RFC9113 4.1: implementations MUST ignore and discard frames of unknown types")
def _(c):
    c.send(frame(0x16, 0, 0, b"\0" * 8))
    c.ping()
    return verify_ping_ack(c)


@case("http2/4.1/2", "Sends a frame with undefined flag",
      "RFC9113 4.1: unused flags MUST be ignored on receipt")
def _(c):
    c.send(frame(PING, 0x16, 0, b"\0" * 8))
    return verify_ping_ack(c)


@case("http2/4.1/3", "Sends a frame with reserved field bit",
      "RFC9113 4.1: the reserved bit MUST be ignored when receiving")
def _(c):
    c.send(frame(PING, 0x16, 0x80000000, b"\0" * 8))
    return verify_ping_ack(c)


# ======================================================== http2 / 4.2
@case("http2/4.2/1", "Sends a DATA frame with 2^14 octets in length",
      "RFC9113 4.2: all implementations MUST be capable of receiving and minimally processing frames up to 2^14 octets")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False)
    body = b"\x00" + struct.pack(">I", 16384 - 5) + b"x" * (16384 - 5)
    c.data(1, body, end_stream=True)
    return verify_headers(c)


@case("http2/4.2/2", "Sends a large size DATA frame that exceeds the SETTINGS_MAX_FRAME_SIZE",
      "RFC9113 4.2: an endpoint MUST send an error code of FRAME_SIZE_ERROR if a frame exceeds SETTINGS_MAX_FRAME_SIZE")
def _(c):
    mfs = c.server_settings.get(S_MAX_FRAME_SIZE, 16384)
    c.headers(1, grpc_headers(), end_stream=False)
    c.data(1, b"x" * (mfs + 1), end_stream=True)
    return verify_stream_error(c, FRAME_SIZE_ERROR)


@case("http2/4.2/3", "Sends a large size HEADERS frame that exceeds the SETTINGS_MAX_FRAME_SIZE",
      "RFC9113 4.2: a frame size error in a frame that could alter the state of the entire connection (any header block) MUST be treated as a connection error")
def _(c):
    c.headers(1, grpc_headers() + dummy_headers(5), end_stream=True)
    return verify_connection_error(c, FRAME_SIZE_ERROR)


# ======================================================== http2 / 4.3
@case("http2/4.3/1", "Sends invalid header block fragment",
      "RFC9113 4.3: a decoding error in a field block MUST be treated as a connection error of type COMPRESSION_ERROR")
def _(c):
    c.send(frame(HEADERS, F_ES | F_EH, 1, b"\x40"))
    return verify_connection_error(c, COMPRESSION_ERROR)


@case("http2/4.3/2", "Sends a PRIORITY frame while sending the header blocks",
      "RFC9113 4.3: field blocks MUST be transmitted as a contiguous sequence of frames, with no interleaved frames of any other type or from any other stream (PROTOCOL_ERROR)")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False, end_headers=False)
    c.priority(1, 0, 255)
    c.continuation(1, c.encode(dummy_headers(1)), True)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/4.3/3", "Sends a HEADERS frame to another stream while sending the header blocks",
      "RFC9113 4.3/6.2: interleaved frame on another stream is a connection error of type PROTOCOL_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False, end_headers=False)
    c.headers(3, grpc_headers(), end_stream=True)
    c.continuation(1, c.encode(dummy_headers(1)), True)
    return verify_connection_error(c, PROTOCOL_ERROR)


def hold_half_closed_remote(c, sid=1):
    """Put stream `sid` into half-closed (remote) on the server and keep it there:
    with our INITIAL_WINDOW_SIZE at 0 the server cannot send its response DATA, so it
    cannot close the stream.  (h2spec just sends HEADERS+END_STREAM and races the
    server's answer; with this server that race makes the case flaky.)"""
    handshake_settings_ack(c, [(S_INITIAL_WINDOW_SIZE, 0)])
    grpc_request(c, sid)
    r = verify_frame(c, lambda e: e.is_frame(HEADERS) and e.sid == sid, "response HEADERS")
    if not r.ok:
        raise RuntimeError("could not hold stream half-closed (remote): " + r.observed)
    c.mark()


# ======================================================== http2 / 5.1
@case("http2/5.1/1", "idle: Sends a DATA frame",
      "RFC9113 5.1 idle: receiving any frame other than HEADERS or PRIORITY on an idle stream MUST be treated as a connection error of type PROTOCOL_ERROR")
def _(c):
    c.data(1, b"test", True)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1/2", "idle: Sends a RST_STREAM frame",
      "RFC9113 5.1 idle / 6.4: connection error of type PROTOCOL_ERROR")
def _(c):
    c.rst(1, CANCEL)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1/3", "idle: Sends a WINDOW_UPDATE frame",
      "RFC9113 5.1 idle: connection error of type PROTOCOL_ERROR")
def _(c):
    c.window_update(1, 100)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1/4", "idle: Sends a CONTINUATION frame",
      "RFC9113 5.1 idle / 6.10: connection error of type PROTOCOL_ERROR")
def _(c):
    c.continuation(1, c.encode(grpc_headers()), True)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1/5", "half closed (remote): Sends a DATA frame",
      "RFC9113 5.1 half-closed (remote): frames other than WINDOW_UPDATE, PRIORITY, RST_STREAM MUST be answered with a stream error of type STREAM_CLOSED")
def _(c):
    hold_half_closed_remote(c)
    c.data(1, b"test", True)
    return verify_stream_error(c, STREAM_CLOSED)


@case("http2/5.1/6", "half closed (remote): Sends a HEADERS frame",
      "RFC9113 5.1 half-closed (remote): stream error of type STREAM_CLOSED")
def _(c):
    hold_half_closed_remote(c)
    c.headers(1, grpc_headers(), end_stream=True)
    return verify_stream_error(c, STREAM_CLOSED)


@case("http2/5.1/7", "half closed (remote): Sends a CONTINUATION frame",
      "RFC9113 5.1 / 6.10: stream error STREAM_CLOSED (h2spec also accepts PROTOCOL_ERROR)")
def _(c):
    hold_half_closed_remote(c)
    c.continuation(1, c.encode(grpc_headers()), True)
    return verify_stream_error(c, STREAM_CLOSED, PROTOCOL_ERROR)


@case("http2/5.1/8", "closed: Sends a DATA frame after sending RST_STREAM frame",
      "RFC7540 5.1 closed: frame other than PRIORITY after RST_STREAM MUST be a stream error STREAM_CLOSED (RFC9113 6.1: DATA on a stream not open/half-closed(local) MUST get stream error STREAM_CLOSED)")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False)
    c.rst(1, CANCEL)
    c.data(1, b"test", True)
    return verify_stream_error(c, STREAM_CLOSED)


@case("http2/5.1/9", "closed: Sends a HEADERS frame after sending RST_STREAM frame",
      "RFC7540 5.1 closed: stream error STREAM_CLOSED; RFC9113 5.1.1: HEADERS on a used stream id is an unexpected identifier, connection error PROTOCOL_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False)
    c.rst(1, CANCEL)
    c.headers(1, grpc_headers(), end_stream=True)
    # h2spec wants RFC 7540's STREAM_CLOSED; RFC 9113 (which replaces it) makes frames on a
    # closed stream a MAY and asks PROTOCOL_ERROR for a reused identifier: either is right.
    return verify_stream_error(c, STREAM_CLOSED, PROTOCOL_ERROR)


@case("http2/5.1/10", "closed: Sends a CONTINUATION frame after sending RST_STREAM frame",
      "RFC7540 5.1 closed / 6.10: stream error STREAM_CLOSED or PROTOCOL_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False)
    c.rst(1, CANCEL)
    c.continuation(1, c.encode(dummy_headers(1)), True)
    return verify_stream_error(c, STREAM_CLOSED, PROTOCOL_ERROR)


@case("http2/5.1/11", "closed: Sends a DATA frame",
      "RFC7540 5.1 closed: frames after END_STREAM MUST be a connection error STREAM_CLOSED (RFC9113 5.1: MAY; 6.1: MUST at least be a stream error STREAM_CLOSED)")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True)
    if not verify_stream_close(c):
        return Result(False, summarize(c.events), "server to close stream 1 first", None)
    c.mark()
    c.data(1, b"test", True)
    return verify_connection_error(c, STREAM_CLOSED)


@case("http2/5.1/12", "closed: Sends a HEADERS frame",
      "RFC7540 5.1 closed: connection error STREAM_CLOSED (RFC9113 5.1.1: reused stream id is an unexpected identifier -> connection error PROTOCOL_ERROR)")
def _(c):
    blk = c.encode(grpc_headers())
    c.headers(1, None, end_stream=True, block=blk)
    if not verify_stream_close(c):
        return Result(False, summarize(c.events), "server to close stream 1 first", None)
    c.mark()
    c.headers(1, grpc_headers(), end_stream=True)
    # As 5.1/9: RFC 9113 5.1.1 asks PROTOCOL_ERROR for the reused identifier.
    return verify_connection_error(c, STREAM_CLOSED, PROTOCOL_ERROR)


@case("http2/5.1/13", "closed: Sends a CONTINUATION frame",
      "RFC7540 5.1 closed / RFC9113 6.10: connection error STREAM_CLOSED or PROTOCOL_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True)
    if not verify_stream_close(c):
        return Result(False, summarize(c.events), "server to close stream 1 first", None)
    c.mark()
    c.continuation(1, c.encode(dummy_headers(1)), True)
    return verify_connection_error(c, STREAM_CLOSED, PROTOCOL_ERROR)


# ======================================================== http2 / 5.1.1
@case("http2/5.1.1/1", "Sends even-numbered stream identifier",
      "RFC9113 5.1.1: an endpoint that receives an unexpected stream identifier MUST respond with a connection error of type PROTOCOL_ERROR")
def _(c):
    c.headers(2, grpc_headers(), end_stream=True)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1.1/2", "Sends stream identifier that is numerically smaller than previous",
      "RFC9113 5.1.1: connection error of type PROTOCOL_ERROR")
def _(c):
    c.headers(5, grpc_headers(), end_stream=True)
    c.headers(3, grpc_headers(), end_stream=True)
    return verify_connection_error(c, PROTOCOL_ERROR)


# ======================================================== http2 / 5.1.2
@case("http2/5.1.2/1", "Sends HEADERS frames that causes their advertised concurrent stream limit to be exceeded",
      "RFC9113 5.1.2: MUST treat this as a stream error of type PROTOCOL_ERROR or REFUSED_STREAM")
def _(c):
    maxs = c.server_settings.get(S_MAX_CONCURRENT_STREAMS)
    if maxs is None:
        # Our server always advertises a limit: its absence is a failure here, not a skip.
        return Result(False, "no SETTINGS_MAX_CONCURRENT_STREAMS advertised", "a limit to test", None)
    # INITIAL_WINDOW_SIZE 0: the server can send response HEADERS but not DATA,
    # so every stream stays half-closed (remote) and counts toward the limit.
    handshake_settings_ack(c, [(S_INITIAL_WINDOW_SIZE, 0)])
    sid = 1
    out = b""
    for _i in range(maxs + 1):
        out += frame(HEADERS, F_EH, sid, c.encode(grpc_headers()))
        out += frame(DATA, F_ES, sid, GRPC_EMPTY_MSG)
        sid += 2
    c.send(out)
    last = sid - 2
    exp = "RST_STREAM(sid=%d, PROTOCOL_ERROR|REFUSED_STREAM) (or GOAWAY/close)" % last
    deadline = time.time() + c.timeout
    while True:
        ev = c.next_event(deadline)
        if ev.kind in ("eof", "reset", "error"):
            return Result(not any(e.is_frame(GOAWAY) for e in c.events), summarize(c.events, 6), exp, ev.t)
        if ev.kind == "timeout":
            return Result(False, summarize(c.events, 6), exp, None)
        if ev.is_frame(RST_STREAM):
            return Result(ev.code in (PROTOCOL_ERROR, REFUSED_STREAM), summarize(c.events, 6), exp, ev.t,
                          "RST on stream %d" % ev.sid)
        if ev.is_frame(GOAWAY):
            return Result(ev.code in (PROTOCOL_ERROR, REFUSED_STREAM), summarize(c.events, 6), exp, ev.t)


# ======================================================== http2 / 5.3.1 (RFC 7540 only)
@case("http2/5.3.1/1", "Sends HEADERS frame that depends on itself",
      "RFC7540 5.3.1: a stream cannot depend on itself; MUST be a stream error of type PROTOCOL_ERROR (text dropped from RFC9113)")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True, prio=(1, 255, False))
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/5.3.1/2", "Sends PRIORITY frame that depend on itself",
      "RFC7540 5.3.1: stream error of type PROTOCOL_ERROR (text dropped from RFC9113)")
def _(c):
    c.priority(1, 1, 255)
    return verify_stream_error(c, PROTOCOL_ERROR)


# ======================================================== http2 / 5.4.1
@case("http2/5.4.1/1", "Sends an invalid PING frame for connection close",
      "RFC9113 5.4.1: after sending the GOAWAY frame for an error condition, the endpoint MUST close the TCP connection")
def _(c):
    c.send(frame(PING, 0, 3, b"\0" * 8))
    return verify_connection_close(c)


@case("http2/5.4.1/2", "Sends an invalid PING frame to receive GOAWAY frame (h2spec strict)",
      "RFC9113 5.4.1: an endpoint that encounters a connection error SHOULD first send a GOAWAY frame")
def _(c):
    c.send(frame(PING, 0, 3, b"\0" * 8))
    return verify_frame(c, lambda e: e.is_frame(GOAWAY), "GOAWAY")


# ======================================================== http2 / 5.5
@case("http2/5.5/1", "Sends an unknown extension frame",
      "RFC9113 5.5: implementations MUST discard frames that have unknown or unsupported types")
def _(c):
    c.send(frame(0x16, 0, 0, b"\0" * 8))
    c.ping()
    return verify_ping_ack(c)


@case("http2/5.5/2", "Sends an unknown extension frame in the middle of a header block",
      "RFC9113 5.5: extension frames in the middle of a field block MUST be treated as a connection error of type PROTOCOL_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True, end_headers=False)
    c.send(frame(0x16, 0, 0, b"\0" * 8))
    return verify_connection_error(c, PROTOCOL_ERROR)


# ======================================================== http2 / 6.1
@case("http2/6.1/1", "Sends a DATA frame with 0x0 stream identifier",
      "RFC9113 6.1: DATA with stream id 0 MUST get a connection error of type PROTOCOL_ERROR")
def _(c):
    c.data(0, b"test", True)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.1/2", "Sends a DATA frame on the stream that is not in \"open\" or \"half-closed (local)\" state",
      "RFC9113 6.1: the recipient MUST respond with a stream error of type STREAM_CLOSED")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True)
    c.data(1, b"test", True)
    return verify_stream_error(c, STREAM_CLOSED)


@case("http2/6.1/3", "Sends a DATA frame with invalid pad length",
      "RFC9113 6.1: padding >= payload length MUST be treated as a connection error of type PROTOCOL_ERROR")
def _(c):
    c.headers(1, grpc_headers() + [("content-length", "4")], end_stream=False)
    c.send(frame(DATA, F_PADDED | F_ES, 1, b"\x06Test"))
    return verify_connection_error(c, PROTOCOL_ERROR)


# ======================================================== http2 / 6.2
@case("http2/6.2/1", "Sends a HEADERS frame without the END_HEADERS flag, and a PRIORITY frame",
      "RFC9113 6.2: any frame other than CONTINUATION after HEADERS without END_HEADERS MUST be a connection error of type PROTOCOL_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False, end_headers=False)
    c.priority(1, 0, 255)
    c.continuation(1, c.encode(dummy_headers(1)), True)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.2/2", "Sends a HEADERS frame to another stream while sending a HEADERS frame",
      "RFC9113 6.2: a frame on a different stream MUST be a connection error of type PROTOCOL_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False, end_headers=False)
    c.headers(3, grpc_headers(), end_stream=True)
    c.continuation(1, c.encode(dummy_headers(1)), True)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.2/3", "Sends a HEADERS frame with 0x0 stream identifier",
      "RFC9113 6.2: HEADERS with stream id 0 MUST get a connection error of type PROTOCOL_ERROR")
def _(c):
    c.headers(0, grpc_headers(), end_stream=True)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.2/4", "Sends a HEADERS frame with invalid pad length",
      "RFC9113 6.2: padding >= remaining payload MUST be treated as a connection error of type PROTOCOL_ERROR (h2spec accepts a stream error)")
def _(c):
    blk = c.encode(grpc_headers())
    c.send(frame(HEADERS, F_PADDED | F_EH | F_ES, 1, bytes([len(blk) + 2]) + blk))
    return verify_stream_error(c, PROTOCOL_ERROR)


# ======================================================== http2 / 6.3
@case("http2/6.3/1", "Sends a PRIORITY frame with 0x0 stream identifier",
      "RFC9113 6.3: PRIORITY with stream id 0 MUST get a connection error of type PROTOCOL_ERROR")
def _(c):
    c.priority(0, 0, 255)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.3/2", "Sends a PRIORITY frame with a length other than 5 octets",
      "RFC9113 6.3: a PRIORITY frame with a length other than 5 octets MUST be treated as a stream error of type FRAME_SIZE_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True)
    c.send(frame(PRIORITY, 0, 1, b"\x80\x00\x00\x01"))
    return verify_stream_error(c, FRAME_SIZE_ERROR)


@case("http2/6.3/3", "Sends a PRIORITY frame for an idle stream, then send a HEADER frame for a lower stream ID (h2spec strict)",
      "RFC9113 6.3: PRIORITY can be sent in any state incl. idle and does not affect stream state; the request must be answered")
def _(c):
    c.priority(3, 0, 255)
    c.headers(1, grpc_headers(), end_stream=True)
    return verify_headers(c)


# ======================================================== http2 / 6.4
@case("http2/6.4/1", "Sends a RST_STREAM frame with 0x0 stream identifier",
      "RFC9113 6.4: RST_STREAM with stream id 0 MUST be a connection error of type PROTOCOL_ERROR")
def _(c):
    c.rst(0, CANCEL)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.4/2", "Sends a RST_STREAM frame on a idle stream",
      "RFC9113 6.4: RST_STREAM on an idle stream MUST be a connection error of type PROTOCOL_ERROR")
def _(c):
    c.rst(1, CANCEL)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.4/3", "Sends a RST_STREAM frame with a length other than 4 octets",
      "RFC9113 6.4: RST_STREAM with length != 4 MUST be a connection error of type FRAME_SIZE_ERROR (h2spec accepts a stream error)")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True)
    c.send(frame(RST_STREAM, 0, 1, b"\0\0\0"))
    return verify_stream_error(c, FRAME_SIZE_ERROR)


# ======================================================== http2 / 6.5
@case("http2/6.5/1", "Sends a SETTINGS frame with ACK flag and payload",
      "RFC9113 6.5: SETTINGS with ACK and length != 0 MUST be a connection error of type FRAME_SIZE_ERROR")
def _(c):
    c.send(frame(SETTINGS, F_ACK, 0, b"\0"))
    return verify_connection_error(c, FRAME_SIZE_ERROR)


@case("http2/6.5/2", "Sends a SETTINGS frame with 0x1 stream identifier",
      "RFC9113 6.5: SETTINGS with stream id != 0 MUST be a connection error of type PROTOCOL_ERROR")
def _(c):
    c.send(frame(SETTINGS, 0, 1, settings_payload([(S_MAX_CONCURRENT_STREAMS, 100)])))
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.5/3", "Sends a SETTINGS frame with a length other than a multiple of 6 octets",
      "RFC9113 6.5: length not a multiple of 6 MUST be a connection error of type FRAME_SIZE_ERROR (h2spec also accepts PROTOCOL_ERROR)")
def _(c):
    c.send(frame(SETTINGS, 0, 0, b"\x00\x03\x00\x00\x00\x64\x00\x02"))
    return verify_connection_error(c, FRAME_SIZE_ERROR, PROTOCOL_ERROR)


# ======================================================== http2 / 6.5.2
@case("http2/6.5.2/1", "SETTINGS_ENABLE_PUSH (0x2): Sends the value other than 0 or 1",
      "RFC9113 6.5.2: any ENABLE_PUSH value other than 0 or 1 MUST be a connection error of type PROTOCOL_ERROR")
def _(c):
    c.settings([(S_ENABLE_PUSH, 2)])
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.5.2/2", "SETTINGS_INITIAL_WINDOW_SIZE (0x4): Sends the value above the maximum flow control window size",
      "RFC9113 6.5.2: values above 2^31-1 MUST be a connection error of type FLOW_CONTROL_ERROR")
def _(c):
    c.settings([(S_INITIAL_WINDOW_SIZE, 2147483648)])
    return verify_connection_error(c, FLOW_CONTROL_ERROR)


@case("http2/6.5.2/3", "SETTINGS_MAX_FRAME_SIZE (0x5): Sends the value below the initial value",
      "RFC9113 6.5.2: values outside 2^14..2^24-1 MUST be a connection error of type PROTOCOL_ERROR")
def _(c):
    c.settings([(S_MAX_FRAME_SIZE, 16383)])
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.5.2/4", "SETTINGS_MAX_FRAME_SIZE (0x5): Sends the value above the maximum allowed frame size",
      "RFC9113 6.5.2: connection error of type PROTOCOL_ERROR")
def _(c):
    c.settings([(S_MAX_FRAME_SIZE, 16777216)])
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.5.2/5", "Sends a SETTINGS frame with unknown identifier",
      "RFC9113 6.5.2: an endpoint that receives a SETTINGS frame with any unknown or unsupported identifier MUST ignore that setting")
def _(c):
    c.settings([(0xFF, 1)])
    c.ping()
    return verify_ping_ack(c)


# ======================================================== http2 / 6.5.3
@case("http2/6.5.3/1", "Sends multiple values of SETTINGS_INITIAL_WINDOW_SIZE",
      "RFC9113 6.5.3: values in a SETTINGS frame MUST be processed in the order they appear")
def _(c):
    handshake_settings_ack(c, [(S_INITIAL_WINDOW_SIZE, 100), (S_INITIAL_WINDOW_SIZE, 1)])
    grpc_request(c)
    return verify_data_len(c, 1)


@case("http2/6.5.3/2", "Sends a SETTINGS frame without ACK flag",
      "RFC9113 6.5.3: once all values have been processed, the recipient MUST immediately emit a SETTINGS frame with the ACK flag set")
def _(c):
    c.settings([(S_ENABLE_PUSH, 0)])
    return verify_settings_ack(c)


# ======================================================== http2 / 6.7
@case("http2/6.7/1", "Sends a PING frame",
      "RFC9113 6.7: receivers of a PING without ACK MUST send a PING with ACK and an identical payload")
def _(c):
    d = b"h2spec\0\0"
    c.ping(d)
    return verify_ping_ack(c, d)


@case("http2/6.7/2", "Sends a PING frame with ACK",
      "RFC9113 6.7: an endpoint MUST NOT respond to PING frames containing the ACK flag")
def _(c):
    bad, good = b"invalid\0", b"h2spec\0\0"
    c.ping(bad, ack=True)
    c.ping(good)
    r = verify_ping_ack(c, good)
    if any(e.is_frame(PING) and e.payload == bad for e in c.events):
        r.ok = False
        r.note = "server answered the PING ACK"
    return r


@case("http2/6.7/3", "Sends a PING frame with a stream identifier field value other than 0x0",
      "RFC9113 6.7: PING with stream id != 0 MUST be a connection error of type PROTOCOL_ERROR")
def _(c):
    c.send(frame(PING, 0, 1, b"\0" * 8))
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.7/4", "Sends a PING frame with a length field value other than 8",
      "RFC9113 6.7: PING with length != 8 MUST be a connection error of type FRAME_SIZE_ERROR")
def _(c):
    c.send(frame(PING, 0, 0, b"\0" * 6))
    return verify_connection_error(c, FRAME_SIZE_ERROR)


# ======================================================== http2 / 6.8
@case("http2/6.8/1", "Sends a GOAWAY frame with a stream identifier other than 0x0",
      "RFC9113 6.8: GOAWAY with stream id != 0 MUST be a connection error of type PROTOCOL_ERROR")
def _(c):
    c.send(frame(GOAWAY, 0, 1, b"\0" * 8))
    return verify_connection_error(c, PROTOCOL_ERROR)


# ======================================================== http2 / 6.9
@case("http2/6.9/1", "Sends a WINDOW_UPDATE frame with a flow control window increment of 0",
      "RFC9113 6.9: increment 0 on the connection window MUST be a connection error of type PROTOCOL_ERROR")
def _(c):
    c.window_update(0, 0)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.9/2", "Sends a WINDOW_UPDATE frame with a flow control window increment of 0 on a stream",
      "RFC9113 6.9: increment 0 on a stream MUST be a stream error of type PROTOCOL_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False)
    c.window_update(1, 0)
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/6.9/3", "Sends a WINDOW_UPDATE frame with a length other than 4 octets",
      "RFC9113 6.9: WINDOW_UPDATE with length != 4 MUST be a connection error of type FRAME_SIZE_ERROR")
def _(c):
    c.send(frame(WINDOW_UPDATE, 0, 0, b"\0\0\x01"))
    return verify_connection_error(c, FRAME_SIZE_ERROR)


# ======================================================== http2 / 6.9.1
@case("http2/6.9.1/1", "Sends SETTINGS frame to set the initial window size to 1 and sends HEADERS frame",
      "RFC9113 6.9.1: the sender MUST NOT send a flow-controlled frame with a length that exceeds the space available")
def _(c):
    handshake_settings_ack(c, [(S_INITIAL_WINDOW_SIZE, 1)])
    grpc_request(c)
    return verify_data_len(c, 1)


@case("http2/6.9.1/2", "Sends multiple WINDOW_UPDATE frames increasing the flow control window to above 2^31-1",
      "RFC9113 6.9.1: a WINDOW_UPDATE that makes the connection window exceed 2^31-1 MUST end the connection with GOAWAY(FLOW_CONTROL_ERROR)")
def _(c):
    c.window_update(0, 2147483647)
    c.window_update(0, 2147483647)
    return verify_frame(c, lambda e: e.is_frame(GOAWAY) and e.code == FLOW_CONTROL_ERROR,
                        "GOAWAY(FLOW_CONTROL_ERROR)")


@case("http2/6.9.1/3", "Sends multiple WINDOW_UPDATE frames increasing the flow control window to above 2^31-1 on a stream",
      "RFC9113 6.9.1: for a stream, RST_STREAM with FLOW_CONTROL_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False)
    c.window_update(1, 2147483647)
    c.window_update(1, 2147483647)
    return verify_frame(c, lambda e: e.is_frame(RST_STREAM) and e.sid == 1 and e.code == FLOW_CONTROL_ERROR,
                        "RST_STREAM(sid=1,FLOW_CONTROL_ERROR)")


# ======================================================== http2 / 6.9.2
@case("http2/6.9.2/1", "Changes SETTINGS_INITIAL_WINDOW_SIZE after sending HEADERS frame",
      "RFC9113 6.9.2: when INITIAL_WINDOW_SIZE changes, a receiver MUST adjust the size of all stream flow-control windows")
def _(c):
    handshake_settings_ack(c, [(S_INITIAL_WINDOW_SIZE, 0)])
    grpc_request(c)
    c.settings([(S_INITIAL_WINDOW_SIZE, 1)])
    return verify_data_len(c, 1)


@case("http2/6.9.2/2", "Sends a SETTINGS frame for window size to be negative",
      "RFC9113 6.9.2: a sender MUST track the negative flow-control window and MUST NOT send until it becomes positive")
def _(c):
    handshake_settings_ack(c, [(S_INITIAL_WINDOW_SIZE, 3)])
    grpc_request(c)
    r = verify_frame(c, lambda e: e.is_frame(DATA), "first DATA frame")
    if not r.ok:
        return r
    first = r.observed
    c.mark()
    c.settings([(S_INITIAL_WINDOW_SIZE, 2)])       # window: 3-3 -> -1
    r = verify_frame(c, lambda e: e.is_frame(SETTINGS) and e.flags & F_ACK, "SETTINGS ACK")
    if not r.ok:
        return r
    c.window_update(1, 2)                            # window: -1+2 -> 1
    r = verify_data_len(c, 1)
    r.observed = first + " | " + r.observed
    return r


@case("http2/6.9.2/3", "Sends a SETTINGS_INITIAL_WINDOW_SIZE settings with an exceeded maximum window size value",
      "RFC9113 6.9.2: a change to INITIAL_WINDOW_SIZE that makes any window exceed 2^31-1 MUST be a connection error of type FLOW_CONTROL_ERROR")
def _(c):
    c.send(frame(SETTINGS, 0, 0, b"\x00\x04\x80\x00\x00\x00"))
    return verify_connection_error(c, FLOW_CONTROL_ERROR)


# ======================================================== http2 / 6.10
@case("http2/6.10/1", "Sends multiple CONTINUATION frames preceded by a HEADERS frame",
      "RFC9113 6.10: any number of CONTINUATION frames can be sent; the request must be processed")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True, end_headers=False)
    c.continuation(1, c.encode(dummy_headers(1)), False)
    c.continuation(1, c.encode(dummy_headers(1)), True)
    return verify_headers(c)


@case("http2/6.10/2", "Sends a CONTINUATION frame followed by any frame other than CONTINUATION",
      "RFC9113 6.10: without END_HEADERS the next frame MUST be CONTINUATION; otherwise connection error of type PROTOCOL_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False, end_headers=False)
    c.continuation(1, c.encode(dummy_headers(1)), False)
    c.data(1, b"test", True)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.10/3", "Sends a CONTINUATION frame with 0x0 stream identifier",
      "RFC9113 6.10: CONTINUATION with stream id 0 MUST be a connection error of type PROTOCOL_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True, end_headers=False)
    c.continuation(0, c.encode(dummy_headers(1)), True)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.10/4", "Sends a CONTINUATION frame preceded by a HEADERS frame with END_HEADERS flag",
      "RFC9113 6.10: a CONTINUATION not preceded by HEADERS/PUSH_PROMISE/CONTINUATION without END_HEADERS MUST be a connection error of type PROTOCOL_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True, end_headers=True)
    c.continuation(1, c.encode(dummy_headers(1)), True)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.10/5", "Sends a CONTINUATION frame preceded by a CONTINUATION frame with END_HEADERS flag",
      "RFC9113 6.10: connection error of type PROTOCOL_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True, end_headers=False)
    c.continuation(1, c.encode(dummy_headers(1)), True)
    c.continuation(1, c.encode(dummy_headers(1)), True)
    return verify_connection_error(c, PROTOCOL_ERROR)


@case("http2/6.10/6", "Sends a CONTINUATION frame preceded by a DATA frame",
      "RFC9113 6.10: connection error of type PROTOCOL_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False, end_headers=False)
    c.data(1, b"test", True)
    c.continuation(1, c.encode(dummy_headers(1)), False)
    c.continuation(0, c.encode(dummy_headers(1)), True)
    return verify_connection_error(c, PROTOCOL_ERROR)


# ======================================================== http2 / 7
@case("http2/7/1", "Sends a GOAWAY frame with unknown error code",
      "RFC9113 7: unknown or unsupported error codes MUST NOT trigger any special behavior (h2spec: PING answered or connection closed)")
def _(c):
    c.goaway(0, 0xff)
    c.ping()
    exp = "PING(ACK) or connection close"
    deadline = time.time() + c.timeout
    while True:
        ev = c.next_event(deadline)
        if ev.kind in ("eof", "reset", "error"):
            return Result(True, summarize(c.events), exp, ev.t)
        if ev.kind == "timeout":
            return Result(False, summarize(c.events), exp, None)
        if ev.is_frame(PING) and ev.flags & F_ACK:
            return Result(True, summarize(c.events), exp, ev.t)


@case("http2/7/2", "Sends a RST_STREAM frame with unknown error code",
      "RFC9113 7: unknown error codes MUST NOT trigger any special behavior")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False)
    c.rst(1, 0xff)
    c.ping()
    return verify_ping_ack(c)


# ======================================================== http2 / 8.1
def trailers_case(c, trailers, end_stream):
    c.headers(1, grpc_headers(), end_stream=False)
    c.data(1, GRPC_EMPTY_MSG, end_stream=False)
    c.headers(1, trailers, end_stream=end_stream)


@case("http2/8.1/1", "Sends a second HEADERS frame without the END_STREAM flag",
      "RFC9113 8.1: a HEADERS frame carrying trailers without END_STREAM makes the request malformed -> stream error of type PROTOCOL_ERROR")
def _(c):
    trailers_case(c, [("x-test", "ok")], end_stream=False)
    return verify_stream_error(c, PROTOCOL_ERROR)


# ======================================================== http2 / 8.1.2 .. 8.1.2.6  (RFC 9113 8.2, 8.3, 8.1.1)
MALFORMED = "malformed (RFC9113 8.1.1: MUST be treated as a stream error of type PROTOCOL_ERROR)"


@case("http2/8.1.2/1", "Sends a HEADERS frame that contains the header field name in uppercase letters",
      "RFC9113 8.2.1: a field name MUST NOT contain characters 0x41-0x5a (uppercase) -> " + MALFORMED)
def _(c):
    c.headers(1, grpc_headers() + [("X-TEST", "ok")], end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.1/1", "Sends a HEADERS frame that contains a unknown pseudo-header field",
      "RFC9113 8.3: endpoints MUST treat a request containing undefined pseudo-header fields as " + MALFORMED)
def _(c):
    c.headers(1, grpc_headers() + [(":test", "ok")], end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.1/2", "Sends a HEADERS frame that contains the pseudo-header field defined for response",
      "RFC9113 8.3: response pseudo-header fields MUST NOT appear in requests -> " + MALFORMED)
def _(c):
    c.headers(1, grpc_headers() + [(":status", "200")], end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.1/3", "Sends a HEADERS frame that contains a pseudo-header field as trailers",
      "RFC9113 8.3: pseudo-header fields MUST NOT appear in a trailer section -> " + MALFORMED)
def _(c):
    trailers_case(c, [(":method", "POST")], end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.1/4", "Sends a HEADERS frame that contains a pseudo-header field that appears in a header block after a regular header field",
      "RFC9113 8.3: pseudo-header fields after regular fields -> " + MALFORMED)
def _(c):
    h = grpc_headers()
    c.headers(1, [("x-test", "ok")] + h, end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.2/1", "Sends a HEADERS frame that contains the connection-specific header field",
      "RFC9113 8.2.2: any message containing connection-specific header fields MUST be treated as " + MALFORMED)
def _(c):
    c.headers(1, grpc_headers() + [("connection", "keep-alive")], end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.2/2", "Sends a HEADERS frame that contains the TE header field with any value other than \"trailers\"",
      "RFC9113 8.2.2: TE MUST NOT contain any value other than \"trailers\" -> " + MALFORMED)
def _(c):
    h = [kv for kv in grpc_headers() if kv[0] != "te"]
    c.headers(1, h + [("trailers", "test"), ("te", "trailers, deflate")], end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


def omit(name):
    return [kv for kv in grpc_headers() if kv[0] != name]


@case("http2/8.1.2.3/1", "Sends a HEADERS frame with empty \":path\" pseudo-header field",
      "RFC9113 8.3.1: :path MUST NOT be empty for http/https URIs -> " + MALFORMED)
def _(c):
    h = [(k, "" if k == ":path" else v) for k, v in grpc_headers()]
    c.headers(1, h, end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.3/2", "Sends a HEADERS frame that omits \":method\" pseudo-header field",
      "RFC9113 8.3.1: all requests MUST include exactly one valid value for :method, :scheme and :path -> " + MALFORMED)
def _(c):
    c.headers(1, omit(":method"), end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.3/3", "Sends a HEADERS frame that omits \":scheme\" pseudo-header field",
      "RFC9113 8.3.1: exactly one :scheme -> " + MALFORMED)
def _(c):
    c.headers(1, omit(":scheme"), end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.3/4", "Sends a HEADERS frame that omits \":path\" pseudo-header field",
      "RFC9113 8.3.1: exactly one :path -> " + MALFORMED)
def _(c):
    c.headers(1, omit(":path"), end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


def dup(name):
    h = grpc_headers()
    i = max(i for i, kv in enumerate(h) if kv[0].startswith(":"))
    val = dict(h)[name]
    return h[:i + 1] + [(name, val)] + h[i + 1:]


@case("http2/8.1.2.3/5", "Sends a HEADERS frame with duplicated \":method\" pseudo-header field",
      "RFC9113 8.3.1: exactly one :method -> " + MALFORMED)
def _(c):
    c.headers(1, dup(":method"), end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.3/6", "Sends a HEADERS frame with duplicated \":scheme\" pseudo-header field",
      "RFC9113 8.3.1: exactly one :scheme -> " + MALFORMED)
def _(c):
    c.headers(1, dup(":scheme"), end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.3/7", "Sends a HEADERS frame with duplicated \":path\" pseudo-header field",
      "RFC9113 8.3.1: exactly one :path -> " + MALFORMED)
def _(c):
    c.headers(1, dup(":path"), end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.6/1", "Sends a HEADERS frame with the \"content-length\" header field which does not equal the DATA frame payload length",
      "RFC9113 8.1.1: content-length not equal to the sum of DATA payload lengths -> " + MALFORMED)
def _(c):
    c.headers(1, grpc_headers() + [("content-length", "1")], end_stream=False)
    c.data(1, GRPC_EMPTY_MSG, end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.6/2", "Sends a HEADERS frame with the \"content-length\" header field which does not equal the sum of the multiple DATA frames payload length",
      "RFC9113 8.1.1: -> " + MALFORMED)
def _(c):
    c.headers(1, grpc_headers() + [("content-length", "1")], end_stream=False)
    c.data(1, GRPC_EMPTY_MSG[:3], end_stream=False)
    c.data(1, GRPC_EMPTY_MSG[3:], end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


# ======================================================== http2 / 8.2
@case("http2/8.2/1", "Sends a PUSH_PROMISE frame",
      "RFC9113 8.4: servers MUST treat the receipt of a PUSH_PROMISE frame as a connection error of type PROTOCOL_ERROR")
def _(c):
    blk = c.encode(plain_headers())
    c.send(frame(PUSH_PROMISE, F_EH, 1, struct.pack(">I", 3) + blk))
    return verify_connection_error(c, PROTOCOL_ERROR)


# ======================================================== hpack
def hpack_append(c, rep, prepend=False):
    blk = c.encode(grpc_headers())
    blk = rep + blk if prepend else blk + rep
    c.headers(1, None, end_stream=True, block=blk)


@case("hpack/2.3.3/1", "Sends a header field representation with invalid index",
      "RFC7541 2.3.3: indices strictly greater than the sum of both tables MUST be treated as a decoding error (RFC9113 4.3: COMPRESSION_ERROR)")
def _(c):
    hpack_append(c, b"\xfe")
    return verify_connection_error(c, COMPRESSION_ERROR)


@case("hpack/4.2/1", "Sends a dynamic table size update at the end of header block",
      "RFC7541 4.2: a dynamic table size update MUST occur at the beginning of the first header block following the change -> decoding error")
def _(c):
    hpack_append(c, b"\x21")
    return verify_connection_error(c, COMPRESSION_ERROR)


@case("hpack/5.2/1", "Sends a Huffman-encoded string literal representation with padding longer than 7 bits",
      "RFC7541 5.2: padding strictly longer than 7 bits MUST be treated as a decoding error")
def _(c):
    hpack_append(c, b"\x00\x85\xf2\xb2\x4a\x84\xff\x84\x49\x50\x9f\xff")
    return verify_connection_error(c, COMPRESSION_ERROR)


@case("hpack/5.2/2", "Sends a Huffman-encoded string literal representation padded by zero",
      "RFC7541 5.2: padding not corresponding to the MSBs of EOS MUST be treated as a decoding error")
def _(c):
    hpack_append(c, b"\x00\x85\xf2\xb2\x4a\x84\xff\x83\x49\x50\x90")
    return verify_connection_error(c, COMPRESSION_ERROR)


@case("hpack/5.2/3", "Sends a Huffman-encoded string literal representation containing the EOS symbol",
      "RFC7541 5.2: a Huffman-encoded string literal containing EOS MUST be treated as a decoding error")
def _(c):
    hpack_append(c, b"\x00\x85\xf2\xb2\x4a\x87\xff\xff\xff\xfd\x25\x42\x7f")
    return verify_connection_error(c, COMPRESSION_ERROR)


@case("hpack/6.1/1", "Sends a indexed header field representation with index 0",
      "RFC7541 6.1: index 0 MUST be treated as a decoding error")
def _(c):
    hpack_append(c, b"\x80")
    return verify_connection_error(c, COMPRESSION_ERROR)


def hpack_int(value, prefix_bits, first_byte_flags):
    k = (1 << prefix_bits) - 1
    if value < k:
        return bytes([first_byte_flags | value])
    out = [first_byte_flags | k]
    value -= k
    while value >= 128:
        out.append(0x80 | (value & 0x7f))
        value >>= 7
    out.append(value)
    return bytes(out)


@case("hpack/6.3/1", "Sends a dynamic table size update larger than the value of SETTINGS_HEADER_TABLE_SIZE",
      "RFC7541 6.3: a new maximum size that exceeds the SETTINGS_HEADER_TABLE_SIZE limit MUST be treated as a decoding error")
def _(c):
    lim = c.server_settings.get(S_HEADER_TABLE_SIZE, 4096)
    hpack_append(c, hpack_int(lim + 1, 5, 0x20), prepend=True)
    return verify_connection_error(c, COMPRESSION_ERROR)


# ======================================================== generic (positive cases)
@case("generic/1/1", "Sends a client connection preface",
      "RFC9113 3.4: the first frame sent by the server MUST be its SETTINGS")
def _(c):
    c.send(PREFACE + frame(SETTINGS, 0, 0, settings_payload([(S_INITIAL_WINDOW_SIZE, 65535)])))
    ev = c.next_event(time.time() + c.timeout)
    return Result(ev.is_frame(SETTINGS) and not ev.flags & F_ACK, summarize(c.events),
                  "first frame SETTINGS (non-ACK)", ev.t)


@case("generic/2/1", "Sends a PRIORITY frame on idle stream",
      "RFC9113 5.1/6.3: PRIORITY is allowed on idle streams and MUST be accepted")
def _(c):
    c.priority(1, 0, 255)
    c.ping()
    return verify_ping_ack(c)


@case("generic/2/2", "Sends a WINDOW_UPDATE frame on half-closed (remote) stream",
      "RFC9113 5.1: WINDOW_UPDATE is allowed on half-closed (remote) streams")
def _(c):
    handshake_settings_ack(c, [(S_INITIAL_WINDOW_SIZE, 0)])
    grpc_request(c)
    c.window_update(1, 1)
    return verify_frame(c, lambda e: e.is_frame(DATA), "DATA frame")


@case("generic/2/3", "Sends a PRIORITY frame on half-closed (remote) stream",
      "RFC9113 5.1: PRIORITY is allowed on half-closed (remote) streams")
def _(c):
    handshake_settings_ack(c, [(S_INITIAL_WINDOW_SIZE, 0)])
    grpc_request(c)
    c.priority(1, 0, 255)
    c.window_update(1, 1)
    return verify_frame(c, lambda e: e.is_frame(DATA), "DATA frame")


@case("generic/2/4", "Sends a RST_STREAM frame on half-closed (remote) stream",
      "RFC9113 5.1: RST_STREAM is allowed on half-closed (remote) streams")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True)
    c.rst(1, CANCEL)
    c.ping()
    exp = "PING(ACK) or connection close"
    deadline = time.time() + c.timeout
    while True:
        ev = c.next_event(deadline)
        if ev.kind in ("eof", "reset", "error"):
            return Result(True, summarize(c.events), exp, ev.t)
        if ev.kind == "timeout":
            return Result(False, summarize(c.events), exp, None)
        if ev.is_frame(PING) and ev.flags & F_ACK:
            return Result(True, summarize(c.events), exp, ev.t)


@case("generic/2/5", "Sends a PRIORITY frame on closed stream",
      "RFC9113 5.1/6.3: PRIORITY is allowed on closed streams")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True)
    if not verify_stream_close(c):
        return Result(False, summarize(c.events), "stream 1 to close first", None)
    c.mark()
    c.priority(1, 0, 255)
    c.ping()
    return verify_ping_ack(c)


@case("generic/3.1/1", "Sends a DATA frame", "RFC9113 6.1: the endpoint MUST accept DATA frames")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False)
    c.data(1, GRPC_EMPTY_MSG, True)
    return verify_headers(c)


@case("generic/3.1/2", "Sends multiple DATA frames", "RFC9113 6.1: multiple DATA frames")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False)
    c.data(1, GRPC_EMPTY_MSG[:2], False)
    c.data(1, GRPC_EMPTY_MSG[2:], True)
    return verify_headers(c)


@case("generic/3.1/3", "Sends a DATA frame with padding", "RFC9113 6.1: DATA frames MAY contain padding")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False)
    c.data(1, GRPC_EMPTY_MSG, True, pad=b"\0" * 6)
    return verify_headers(c)


@case("generic/3.2/1", "Sends a HEADERS frame", "RFC9113 6.2")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True)
    return verify_headers(c)


@case("generic/3.2/2", "Sends a HEADERS frame with padding", "RFC9113 6.2: HEADERS can include padding")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True, pad=8)
    return verify_headers(c)


@case("generic/3.2/3", "Sends a HEADERS frame with priority", "RFC9113 6.2: priority fields must be parsed")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True, prio=(0, 255, False))
    return verify_headers(c)


@case("generic/3.3/1", "Sends a PRIORITY frame with priority 1", "RFC9113 6.3")
def _(c):
    c.priority(1, 0, 0)
    c.headers(1, grpc_headers(), end_stream=True)
    return verify_headers(c)


@case("generic/3.3/2", "Sends a PRIORITY frame with priority 256", "RFC9113 6.3")
def _(c):
    c.priority(1, 0, 255)
    c.headers(1, grpc_headers(), end_stream=True)
    return verify_headers(c)


@case("generic/3.3/3", "Sends a PRIORITY frame with stream dependency", "RFC9113 6.3")
def _(c):
    c.priority(3, 1, 0)
    c.headers(1, grpc_headers(), end_stream=True)
    return verify_headers(c)


@case("generic/3.3/4", "Sends a PRIORITY frame with exclusive", "RFC9113 6.3")
def _(c):
    c.priority(1, 0, 0, exclusive=True)
    c.headers(1, grpc_headers(), end_stream=True)
    return verify_headers(c)


@case("generic/3.3/5", "Sends a PRIORITY frame for an idle stream, then send a HEADER frame for a lower stream ID",
      "RFC9113 6.3: PRIORITY does not open or close streams")
def _(c):
    c.priority(3, 0, 255)
    c.headers(1, grpc_headers(), end_stream=True)
    return verify_headers(c)


@case("generic/3.4/1", "Sends a RST_STREAM frame", "RFC9113 6.4: RST_STREAM on an open stream must be accepted")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False)
    c.rst(1, CANCEL)
    c.ping()
    return verify_ping_ack(c)


@case("generic/3.5/1", "Sends a SETTINGS frame", "RFC9113 6.5: all defined settings must be accepted and ACKed")
def _(c):
    c.settings([(S_HEADER_TABLE_SIZE, 4096), (S_ENABLE_PUSH, 1), (S_MAX_CONCURRENT_STREAMS, 100),
                (S_INITIAL_WINDOW_SIZE, 65535), (S_MAX_FRAME_SIZE, 16384), (S_MAX_HEADER_LIST_SIZE, 100)])
    return verify_settings_ack(c)


@case("generic/3.7/1", "Sends a PING frame", "RFC9113 6.7")
def _(c):
    c.ping(b"h2spec\0\0")
    return verify_ping_ack(c, b"h2spec\0\0")


@case("generic/3.8/1", "Sends a GOAWAY frame", "RFC9113 6.8: GOAWAY must be accepted (h2spec expects the connection to be closed)")
def _(c):
    c.goaway(0, NO_ERROR, b"h2spec")
    return verify_connection_close(c)


@case("generic/3.9/1", "Sends a WINDOW_UPDATE frame with stream ID 0", "RFC9113 6.9")
def _(c):
    c.window_update(0, 1)
    c.ping()
    return verify_frame(c, lambda e: e.is_frame(PING), "PING frame")


@case("generic/3.9/2", "Sends a WINDOW_UPDATE frame with stream ID 1", "RFC9113 6.9")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True)
    c.window_update(1, 1)
    return verify_headers(c)


@case("generic/3.10/1", "Sends a CONTINUATION frame", "RFC9113 6.10")
def _(c):
    h = grpc_headers()
    blk = c.encode(h[:3])
    blk2 = c.encode(h[3:])
    c.headers(1, None, end_stream=True, end_headers=False, block=blk)
    c.continuation(1, blk2, True)
    return verify_headers(c)


@case("generic/3.10/2", "Sends multiple CONTINUATION frames", "RFC9113 6.10")
def _(c):
    h = grpc_headers()
    c.headers(1, None, end_stream=True, end_headers=False, block=c.encode(h[:2]))
    c.continuation(1, c.encode(h[2:4]), False)
    c.continuation(1, c.encode(h[4:]), True)
    return verify_headers(c)


@case("generic/4/1", "Sends a GET request", "RFC9113 8.1: the server responds on the same stream")
def _(c):
    c.headers(1, plain_headers("GET"), end_stream=True)
    return verify_headers(c)


@case("generic/4/2", "Sends a HEAD request", "RFC9113 8.1")
def _(c):
    c.headers(1, plain_headers("HEAD"), end_stream=True)
    return verify_headers(c)


@case("generic/4/3", "Sends a POST request", "RFC9113 8.1")
def _(c):
    c.headers(1, plain_headers("POST"), end_stream=False)
    c.data(1, b"test", True)
    return verify_headers(c)


@case("generic/4/4", "Sends a POST request with trailers", "RFC9113 8.1")
def _(c):
    c.headers(1, plain_headers("POST") + [("trailer", "x-test")], end_stream=False)
    c.data(1, b"test", False)
    c.headers(1, [("x-test", "ok")], end_stream=True)
    return verify_headers(c)


@case("generic/4/5", "(extra) Sends a real gRPC unary call", "server must answer 200 + DATA + trailers grpc-status 0")
def _(c):
    grpc_request(c)
    r = verify_frame(c, lambda e: e.is_frame(HEADERS) and e.flags & F_ES, "trailers HEADERS(ES) grpc-status=0")
    if r.ok:
        tr = [e for e in c.events if e.is_frame(HEADERS) and e.flags & F_ES][-1]
        r.ok = ("grpc-status", "0") in (tr.headers or [])
    return r


HP = [
    ("1", "Sends a indexed header field representation", b"\xba"),
    ("2", "Sends a literal header field with incremental indexing - indexed name", b"\x40\x87\xb5\x05\xb1\x61\xcc\x5a\x93\x84\x9c\x48\xac\xa4"),
    ("3", "Sends a literal header field with incremental indexing - indexed name (with Huffman coding)", b"\x40\x0a\x75\x73\x65\x72\x2d\x61\x67\x65\x6e\x74\x06\x68\x32\x73\x70\x65\x63"),
    ("4", "Sends a literal header field with incremental indexing - new name", b"\x40\x06\x78\x2d\x74\x65\x73\x74\x06\x68\x32\x73\x70\x65\x63"),
    ("5", "Sends a literal header field with incremental indexing - new name (with Huffman coding)", b"\x40\x85\xf2\xb2\x4a\x84\xff\x84\x9c\x48\xac\xa4"),
    ("6", "Sends a literal header field without indexing - indexed name", b"\x00\x0a\x75\x73\x65\x72\x2d\x61\x67\x65\x6e\x74\x06\x68\x32\x73\x70\x65\x63"),
    ("7", "Sends a literal header field without indexing - indexed name (with Huffman coding)", b"\x00\x87\xb5\x05\xb1\x61\xcc\x5a\x93\x84\x9c\x48\xac\xa4"),
    ("8", "Sends a literal header field without indexing - new name", b"\x00\x06\x78\x2d\x74\x65\x73\x74\x06\x68\x32\x73\x70\x65\x63"),
    ("9", "Sends a literal header field without indexing - new name (huffman encoded)", b"\x00\x85\xf2\xb2\x4a\x84\xff\x84\x9c\x48\xac\xa4"),
    ("10", "Sends a literal header field never indexed - indexed name", b"\x10\x0a\x75\x73\x65\x72\x2d\x61\x67\x65\x6e\x74\x06\x68\x32\x73\x70\x65\x63"),
    ("11", "Sends a literal header field never indexed - indexed name (huffman encoded)", b"\x10\x87\xb5\x05\xb1\x61\xcc\x5a\x93\x84\x9c\x48\xac\xa4"),
    ("12", "Sends a literal header field never indexed - new name", b"\x10\x06\x78\x2d\x74\x65\x73\x74\x06\x68\x32\x73\x70\x65\x63"),
    ("13", "Sends a literal header field never indexed - new name (huffman encoded)", b"\x10\x85\xf2\xb2\x4a\x84\xff\x84\x9c\x48\xac\xa4"),
]
for _n, _d, _rep in HP:
    def _mk(rep):
        def fn(c):
            hpack_append(c, rep)
            return verify_headers(c)
        return fn
    case("generic/5/" + _n, _d, "RFC7541 6.1/6.2: the endpoint MUST accept this representation")(_mk(_rep))


@case("generic/5/14", "Sends a dynamic table size update", "RFC7541 6.3")
def _(c):
    hpack_append(c, b"\x20", prepend=True)
    return verify_headers(c)


@case("generic/5/15", "Sends multiple dynamic table size update", "RFC7541 4.2: up to two updates at the start of a block")
def _(c):
    hpack_append(c, b"\x20\x3f\xe1\x1f", prepend=True)
    return verify_headers(c)


# ======================================================== extra robustness cases (not in h2spec)
@case("extra/hpack-int-overflow", "(extra) Indexed field whose integer never terminates / overflows",
      "RFC7541 5.1: integer encodings that exceed implementation limits MUST be treated as decoding errors")
def _(c):
    hpack_append(c, b"\xff" + b"\xff" * 10 + b"\x01")
    return verify_connection_error(c, COMPRESSION_ERROR)


@case("extra/hpack-string-overrun", "(extra) Literal whose string length runs past the end of the block",
      "RFC7541 / RFC9113 4.3: decoding error -> connection error COMPRESSION_ERROR")
def _(c):
    hpack_append(c, b"\x00\x7f\xff\x07abc")
    return verify_connection_error(c, COMPRESSION_ERROR)


@case("extra/hpack-encoder-size-update", "(extra) Client lowers SETTINGS_HEADER_TABLE_SIZE to 0; server's next block must start with a size update",
      "RFC7541 4.2: the encoder MUST signal the reduced maximum with a dynamic table size update at the start of the next block")
def _(c):
    handshake_settings_ack(c, [(S_HEADER_TABLE_SIZE, 0)])
    c.headers(1, grpc_headers(), end_stream=True)
    r = verify_headers(c)
    if r.ok:
        h = [e for e in c.events if e.is_frame(HEADERS)][0]
        p = h.payload
        if h.flags & F_PADDED:
            p = p[1:]
        if h.flags & F_PRIO:
            p = p[5:]
        r.ok = len(p) > 0 and (p[0] & 0xe0) == 0x20
        r.observed += " first block byte=0x%02x" % (p[0] if p else 0)
    return r


@case("extra/header-list-too-large", "(extra) Header list of ~24 KB (over the advertised MAX_HEADER_LIST_SIZE) via CONTINUATION",
      "RFC9113 6.5.2/8.2: the server may refuse (431, RST_STREAM or GOAWAY) but must stay sane; it must answer or reset the stream")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True, end_headers=False)
    c.continuation(1, c.encode(dummy_headers(3)), False)
    c.continuation(1, c.encode([("x-more%d" % i, "y" * 4000) for i in range(3)]), True)
    return verify_frame(c, lambda e: (e.is_frame(HEADERS) and e.sid == 1) or e.is_frame(RST_STREAM) or e.is_frame(GOAWAY),
                        "HEADERS(431 or any) / RST_STREAM / GOAWAY")


@case("extra/continuation-flood", "(extra) 5000 empty CONTINUATION frames without END_HEADERS",
      "robustness (CVE-2024-27316 class): the server should bound the header block and not hang; a PING afterwards is illegal mid-block so we expect GOAWAY/close")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True, end_headers=False)
    c.send(frame(CONTINUATION, 0, 1, b"") * 5000)
    c.ping()
    return verify_connection_error(c, PROTOCOL_ERROR, ENHANCE_YOUR_CALM, COMPRESSION_ERROR)


@case("extra/data-after-trailers-only-response", "(extra) Stream stays usable: two sequential requests on one connection",
      "RFC9113 5.1.1: a new stream with a higher id must be served after the previous one closed")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True)
    if not verify_stream_close(c, 1):
        return Result(False, summarize(c.events), "stream 1 closed", None)
    c.mark()
    grpc_request(c, 3)
    return verify_headers(c, 3)


def _malformed_field(name, value):
    def fn(c):
        c.headers(1, grpc_headers() + [(name, value)], end_stream=True)
        return verify_stream_error(c, PROTOCOL_ERROR)
    return fn


for _cid, _desc, _n, _v in [
        ("extra/field-value-crlf", "(extra) Field value containing CR LF", "x-test", "a\r\nb"),
        ("extra/field-value-nul", "(extra) Field value containing NUL", "x-test", "a\x00b"),
        ("extra/field-value-lead-ws", "(extra) Field value starting with a space", "x-test", " ok"),
        ("extra/field-name-space", "(extra) Field name containing a space", "x test", "ok"),
        ("extra/field-name-colon", "(extra) Regular field name containing a colon", "x:test", "ok"),
        ("extra/field-name-empty", "(extra) Empty field name", "", "ok")]:
    case(_cid, _desc, "RFC9113 8.2.1: field names MUST NOT contain 0x00-0x20/0x41-0x5a/0x7f-0xff or a colon; values MUST NOT contain "
         "NUL/CR/LF nor start/end with whitespace -> " + MALFORMED)(_malformed_field(_n, _v))


@case("extra/content-length-no-data", "(extra) content-length: 5 on a HEADERS frame with END_STREAM (no DATA)",
      "RFC9113 8.1.1: content-length not equal to the sum of DATA payload lengths -> " + MALFORMED)
def _(c):
    c.headers(1, grpc_headers() + [("content-length", "5")], end_stream=True)
    return verify_stream_error(c, PROTOCOL_ERROR)


@case("extra/headers-priority-too-short", "(extra) HEADERS with PRIORITY flag but only 3 payload octets",
      "RFC9113 4.2: a frame too small to contain mandatory frame data MUST get FRAME_SIZE_ERROR; header-block frames -> connection error (RFC9113 5.4 allows PROTOCOL_ERROR as generic code)")
def _(c):
    c.send(frame(HEADERS, F_PRIO | F_EH | F_ES, 1, b"\x00\x00\x00"))
    return verify_connection_error(c, FRAME_SIZE_ERROR, PROTOCOL_ERROR)


@case("extra/data-padded-empty", "(extra) DATA with PADDED flag and zero-length payload on an open stream",
      "RFC9113 4.2/6.1: too small for the Pad Length field -> FRAME_SIZE_ERROR (stream or connection; PROTOCOL_ERROR acceptable)")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False)
    c.send(frame(DATA, F_PADDED | F_ES, 1, b""))
    return verify_stream_error(c, FRAME_SIZE_ERROR, PROTOCOL_ERROR)


@case("extra/reserved-bit-in-headers-sid", "(extra) HEADERS whose stream id has the reserved bit set (0x80000001)",
      "RFC9113 4.1: the reserved bit MUST be ignored when receiving -> normal answer on stream 1")
def _(c):
    c.send(frame(HEADERS, F_EH | F_ES, 0x80000001, c.encode(grpc_headers())))
    return verify_headers(c)


@case("extra/window-update-after-close", "(extra) WINDOW_UPDATE on a stream the server has just closed (END_STREAM both ways)",
      "RFC9113 5.1 closed: an endpoint that sent END_STREAM might receive WINDOW_UPDATE/RST_STREAM afterwards; must be tolerated")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True)
    if not verify_stream_close(c):
        return Result(False, summarize(c.events), "stream 1 to close first", None)
    c.mark()
    c.window_update(1, 100)
    c.ping()
    r = verify_ping_ack(c)
    if _err_frames(c):
        r.ok = False
    return r


@case("extra/rst-after-close", "(extra) RST_STREAM on a stream the server has just closed",
      "RFC9113 5.1 closed: RST_STREAM after END_STREAM must be tolerated")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True)
    if not verify_stream_close(c):
        return Result(False, summarize(c.events), "stream 1 to close first", None)
    c.mark()
    c.rst(1, CANCEL)
    c.ping()
    r = verify_ping_ack(c)
    if _err_frames(c):
        r.ok = False
    return r


@case("extra/rapid-reset", "(extra) 500 streams opened and immediately reset, then PING",
      "robustness (CVE-2023-44487 class): server must keep working (PING ACK) or shed load with GOAWAY(ENHANCE_YOUR_CALM)")
def _(c):
    out = b""
    for i in range(500):
        sid = 1 + 2 * i
        out += frame(HEADERS, F_EH, sid, c.encode(grpc_headers()))
        out += frame(RST_STREAM, 0, sid, struct.pack(">I", CANCEL))
    c.send(out)
    c.ping(b"rapidrst")
    exp = "PING(ACK) or GOAWAY(ENHANCE_YOUR_CALM)"
    deadline = time.time() + c.timeout
    while True:
        ev = c.next_event(deadline)
        if ev.kind != "frame":
            return Result(False, summarize(c.events, 5), exp, None if ev.kind == "timeout" else ev.t)
        if ev.is_frame(PING) and ev.flags & F_ACK:
            return Result(True, summarize(c.events, 5), exp, ev.t)
        if ev.is_frame(GOAWAY):
            return Result(ev.code == ENHANCE_YOUR_CALM, summarize(c.events, 5), exp, ev.t)


@case("extra/goaway-then-close-with-open-stream", "(extra) Client GOAWAY(NO_ERROR,last=0) while stream 1 is in flight: stream 1 still answered",
      "RFC9113 6.8: GOAWAY does not affect streams the receiver initiated; server-side streams may complete (h2spec has no case)")
def _(c):
    c.headers(1, grpc_headers(), end_stream=False)
    c.goaway(0, NO_ERROR)
    c.data(1, GRPC_EMPTY_MSG, True)
    return verify_frame(c, lambda e: (e.is_frame(HEADERS) and e.sid == 1) or e.kind != "frame",
                        "HEADERS on stream 1 (or close)")


def hpack_sync_followup(c, sid):
    """Request on `sid` whose block references the dynamic-table entry x-sync: token
    inserted by the previous (rejected) block; everything else is a never-indexed
    literal so nothing else in the table matters."""
    blk = c.enc.encode([NeverIndexedHeaderTuple(k, v) for k, v in grpc_headers()])
    blk += c.enc.encode([("x-sync", "token")])
    c.headers(sid, None, end_stream=False, block=blk)
    c.data(sid, GRPC_EMPTY_MSG, True)
    r = verify_headers(c, sid)
    r.expected = "normal answer on stream %d (server's HPACK table still in sync)" % sid
    if r.ok and _err_frames(c):
        r.ok = False
    return r


@case("extra/hpack-sync-after-malformed", "(extra) HPACK state kept after a malformed request is reset (uppercase name), checked by a follow-up request",
      "RFC9113 4.3/8.1.1: field blocks MUST be decoded (compression state updated) even when the request is rejected")
def _(c):
    c.headers(1, grpc_headers() + [("X-TEST", "ok"), ("x-sync", "token")], end_stream=True)
    r = verify_stream_error(c, PROTOCOL_ERROR)
    first = r.observed
    c.mark()
    r2 = hpack_sync_followup(c, 3)
    r2.observed = first + " | " + r2.observed
    return r2


@case("extra/hpack-sync-after-oversized", "(extra) HPACK state kept after an oversized header list is refused, checked by a follow-up request",
      "RFC9113 4.3: every field block must be decompressed even if the stream is refused/reset; otherwise COMPRESSION_ERROR")
def _(c):
    c.headers(1, grpc_headers(), end_stream=True, end_headers=False)
    c.continuation(1, c.encode(dummy_headers(3)), False)
    c.continuation(1, c.encode([("x-more%d" % i, "y" * 4000) for i in range(3)] + [("x-sync", "token")]), True)
    r = verify_frame(c, lambda e: (e.is_frame(HEADERS) and e.sid == 1) or e.is_frame(RST_STREAM) or e.is_frame(GOAWAY),
                     "refusal of stream 1")
    first = r.observed
    if any(e.is_frame(GOAWAY) for e in c.events):
        return Result(True, first, "(connection refused as a whole)", r.t)
    c.mark()
    r2 = hpack_sync_followup(c, 3)
    r2.observed = first + " | " + r2.observed
    return r2


# ---------------------------------------------------------------- runner
def main():
    global TIMEOUT
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--timeout", type=float, default=TIMEOUT)
    ap.add_argument("--only", default="")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    TIMEOUT = a.timeout

    npass = nfail = 0
    slow = []
    t_start = time.time()
    for cid, desc, req, fn in CASES:
        if a.only and not any(cid.startswith(p) for p in a.only.split(",")):
            continue
        try:
            c = Conn(a.host, a.port, a.timeout)
        except OSError as e:
            print("FAIL  %-22s %s\n      SERVER UNREACHABLE: %s" % (cid, desc, e))
            nfail += 1
            continue
        try:
            no_handshake = cid in ("http2/3.5/1", "http2/3.5/2", "generic/1/1")
            if not no_handshake:
                c.handshake()
            r = fn(c)
        except Exception as e:  # noqa
            r = Result(False, summarize(getattr(c, "events", [])), "(case ran)", None,
                       "exception: %s: %s" % (type(e).__name__, e))
        finally:
            c.close()
        ok = r.ok
        tag = "PASS" if ok else "FAIL"
        if ok:
            npass += 1
        else:
            nfail += 1
        ts = "%.3fs" % r.t if r.t is not None else "no reaction within %.1fs" % a.timeout
        if r.t is not None and r.t > SLOW:
            slow.append((cid, r.t))
        print("%s  %-22s %s" % (tag, cid, desc))
        if not ok or a.verbose:
            print("      requirement: %s" % req)
            print("      expected:    %s" % r.expected)
        print("      observed:    %s [%s]%s" % (r.observed, ts, ("  (" + r.note + ")") if r.note else ""))
        sys.stdout.flush()

    # liveness after everything
    alive = "yes"
    try:
        c = Conn(a.host, a.port, a.timeout)
        c.handshake()
        grpc_request(c)
        r = verify_headers(c)
        alive = "yes (%s)" % r.observed if r.ok else "NO: " + r.observed
        c.close()
    except Exception as e:  # noqa
        alive = "NO: %s" % e
    print()
    print("TOTAL: %d passed, %d failed (%d cases) in %.1fs" % (npass, nfail, npass + nfail, time.time() - t_start))
    print("server alive after run: %s" % alive)
    if slow:
        print("slow reactions (>%.0fs): %s" % (SLOW, ", ".join("%s %.2fs" % s for s in slow)))
    return 0 if nfail == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

"""HTTP/2 as Python's `h2` (python-hyper) speaks it, over plain TCP (h2c, prior knowledge):
the independent peer for HTTP2SocketInteropTests.

  h2_peer.py server            listens on 127.0.0.1, prints its port, and answers every
                               request with :status 200, the request body reversed, and
                               trailers `x-length: <n>`; stops when stdin closes.
  h2_peer.py client PORT JOB   sends the requests in JOB (a JSON file: [{"path", "body"
                               (hex)}]) concurrently on one connection and prints
                               [{"status", "body" (hex), "trailers"}] in request order.
Flow control is honoured both ways: sends wait for WINDOW_UPDATE, received data is
acknowledged as it is consumed."""
import json
import socket
import sys
import threading

import h2.config
import h2.connection
import h2.events


class Sender:
    """Sends bodies as the peer's windows allow."""

    def __init__(self, conn):
        self.conn = conn
        self.pending = {}  # stream -> [bytes, trailers or None]

    def queue(self, stream, data, trailers=None, end=True):
        self.pending[stream] = [data, trailers, end]
        self.pump()

    def pump(self):
        for stream in list(self.pending):
            data, trailers, end = self.pending[stream]
            while data:
                window = min(self.conn.local_flow_control_window(stream), self.conn.max_outbound_frame_size)
                if window <= 0:
                    break
                chunk, data = data[:window], data[window:]
                self.conn.send_data(stream, chunk)
            self.pending[stream][0] = data
            if not data:
                del self.pending[stream]
                if trailers is not None:
                    self.conn.send_headers(stream, trailers, end_stream=True)
                elif end:
                    self.conn.end_stream(stream)


def serve_connection(sock):
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    sender = Sender(conn)
    bodies = {}
    while True:
        data = sock.recv(65536)
        if not data:
            return
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.RequestReceived):
                bodies[event.stream_id] = b""
            elif isinstance(event, h2.events.DataReceived):
                bodies[event.stream_id] = bodies.get(event.stream_id, b"") + event.data
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                body = bodies.pop(event.stream_id, b"")
                conn.send_headers(event.stream_id, [(":status", "200"), ("content-type", "application/octet-stream")])
                sender.queue(event.stream_id, body[::-1], trailers=[("x-length", str(len(body)))])
            elif isinstance(event, h2.events.WindowUpdated):
                sender.pump()
            elif isinstance(event, h2.events.ConnectionTerminated):
                sock.sendall(conn.data_to_send())
                return
        sock.sendall(conn.data_to_send())


def server():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)

    def accept():
        while True:
            try:
                sock, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve_connection, args=(sock,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()
    listener.close()


def client(port, job_path):
    with open(job_path) as f:
        job = json.load(f)
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    sender = Sender(conn)
    streams = []
    for request in job:
        stream = conn.get_next_available_stream_id()
        conn.send_headers(stream, [(":method", "POST"), (":scheme", "http"), (":authority", "127.0.0.1"),
                                   (":path", request["path"]), ("content-type", "application/octet-stream")])
        sender.queue(stream, bytes.fromhex(request["body"]))
        streams.append(stream)
    sock.sendall(conn.data_to_send())
    results = {s: {"status": None, "body": b"", "trailers": {}} for s in streams}
    done = set()
    while len(done) < len(streams):
        data = sock.recv(65536)
        if not data:
            break
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                results[event.stream_id]["status"] = dict(event.headers)[":status"]
            elif isinstance(event, h2.events.DataReceived):
                results[event.stream_id]["body"] += event.data
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.TrailersReceived):
                results[event.stream_id]["trailers"] = dict(event.headers)
            elif isinstance(event, h2.events.StreamEnded):
                done.add(event.stream_id)
            elif isinstance(event, h2.events.StreamReset):
                results[event.stream_id]["status"] = "reset %d" % event.error_code
                done.add(event.stream_id)
            elif isinstance(event, h2.events.WindowUpdated):
                sender.pump()
        sock.sendall(conn.data_to_send())
    conn.close_connection()
    sock.sendall(conn.data_to_send())
    sock.close()
    print(json.dumps([{"status": results[s]["status"], "body": results[s]["body"].hex(),
                       "trailers": results[s]["trailers"]} for s in streams]))


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server()
    else:
        client(int(sys.argv[2]), sys.argv[3])

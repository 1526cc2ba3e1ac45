"""A TLS server that agrees on no ALPN protocol (as an HTTP/1.1-only endpoint would).
usage: tls_no_alpn_server.py CERT KEY. Prints its port, then, for the first connection,
"PREFACE" if the client sent the HTTP/2 connection preface anyway or "NO PREFACE"."""
import socket
import ssl
import sys

context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1], sys.argv[2])
listener = socket.create_server(("127.0.0.1", 0))
print(listener.getsockname()[1], flush=True)
listener.settimeout(30)
raw, _ = listener.accept()
raw.settimeout(5)
received = b""
try:
    with context.wrap_socket(raw, server_side=True) as tls:
        while len(received) < 24:
            chunk = tls.recv(24 - len(received))
            if not chunk:
                break
            received += chunk
except (OSError, ssl.SSLError):
    pass
print("PREFACE" if received.startswith(b"PRI * HTTP/2.0") else "NO PREFACE", flush=True)

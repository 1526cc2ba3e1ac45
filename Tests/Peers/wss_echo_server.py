"""A TLS WebSocket echo server (Python ssl + websockets) for the TLS tests.
usage: wss_echo_server.py CERT KEY [tls12]. Prints its port, then "SNI <name>" for each handshake
and "ALPN <protocol>", "VERSION <TLS version>" and "RESUMED True|False" (a resumed TLS session)
for each connection."""
import asyncio
import ssl
import sys

from websockets.asyncio.server import serve


async def echo(connection):
    tls = connection.transport.get_extra_info("ssl_object")
    print("ALPN", tls.selected_alpn_protocol(), flush=True)
    print("VERSION", tls.version(), flush=True)
    print("RESUMED", tls.session_reused, flush=True)
    async for message in connection:
        await connection.send(message)


def remember_sni(sock, name, context):
    print("SNI", name, flush=True)


async def main():
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[1], sys.argv[2])
    if sys.argv[3:] == ["tls12"]:
        context.maximum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["http/1.1"])
    context.sni_callback = remember_sni
    async with serve(echo, "127.0.0.1", 0, ssl=context, compression=None) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        try:
            await asyncio.wait_for(reader.read(), timeout=120)
        except asyncio.TimeoutError:
            pass


asyncio.run(main())

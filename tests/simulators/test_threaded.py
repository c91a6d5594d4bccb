"""bind_socket: the simulators' listening sockets. asyncio disables Nagle's algorithm only on
connections whose socket says TCP; a simulator reply written in two parts otherwise waited ~44 ms for
the client's delayed ACK (bench/simulator_rtt.py measures both)."""

from __future__ import annotations

import asyncio
import socket

from simulators._threaded import bind_socket


def test_bound_sockets_say_tcp():
    with bind_socket() as sock:
        assert sock.proto == socket.IPPROTO_TCP


def test_connections_accepted_on_them_have_nagle_off():
    async def accepted_nodelay() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            seen.set_result(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=bind_socket())
        host, port = server.sockets[0].getsockname()[:2]
        async with server:
            _, writer = await asyncio.open_connection(host, port)
            try:
                return await asyncio.wait_for(seen, 10)
            finally:
                writer.close()

    assert asyncio.run(accepted_nodelay()) != 0

"""The throwaway servers' ports (controller.floor.local): a port is only free when picked, and another
program may bind it before the server does. The server must then not pass for started because
*something* accepts on its port (CI: the floor demo's nats-server exited "address already in use" while
its recorder, uplink and alert service retried for ever against another program's port, and the demo
waited out its 120 s for the floor to catch up)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from controller.floor.local import NatsServer, Postgres


@contextmanager
def _taken(port: int) -> Iterator[None]:
    """Another program listening on 127.0.0.1:``port`` (as another test's server or daemon would)."""
    with socket.socket() as other:
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        other.bind(("127.0.0.1", port))
        other.listen()
        yield


def test_a_nats_server_whose_port_was_taken_starts_on_another_and_a_restart_keeps_its_own() -> None:
    server = NatsServer()
    try:
        picked = server.port
        with _taken(picked):
            server.start()
            assert server.port != picked and server.url.endswith(f":{server.port}")
            assert server.proc is not None and server.proc.poll() is None
            assert "Server is ready" in server.log()
        server.kill()
        with _taken(server.port), pytest.raises(TimeoutError, match="taken by another program"):
            server.start()  # its clients know its port: a restart does not move it
        server.start()
        assert server.proc is not None and server.proc.poll() is None
    finally:
        server.remove()


def test_a_postgres_whose_port_was_taken_starts_on_another() -> None:
    server = Postgres()
    try:
        picked = server.port
        with _taken(picked):
            server.start()
        assert server.port != picked and f":{server.port}/" in server.dsn
        assert server.proc is not None and server.proc.poll() is None
    finally:
        server.remove()

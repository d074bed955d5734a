"""The floor tests' servers as fixtures (a plugin of tests/conftest.py, so that one PostgreSQL cluster
serves a whole session): real nats-server and PostgreSQL processes, never mocks.

``initdb`` costs seconds per cluster, so the session makes one cluster (per xdist worker) and each test
gets a fresh database in it (``postgres``): its own tables, migrations and rows, nothing shared with
another test. A test that stops or crashes PostgreSQL, or changes what is cluster-wide (roles), takes
``own_postgres``: a cluster of its own, as before. docs/testing.md lists them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import psycopg
import pytest

from controller.floor.local import NatsServer, Postgres, ServerMissing

Server = TypeVar("Server", NatsServer, Postgres)

#: Database names unique within a session's cluster (one cluster per process).
_numbers = itertools.count(1)


def serve(make: Callable[[], Server]) -> Iterator[Server]:
    """A fixture's body: the server made, started, then stopped and removed even if the test failed.
    A missing server fails the test with the packages to install (never a skip)."""
    try:
        server = make()
    except ServerMissing as exc:
        pytest.fail(f"{exc}: run `make test` as root, or install them")
    try:
        yield server.start()
    finally:
        server.remove()


@dataclass(frozen=True)
class FloorDatabase:
    """One fresh database of the session's PostgreSQL cluster: all a floor test that does not stop the
    server needs (where to connect)."""

    cluster: Postgres
    name: str

    @property
    def dsn(self) -> str:
        return f"{self.cluster.dsn.rsplit('/', 1)[0]}/{self.name}"


@pytest.fixture
def nats_server() -> Iterator[NatsServer]:
    yield from serve(NatsServer)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Postgres]:
    """The session's cluster; tests use :func:`postgres` (a database in it), never it directly."""
    yield from serve(Postgres)


@pytest.fixture
def postgres(postgres_cluster: Postgres) -> Iterator[FloorDatabase]:
    """A database created empty for this test (from template0) and dropped after it, connections and all."""
    database = FloorDatabase(postgres_cluster, f"floor_{next(_numbers)}")
    with psycopg.connect(postgres_cluster.dsn, autocommit=True, connect_timeout=10) as admin:
        admin.execute(f"CREATE DATABASE {database.name} TEMPLATE template0")
    try:
        yield database
    finally:
        with psycopg.connect(postgres_cluster.dsn, autocommit=True, connect_timeout=10) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {database.name} WITH (FORCE)")


@pytest.fixture
def own_postgres() -> Iterator[Postgres]:
    """A cluster of this test's own: for a test that stops or crashes the server, or creates roles."""
    yield from serve(Postgres)

"""The floor's history on a PostgreSQL primary with a streaming hot-standby replica: the recorder
writes the primary, and `croupier floor recall` reads the same rounds from the replica."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from floor_support import own_postgres, query, serve, wait_for  # noqa: F401 (fixture)
from test_daemon_support import baccarat_play, config_for
from test_floor_recall_games import to_the_floor
from test_floor_uplink import write_journal

from controller.cli import main as cli_main
from controller.floor.local import Postgres, Replica

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def replica(own_postgres: Postgres) -> Iterator[Replica]:  # noqa: F811
    """The primary is a cluster of this test's own: a replica copies and follows a whole cluster."""
    yield from serve(lambda: Replica(own_postgres))


def recall(capsys: pytest.CaptureFixture[str], table: str, dsn: str) -> list[dict[str, object]]:
    assert cli_main(["floor", "recall", table, "--last", "10", "--json", "--db", dsn]) == 0
    return list(json.loads(capsys.readouterr().out)["rounds"])


def test_rows_recorded_through_the_primary_are_recalled_from_the_replica(
        tmp_path: Path, own_postgres: Postgres, replica: Replica,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    postgres = own_postgres
    config = config_for(tmp_path, name="replicated")
    inputs, _ = baccarat_play(3, seed=11)
    write_journal(config, inputs)
    to_the_floor(config, postgres.dsn)  # the recorder's own transaction, on the primary
    wait_for("the replica replayed the primary's rows",
             lambda: query(replica.dsn, "SELECT MAX(recorded_row) FROM tables WHERE table_id = %s",
                           "replicated") == [(len(inputs),)], 20)
    assert query(replica.dsn, "SELECT pg_is_in_recovery()") == [(True,)]
    on_primary = recall(capsys, "replicated", postgres.dsn)
    assert len(on_primary) == 3
    assert recall(capsys, "replicated", replica.dsn) == on_primary
    with psycopg.connect(replica.dsn) as conn, pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        conn.execute("DELETE FROM rounds")  # a reader there cannot change the history

    # One URL naming both servers (docs/floor.md): libpq picks the standby for readers, the
    # primary for the recorder, whichever host is listed first.
    hosts = f"postgresql://croupier@127.0.0.1:{postgres.port},127.0.0.1:{replica.port}/postgres"
    assert query(f"{hosts}?target_session_attrs=prefer-standby", "SELECT pg_is_in_recovery()") == [(True,)]
    assert query(f"{hosts}?target_session_attrs=read-write", "SELECT pg_is_in_recovery()") == [(False,)]
    assert recall(capsys, "replicated", f"{hosts}?target_session_attrs=prefer-standby") == on_primary

"""``croupier floor tables`` shows a daemon that stopped while its uplink runs (and beats: online).

The uplink relays its daemon's liveness in its heartbeats (controller/floor/daemon_watch.py); the
alert service turns ``"daemon": "stopped"`` into an open ``daemon_stopped`` alert and clears it when
the daemon is back. ``floor tables`` reads that alert: a real PostgreSQL database, the recorder's
schema, the alert service's own rules and writes, the command as the operator runs it.
"""

from __future__ import annotations

import json
import time
from typing import Any

import psycopg
import pytest

from controller.cli import main as cli_main
from controller.floor.alerting.rules import Pit
from controller.floor.alerting.service import _write
from controller.floor.schema import migrate
from tests.floor_support import postgres  # noqa: F401 (fixture)
from tests.server_fixtures import FloorDatabase

STOPPED = 1_764_650_000.5  # the table's clock when its uplink saw the daemon stop


def floor_tables(capsys: pytest.CaptureFixture[str], dsn: str) -> tuple[dict[str, Any], str]:
    """``floor tables --json`` (the one table) and ``floor tables``'s line for it."""
    assert cli_main(["floor", "tables", "--json", "--db", dsn]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert cli_main(["floor", "tables", "--db", dsn]) == 0
    return listed, capsys.readouterr().out.splitlines()[1]


def test_floor_tables_shows_the_daemon_stopped_behind_an_uplink_still_online(
        capsys: pytest.CaptureFixture[str], postgres: FloorDatabase) -> None:  # noqa: F811
    pit = Pit()
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        migrate(conn)
        conn.execute("INSERT INTO tables (table_id, journal_id, game, options, currency, recorded_row, "
                     "journal_rows, heartbeat_at, online_since) VALUES ('b1', 'j1', 'baccarat', '{}', "
                     """'{"code": "EUR", "minor_units": 2}', 7, 7, now(), now())""")
        beat = {"table": "b1", "journal": "j1", "journal_rows": 7, "acked": 7}
        for action in pit.alive({**beat, "daemon": "stopped", "daemon_at": STOPPED}, time.time()):
            _write(conn, action)
        stopped, line = floor_tables(capsys, postgres.dsn)
        assert stopped["online"] is True and stopped["daemon_stopped_since"] == STOPPED
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(STOPPED))
        assert " online since " in line and line.endswith(f"j1  DAEMON STOPPED since {when}"), line
        for action in pit.alive({**beat, "daemon": "alive"}, time.time()):
            _write(conn, action)
        alive, line = floor_tables(capsys, postgres.dsn)
        assert alive["online"] is True and alive["daemon_stopped_since"] is None
        assert line.endswith(" j1"), line

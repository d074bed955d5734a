"""A ``conflicting_rows`` alert a person has settled clears, and a later conflict of its journal is raised.

The alert is not cleared by itself: the floor cannot know which history is the table's. A person compares
the Pis' journals and settles the journal (``croupier floor conflicts --settle``, or removes its rows from
``conflicts`` by hand: docs/floor.md, "A row sent again with another body"). The alert service raised the
alert while ``conflicts`` held rows and never cleared it: it stayed open on the board for ever, and since one
alert a journal is open at a time, a new conflict of that journal later was never raised again (a review of
2026-12-07's change)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from floor_support import Proc, nats_server, postgres, query, wait_for  # noqa: F401 (fixtures)
from test_floor_conflicting_rows import J, T, body, publish, recorded_three

from controller.floor.local import NatsServer
from tests.server_fixtures import FloorDatabase

pytestmark = pytest.mark.timeout(120)


def _alerts(dsn: str) -> list[tuple[object, ...]]:
    return query(dsn, "SELECT key, cleared_at IS NOT NULL, data FROM alerts WHERE kind = 'conflicting_rows' "
                      "ORDER BY raised_at")


def test_a_settled_conflicting_rows_alert_clears_and_a_later_conflict_is_raised_again(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase) -> None:  # noqa: F811
    rec, alerts = recorded_three(tmp_path, nats_server.url, postgres.dsn)
    try:
        publish(nats_server.url, [(2, body(2, input={"input": "card", "card": "QS"}))])
        wait_for("the alert", lambda: _alerts(postgres.dsn) == [(J, False, {"first_row": 2, "rows": 1})],
                 60, alerts, rec)
        settle = subprocess.run([sys.executable, "-m", "controller.cli", "floor", "conflicts", T, "--settle",
                                 J, "--reason", "checked", "--db", postgres.dsn], capture_output=True,
                                text=True, timeout=60)
        assert settle.returncode == 0, settle.stderr  # settled by a person: marked, the row kept
        wait_for("the alert cleared", lambda: _alerts(postgres.dsn) == [
            (J, True, {"first_row": 2, "rows": 1})], 20, alerts, rec)
        time.sleep(1.5)
        publish(nats_server.url, [(3, body(3, input={"input": "card", "card": "2C"}))])  # a new one
        wait_for("the new conflict raised", lambda: _alerts(postgres.dsn) == [
            (J, True, {"first_row": 2, "rows": 1}), (J, False, {"first_row": 3, "rows": 1})], 20, alerts, rec)
        with psycopg.connect(postgres.dsn) as conn:
            conn.execute("DELETE FROM conflicts")  # removed by hand in SQL: the alert clears the same
        wait_for("the alert cleared", lambda: [c for _, c, _ in _alerts(postgres.dsn)] == [True, True], 20,
                 alerts, rec)
    finally:
        assert alerts.stop() == 0, alerts.text()
        assert rec.stop() == 0, rec.text()

"""The alerts table as the alert service and the pit board write it: one open alert per cause,
acknowledged once by name (a second acknowledgement returns the first), cleared, each change in the
significant-event log."""

from __future__ import annotations

import psycopg
import pytest
from floor_support import postgres  # noqa: F401 (fixture)
from server_fixtures import FloorDatabase

from controller.floor import alerts, eventlog
from controller.floor.schema import migrate

pytestmark = pytest.mark.timeout(60)


def test_an_alert_is_raised_once_acknowledged_once_and_cleared(postgres: FloorDatabase) -> None:  # noqa: F811
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        first = alerts.raise_alert(conn, table_id="bac1", kind="device_offline", key="shoe",
                                   severity="critical", detail="shoe offline", cause_at=12.5)
        assert first is not None and first.state == "raised"
        assert alerts.raise_alert(conn, table_id="bac1", kind="device_offline", key="shoe",
                                  severity="critical", detail="shoe offline again") is None
        other = alerts.raise_alert(conn, table_id="bac1", kind="device_offline", key="camera",
                                   severity="critical", detail="camera offline")
        assert other is not None and other.id != first.id
        acked = alerts.acknowledge(conn, first.id, "pit boss Ann")
        assert acked is not None and acked.state == "acknowledged" and acked.acked_by == "pit boss Ann"
        again = alerts.acknowledge(conn, first.id, "someone else")
        assert again == acked  # the original answer
        assert alerts.acknowledge(conn, 999_999, "Ann") is None
        with pytest.raises(ValueError, match="names the operator"):
            alerts.acknowledge(conn, first.id, "")
        cleared = alerts.clear_alert(conn, table_id="bac1", kind="device_offline", key="shoe")
        assert cleared is not None and cleared.state == "cleared"
        assert cleared.message()["acked_by"] == "pit boss Ann"
        assert alerts.clear_alert(conn, table_id="bac1", kind="device_offline", key="shoe") is None
        assert [a.key for a in alerts.open_alerts(conn, "bac1")] == ["camera"]
        reraised = alerts.raise_alert(conn, table_id="bac1", kind="device_offline", key="shoe",
                                      severity="critical", detail="shoe offline")
        assert reraised is not None and reraised.id > other.id  # a cause that returns is a new alert
        assert [a.id for a in alerts.recent(conn, "bac1")] == [reraised.id, other.id, first.id]
        kinds = [k for (k,) in conn.execute("SELECT kind FROM event_log ORDER BY id").fetchall()]
        assert kinds == ["alert_raised", "alert_raised", "alert_acknowledged", "alert_cleared",
                         "alert_raised"]
        assert eventlog.verify(conn).intact
        assert alerts.subject("bac1") == "croupier.alerts.bac1"

"""The pit's alerts as stored and published: raised once per cause, acknowledged by name, cleared.

One module owns the ``alerts`` table (migration 0004) so that the alert service (which raises and
clears) and the pit board (which acknowledges) write it the same way. Every change of an alert is
also appended to the significant-event log in the same transaction, and its new state is what the
caller publishes on ``croupier.alerts.<table>`` (:func:`subject`, :meth:`Alert.message`).

A cause that persists is one alert: raising an alert whose table, kind and key already have an open
one returns None and changes nothing (the partial unique index ``alerts_open`` decides, so two
alert services at once still raise it once). Acknowledging twice keeps the first acknowledgement
and returns it: a resend gets the original answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Literal

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from controller.floor import eventlog

Severity = Literal["critical", "warning"]
#: Where alerts are published (core NATS; the history is in PostgreSQL).
SUBJECTS: Final = "croupier.alerts.>"
_COLUMNS: Final = ("id, table_id, kind, key, severity, detail, data, cause_at, raised_at, acked_at, "
                   "acked_by, cleared_at")


def subject(table_id: str) -> str:
    """The subject an alert of ``table_id`` is published on."""
    return f"croupier.alerts.{table_id}"


@dataclass(frozen=True, slots=True)
class Alert:
    """One row of ``alerts``."""

    id: int
    table_id: str
    kind: str
    key: str
    severity: str
    detail: str
    data: dict[str, Any]
    cause_at: float | None
    raised_at: datetime
    acked_at: datetime | None
    acked_by: str | None
    cleared_at: datetime | None

    @property
    def state(self) -> str:
        """raised, acknowledged or cleared (cleared wins: an acknowledged alert may clear)."""
        if self.cleared_at is not None:
            return "cleared"
        return "raised" if self.acked_at is None else "acknowledged"

    def message(self) -> dict[str, Any]:
        """The JSON body published on :func:`subject` (docs/floor.md, "Alerts")."""
        def iso(t: datetime | None) -> str | None:
            return None if t is None else t.isoformat(timespec="milliseconds")
        return {"alert": self.id, "table": self.table_id, "kind": self.kind, "key": self.key,
                "severity": self.severity, "state": self.state, "detail": self.detail,
                "data": self.data, "cause_at": self.cause_at, "raised_at": iso(self.raised_at),
                "acked_at": iso(self.acked_at), "acked_by": self.acked_by,
                "cleared_at": iso(self.cleared_at)}


def _log(cur: psycopg.Cursor[Any], alert: Alert, change: str) -> None:
    eventlog.append(cur, table_id=alert.table_id, kind=f"alert_{change}",
                    origin=f"alert:{alert.id}:{change}", body=alert.message())


def raise_alert(conn: psycopg.Connection[Any], *, table_id: str, kind: str, severity: Severity,
                detail: str, key: str = "", data: Mapping[str, Any] | None = None,
                cause_at: float | None = None) -> Alert | None:
    """Open an alert; None if one of this table, kind and key is open already."""
    with conn.transaction(), conn.cursor(row_factory=class_row(Alert)) as cur:
        cur.execute(
            f"INSERT INTO alerts (table_id, kind, key, severity, detail, data, cause_at) "
            f"VALUES (%s, %s, %s, %s, %s, %s, %s) "
            f"ON CONFLICT (table_id, kind, key) WHERE cleared_at IS NULL DO NOTHING RETURNING {_COLUMNS}",
            (table_id, kind, key, severity, detail, Jsonb(dict(data or {})), cause_at))
        alert = cur.fetchone()
        if alert is not None:
            _log(cur, alert, "raised")
        return alert


def clear_alert(conn: psycopg.Connection[Any], *, table_id: str, kind: str, key: str = "") -> Alert | None:
    """Close the open alert of this table, kind and key; None if there is none."""
    with conn.transaction(), conn.cursor(row_factory=class_row(Alert)) as cur:
        cur.execute(f"UPDATE alerts SET cleared_at = now() WHERE table_id = %s AND kind = %s AND key = %s "
                    f"AND cleared_at IS NULL RETURNING {_COLUMNS}", (table_id, kind, key))
        alert = cur.fetchone()
        if alert is not None:
            _log(cur, alert, "cleared")
        return alert


def acknowledge(conn: psycopg.Connection[Any], alert_id: int, by: str) -> Alert | None:
    """Record that ``by`` (an authenticated operator) saw the alert; None if there is no such alert.

    An alert acknowledged before keeps its first acknowledgement, which is returned unchanged.
    """
    if not by:
        raise ValueError("an acknowledgement names the operator who gives it")
    with conn.transaction(), conn.cursor(row_factory=class_row(Alert)) as cur:
        cur.execute(f"UPDATE alerts SET acked_at = now(), acked_by = %s WHERE id = %s AND acked_at IS NULL "
                    f"RETURNING {_COLUMNS}", (by, alert_id))
        alert = cur.fetchone()
        if alert is not None:
            _log(cur, alert, "acknowledged")
            return alert
        cur.execute(f"SELECT {_COLUMNS} FROM alerts WHERE id = %s", (alert_id,))
        return cur.fetchone()


def open_alerts(conn: psycopg.Connection[Any], table_id: str | None = None) -> list[Alert]:
    """Every alert not yet cleared (of one table, or of all), oldest first."""
    with conn.cursor(row_factory=class_row(Alert)) as cur:
        cur.execute(f"SELECT {_COLUMNS} FROM alerts WHERE cleared_at IS NULL "
                    f"AND (%(t)s::text IS NULL OR table_id = %(t)s) ORDER BY id", {"t": table_id})
        found = cur.fetchall()
    conn.commit()
    return found


def recent(conn: psycopg.Connection[Any], table_id: str, limit: int = 50) -> list[Alert]:
    """A table's newest alerts, cleared ones included, newest first."""
    with conn.cursor(row_factory=class_row(Alert)) as cur:
        cur.execute(f"SELECT {_COLUMNS} FROM alerts WHERE table_id = %s ORDER BY raised_at DESC, id DESC "
                    f"LIMIT %s", (table_id, limit))
        found = cur.fetchall()
    conn.commit()
    return found

"""Shared set-up for the alert service's end-to-end tests (no tests here): ``croupier floor alerts``
started as its own process, its alerts read from PostgreSQL and waited for, and a Baccarat table on a
simulated shoe for it to watch (tests/test_floor_alerting*.py, tests/pitboard_browser_support.py)."""

from __future__ import annotations

from pathlib import Path

from floor_support import Proc, query, wait_for
from test_daemon_support import write_table

from drivers.shoe.sim import SimulatedShoe

#: Four Baccarat coups, each a Player natural whatever the deal order (PBPB or PPBB): 16 cards.
COUPS = ("9C KD QH 5S", "8D JC TH 4C", "9H KS QC 7D", "8S JD TS 2H")


def alerts_of(dsn: str, table: str, kind: str, key: str = "") -> list[tuple[int, bool]]:
    """(id, still open) of every alert of this table, kind and key, oldest first."""
    return [(int(i), bool(o)) for i, o in query(
        dsn, "SELECT id, cleared_at IS NULL FROM alerts WHERE table_id = %s AND kind = %s AND key = %s "
             "ORDER BY id", table, kind, key)]


def raised(dsn: str, table: str, kind: str, key: str, *procs: Proc) -> None:
    """Raised (and maybe cleared already: a cause may be short)."""
    wait_for(f"{kind} {key} raised", lambda: bool(alerts_of(dsn, table, kind, key)), 15, *procs)


def cleared(dsn: str, table: str, kind: str, key: str, *procs: Proc) -> None:
    wait_for(f"{kind} {key} cleared", lambda: bool(alerts_of(dsn, table, kind, key)) and not any(
        o for _, o in alerts_of(dsn, table, kind, key)), 15, *procs)


def start_service(tmp_path: Path, nats_url: str, dsn: str, *extra: str, wait: bool = True) -> Proc:
    service = Proc(tmp_path / "alerts.log", "floor", "alerts", "--nats", nats_url, "--db", dsn, *extra)
    service.start()
    if wait:
        up(service)
    return service


def up(service: Proc) -> None:
    wait_for("the alert service up", lambda: service.said("tables watched"), 60, service)


def shoe_table(tmp_path: Path, shoe: SimulatedShoe) -> Path:
    """A Baccarat table file on ``shoe`` over a pty (its quick reconnect)."""
    link = tmp_path / "shoe-pty"
    shoe.open_pty(link)
    profile = tmp_path / "shoe.yaml"
    profile.write_text(f"port: {link}\nprotocol: v1\nbaud: 115200\nheartbeat_timeout: 5.0\n"
                       "reconnect: {initial: 0.05, max: 0.2}\n")
    return write_table(tmp_path, shoe=str(profile))

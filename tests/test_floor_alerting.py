"""``croupier floor alerts`` end to end: real nats-server and PostgreSQL, a real daemon on a simulated shoe,
its real uplink, the service as its own process; each alert raised (stored, logged, published) and
cleared when its cause clears, and a restarted service raising nothing twice. (What a starting service
reads from PostgreSQL: tests/test_floor_alerting_history.py.)"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import nats
import nats.js.errors
import psycopg
import pytest
from alerting_support import COUPS, alerts_of, cleared, raised, shoe_table, start_service, up
from floor_support import Proc, journal_rows, query, wait_for
from test_daemon_support import write_table

from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import TableConfig, load_table
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.floor import eventlog
from controller.floor.local import NatsServer
from controller.floor.wire import STREAM, subject
from drivers.shoe.sim import SimulatedShoe, load_deck
from tests.server_fixtures import FloorDatabase

BETTING = ({"cmd": "open"}, {"cmd": "bet", "seat": 1, "spot": "player", "amount": 100}, {"cmd": "close"})


class Ear:
    """A NATS client on a thread of its own: every alert message heard, and heartbeats sent as a table's
    uplink would send them."""

    def __init__(self, url: str) -> None:
        self.heard: list[dict[str, Any]] = []
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.nc = self._call(nats.connect(url))

        async def cb(msg: Any) -> None:
            self.heard.append(json.loads(msg.data))

        self._call(self.nc.subscribe("croupier.alerts.>", cb=cb))

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def alive(self, table: str, **fields: Any) -> None:
        body = {"table": table, "journal": "j", "journal_rows": 1, "acked": 1, "sent_at": time.time(),
                **fields}
        self._call(self.nc.publish(f"croupier.{table}.alive", json.dumps(body).encode()))

    def close(self) -> None:
        self._call(self.nc.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)


@pytest.fixture
def ear(nats_server: NatsServer) -> Iterator[Ear]:
    e = Ear(nats_server.url)
    yield e
    e.close()


@contextmanager
def talking(ear: Ear, table: str, ahead: float = 0.0) -> Iterator[None]:
    """Heartbeats from ``table`` every 0.2 s, its clock ``ahead`` seconds ahead, until the block ends.

    A wait in the block, however long it or any one look takes, never leaves the table silent for
    ``--feed-lost`` seconds, so it cannot raise (and the next heartbeat clear) a feed_lost of its own.
    """
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(0.2):
            ear.alive(table, sent_at=time.time() + ahead)

    thread = threading.Thread(target=beat, name=f"{table} heartbeats", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(15)  # no heartbeat after the block: the test's silences start where it says


def test_feed_lost_gap_and_clock_skew_raised_published_and_cleared_through_a_restarted_service(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase, ear: Ear) -> None:
    dsn = postgres.dsn
    service = start_service(tmp_path, nats_server.url, dsn, "--feed-lost", "2")
    try:
        ear.alive("t9")
        raised(dsn, "t9", "feed_lost", "", service)  # two seconds without a word
        ear.alive("t9")
        with talking(ear, "t9"):  # silent only where the test says so (talking's docstring)
            cleared(dsn, "t9", "feed_lost", "", service)
        for _ in range(2):  # the table's clock 1.5 s ahead
            ear.alive("t9", sent_at=time.time() + 1.5)
        with talking(ear, "t9", ahead=1.5):
            raised(dsn, "t9", "clock_skew", "", service)
        for _ in range(3):
            ear.alive("t9")
        with talking(ear, "t9"):
            cleared(dsn, "t9", "clock_skew", "", service)
        with psycopg.connect(dsn) as conn:
            conn.execute("INSERT INTO gaps (table_id, journal_id, first_row, last_row) "
                         "VALUES ('t9', 'j', 5, 7)")
        raised(dsn, "t9", "gap", "j:5", service)
        def lost_again() -> bool:  # silent since: a second feed_lost, open
            return [still for _, still in alerts_of(dsn, "t9", "feed_lost")] == [False, True]

        wait_for("the feed lost again", lost_again, 15, service)
        # Restarted: what is open stays open (its cause was not seen to clear) and nothing is raised twice.
        before = query(dsn, "SELECT id, kind, key, cleared_at IS NULL FROM alerts ORDER BY id")
        assert service.stop() == 0, service.text()
        service = start_service(tmp_path, nats_server.url, dsn, "--feed-lost", "2")
        time.sleep(1.0)
        assert query(dsn, "SELECT id, kind, key, cleared_at IS NULL FROM alerts ORDER BY id") == before
        with psycopg.connect(dsn) as conn:
            conn.execute("UPDATE gaps SET filled_at = now()")
        cleared(dsn, "t9", "gap", "j:5", service)
        ear.alive("t9")
        with talking(ear, "t9"):
            cleared(dsn, "t9", "feed_lost", "", service)
    finally:
        assert service.stop() == 0, service.text()
    states = [(m["kind"], m["state"]) for m in ear.heard if m["kind"] != "feed_lost"]
    assert states == [("clock_skew", "raised"), ("clock_skew", "cleared"), ("gap", "raised"),
                      ("gap", "cleared")]
    gap = next(m for m in ear.heard if m["kind"] == "gap")
    assert gap["table"] == "t9" and gap["key"] == "j:5" and gap["severity"] == "critical"
    assert gap["detail"] == "rows 5..7 of journal j are missing from the floor's history"
    with psycopg.connect(dsn) as conn:  # every change is in the significant-event log, chained
        assert eventlog.verify(conn).intact
        kinds = [k for (k,) in conn.execute(
            "SELECT kind FROM event_log WHERE body->>'kind' = 'gap' ORDER BY id")]
    assert kinds == ["alert_raised", "alert_cleared"]


def connected(client: CommandClient) -> bool:
    return bool(client.call("status")["shoe_device"]["connected"])


def test_shoe_unplugged_mid_deal_lid_opened_journal_fault_and_daemon_stopped_raised_and_cleared(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase) -> None:
    dsn, shoe = postgres.dsn, SimulatedShoe("v1", seed=1)
    table_file = shoe_table(tmp_path, shoe)
    config = load_table(table_file)
    tid = config.table_id
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(table_file), "--nats", nats_server.url,
                  "--heartbeat", "1")
    service = start_service(tmp_path, nats_server.url, dsn, wait=False)
    daemon = DaemonThread(Daemon(config))
    try:
        with daemon:
            client = CommandClient(config.spec.zeromq.command, key=local_key(config))
            wait_for("the shoe connected", lambda: connected(client), 20)
            assert client.call("credit_in", seat=1, amount=10_000)["ok"]
            uplink.start()
            up(service)
            wait_for("the uplink up", lambda: uplink.said("the daemon is alive"), 60, uplink)
            for request in BETTING:
                assert client.call(**request)["ok"], request
            shoe.deal("5C")
            shoe.inject("disconnect", 1.0)  # unplugged mid-deal: the device offline and a tilt
            for kind, key in (("device_offline", "shoe"), ("tilt", "")):
                raised(dsn, tid, kind, key, service, uplink)
            for kind, key in (("device_offline", "shoe"), ("tilt", "")):
                cleared(dsn, tid, kind, key, service, uplink)  # tilt_cleared "device_back"
            wait_for("the shoe back", lambda: connected(client), 20)
            for card in ("3D", "2H", "AS"):
                shoe.deal(card)
            wait_for("the coup settled", partial(idle, client), 20)
            shoe.lid(True)  # the daemon's `device` event "shoe lid" (docs/daemon.md): a device offline
            raised(dsn, tid, "device_offline", "shoe lid", service, uplink)
            shoe.lid(False)
            cleared(dsn, tid, "device_offline", "shoe lid", service, uplink)
            journal = daemon.daemon.service.journal if daemon.daemon.service is not None else None
            assert journal is not None and daemon.daemon._loop is not None
            capped = threading.Event()

            def cap() -> None:  # on the daemon's loop, which owns the journal's connection: the disk is full
                pages = journal.connection.execute("PRAGMA page_count").fetchone()[0]
                journal.connection.execute(f"PRAGMA max_page_count={pages}")
                capped.set()

            daemon.daemon._loop.call_soon_threadsafe(cap)
            assert capped.wait(10)
            for i in range(2000):
                if not client.call("credit_in", seat=1, amount=1, ref=f"fill-{i}-" + "f" * 150)["ok"]:
                    break
            raised(dsn, tid, "journal_fault", "", service, uplink)
            client.close()
        raised(dsn, tid, "daemon_stopped", "", service, uplink)
        with DaemonThread(Daemon(config)):
            cleared(dsn, tid, "daemon_stopped", "", service, uplink)
            cleared(dsn, tid, "journal_fault", "", service, uplink)
            uplink.stop()  # before its daemon stops
    finally:
        uplink.stop()
        assert service.stop() == 0, service.text()
        shoe.close()
    counts = query(dsn, "SELECT kind, key, count(*) FROM alerts GROUP BY kind, key ORDER BY kind, key")
    assert counts == [("daemon_stopped", "", 1), ("device_offline", "shoe", 1),
                      ("device_offline", "shoe lid", 1), ("journal_fault", "", 1), ("tilt", "", 1)]


def idle(client: CommandClient) -> bool:
    return bool(client.call("status")["phase"] == "idle")


def streamed(url: str, config: TableConfig, rows: int) -> bool:
    """The stream holds the table's rows up to ``rows`` (its subject's last message is that row)."""
    async def last() -> int:
        nc = await nats.connect(url)
        try:
            msg = await nc.jetstream().get_last_msg(STREAM, subject(config.table_id, journal_rows(config)[0]))
            return int(json.loads(msg.data or b"{}").get("row", 0))
        except nats.js.errors.NotFoundError:
            return 0
        finally:
            await nc.close()

    return asyncio.run(last()) == rows


def test_a_shoe_dealt_in_the_same_order_on_two_tables_raises_false_shuffle_from_the_live_rows(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase) -> None:
    dsn, deck = postgres.dsn, tmp_path / "deck.txt"
    deck.write_text("# one stacked order, loaded by both tables' shoes (the simulator's --deck FILE)\n"
                    + "\n".join(COUPS) + "\n")
    tables = []
    for name in ("t1", "t2"):
        shoe = SimulatedShoe("v1", seed=1, deck=load_deck(deck))
        shoe.open_pty(tmp_path / f"{name}-pty")
        (tmp_path / f"{name}-shoe.yaml").write_text(
            f"port: {tmp_path / f'{name}-pty'}\nprotocol: v1\nbaud: 115200\nheartbeat_timeout: 5.0\n"
            "reconnect: {initial: 0.05, max: 0.2}\n")
        table_file = write_table(tmp_path, name=name, shoe=str(tmp_path / f"{name}-shoe.yaml"))
        uplink = Proc(tmp_path / f"{name}-uplink.log", "uplink", str(table_file), "--nats", nats_server.url)
        tables.append((shoe, load_table(table_file), uplink))
    service = start_service(tmp_path, nats_server.url, dsn, wait=False)
    try:
        with ExitStack() as daemons:
            for _, config, uplink in tables:
                daemons.enter_context(DaemonThread(Daemon(config)))
                uplink.start()
            up(service)  # its consumer takes the rows from its start on
            for shoe, config, uplink in tables:  # one after the other: the first shoe ends before the second
                client = CommandClient(config.spec.zeromq.command, key=local_key(config))
                wait_for("the shoe connected", partial(connected, client), 20)
                for request in ({"cmd": "credit_in", "seat": 1, "amount": 100_000}, {"cmd": "new_shoe"}):
                    assert client.call(**request)["ok"]
                for _ in COUPS:
                    for request in BETTING:
                        assert client.call(**request)["ok"], request
                    for _ in range(4):
                        shoe.deal()  # the deck file's next card
                    wait_for("the coup settled", partial(idle, client), 20)
                assert client.call("new_shoe")["ok"]  # the shoe ends: it is checked against every earlier
                rows = len(journal_rows(config)[1])
                wait_for("the rows in the stream", partial(streamed, nats_server.url, config, rows), 30,
                         uplink)
                client.close()
            for _, _, uplink in tables:
                uplink.stop()  # before their daemons stop (else, rightly, daemon_stopped)
        journal = journal_rows(tables[1][1])[0]
        raised(dsn, "t2", "false_shuffle", f"{journal}:1", service)
    finally:
        for shoe, _, uplink in tables:
            uplink.stop()
            shoe.close()
        assert service.stop() == 0, service.text()
    (detail,) = query(dsn, "SELECT detail FROM alerts WHERE kind = 'false_shuffle'")[0]
    earlier = f"shoe t1:{journal_rows(tables[0][1])[0]}:1"
    assert detail == (f"shoe 1: 16 cards in the same order as {earlier} (cards 1.. here, 1.. there); "
                      f"15 of 15 adjacent pairs kept from {earlier} (expected 0, alarm at 8)")
    others = "SELECT table_id, kind FROM alerts WHERE kind <> 'false_shuffle'"
    assert query(dsn, others) == []

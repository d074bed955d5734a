"""Every table's tile, kept live from NATS: JetStream's rows, the uplinks' heartbeats, the alerts.

Why an ordered consumer from the newest message: the board is a viewer, not a recorder, so it needs
no durable state in the stream, acknowledges nothing and never slows the recorders; PostgreSQL gives
it everything before (:mod:`pitboard.history`). It subscribes first and loads from PostgreSQL
second, so no row falls between the two; a row that finds rows missing before it (the recorder
behind, a reconnect) has the table reloaded from PostgreSQL.

Browsers are woken at every change and each sends the newest whole board (as the display does:
a slow browser skips states, never queues them). The payload is rendered once per change.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import TYPE_CHECKING, Final

from controller.floor import alerts, wire
from controller.floor.alive import ALIVE_SUBJECTS, Heartbeat, loads
from controller.floor.gaming_day import MIDNIGHT, GamingDay
from pitboard.history import load_tiles
from pitboard.tile import UNFOLDABLE, Tile
from signage.watchers import Watched

if TYPE_CHECKING:
    from nats.aio.client import Client as NATS
    from nats.aio.msg import Msg

log = logging.getLogger("croupier.pitboard")

#: Seconds between the board's own redraws (stale feeds, the last hour moving on) when nothing arrives.
TICK: Final = 1.0
#: What reading a message from NATS raises when its bytes are not what they should be (the tile's own
#: :data:`UNFOLDABLE`: one list of what outside data raises): the message is logged once, naming where it
#: came from and what was wrong, and skipped; every other table goes on (one table's heartbeat with
#: ``1e999`` raised OverflowError into nats-py, which only printed it).
UNREADABLE: Final = UNFOLDABLE


def _skipped(what: str, where: str | None, exc: BaseException) -> None:
    """Log, once, a message the board skips: where it was heard (its subject names its table) and why."""
    log.warning("%s the board cannot read%s, skipped: %.300s", what, f" ({where})" if where else "", exc)


class Board(Watched):
    """The tiles, the browsers watching them, the PostgreSQL the board reloads from, and its gaming day
    (where every tile's and ``/report``'s "today" starts)."""

    def __init__(self, dsn: str, day: GamingDay = MIDNIGHT) -> None:
        super().__init__()
        self.dsn = dsn
        self.day = day
        self.tiles: dict[str, Tile] = {}
        self._payload = (-1, "")
        self._reload: set[str] = set()
        #: Tables whose tile folded a row past missing ones: reloaded until PostgreSQL holds its rows.
        self._gaps: set[str] = set()
        #: When a row of each table last arrived (monotonic): a table idle behind its stream is reloaded.
        self._row_heard: dict[str, float] = {}
        #: Alerts heard cleared (never shown again: an acknowledgement heard after its clear, a load that
        #: read it open) and when each open one was last heard (monotonic): a load keeps only those heard
        #: since its read began (alerts go on core NATS: a clear missed stayed on the tile for good).
        self._cleared: set[int] = set()
        self._alert_heard: dict[int, float] = {}

    @property
    def payload(self) -> str:
        """The whole board as JSON (docs/floor.md, "The pit board"), rendered once per version."""
        if self._payload[0] != self.version:
            now = time.time()
            body = {"at": now, "tables": [self.tiles[t].view(now, self.day) for t in sorted(self.tiles)]}
            self._payload = (self.version, json.dumps(body, separators=(",", ":")))
        return self._payload[1]

    def changed(self) -> None:
        self.wake()

    # ---------------------------------------------------------------- what arrives
    def tile(self, table_id: str) -> Tile:
        return self.tiles.setdefault(table_id, Tile(table_id))

    def take_row(self, data: bytes, subject: str | None = None) -> None:
        """A row as the uplink published it on ``subject`` (None: not checked), whose table it must name.
        One the board cannot read (:data:`UNREADABLE`: not a row message, another table's, a currency
        that is not one) is logged and skipped, its table's tile unchanged; an event of it the tile cannot
        fold is left out (:meth:`Tile.fold`)."""
        where = subject
        try:
            msg = wire.RowMessage.parse(data)
            if subject is not None:
                wire.own_table(msg.table_id, subject)
            where = where or f"table {msg.table_id}"
            tile = self.tiles.get(msg.table_id) or Tile(msg.table_id)
            contiguous = tile.take_row(msg)
        except UNREADABLE as exc:
            _skipped("a row", where, exc)
            return
        self.tiles[msg.table_id] = tile
        self._row_heard[msg.table_id] = time.monotonic()
        if not contiguous:
            self._reload.add(msg.table_id)
            self._gaps.add(msg.table_id)
        self.changed()

    def take_heartbeat(self, data: bytes, subject: str | None = None) -> None:
        """An uplink's heartbeat: the table is alive, and how long its journal is. A table the board does
        not have, or whose stream holds rows the board never got while no row arrives (published before
        the board subscribed, and not yet recorded when it loaded), is reloaded from PostgreSQL. One the
        board cannot read (:meth:`Heartbeat.parse`) is logged and skipped."""
        try:
            beat = Heartbeat.parse(data, subject)
        except UNREADABLE as exc:
            _skipped("a heartbeat", subject, exc)
            return
        tile = self.tile(beat.table)
        if beat.journal == tile.journal:
            tile.journal_rows = max(tile.journal_rows, beat.journal_rows)
        idle = time.monotonic() - self._row_heard.get(tile.table, 0.0) > 2 * TICK
        if beat.journal != tile.journal or (beat.acked > tile.last_row and idle):
            self._reload.add(tile.table)
        tile.heard = time.time()
        self.changed()

    def take_alert(self, data: bytes, subject: str | None = None) -> None:
        """An alert's new state (``Alert.message()``): open ones shown on their tile, cleared ones gone.
        One the board cannot read (not a JSON object, a number not finite, a table or state that is not a
        string, an id that is not an integer) is logged, naming ``subject`` (where it was heard), and
        skipped."""
        try:
            a = loads(data)
            table, alert_id, state = a.get("table"), a.get("alert"), a.get("state")
            if not isinstance(table, str) or not isinstance(state, str):
                raise ValueError(f"table {table!r:.40} and state {state!r:.40}: not both strings")
            if type(alert_id) is not int:
                raise ValueError(f"alert {alert_id!r:.40} is not an alert's id")
            if subject is not None and subject != alerts.subject(table):  # held as rows and heartbeats are:
                raise ValueError(f"it names table {table!r:.40}, on {subject}: not that subject's table")
        except UNREADABLE as exc:
            _skipped("an alert", subject, exc)
            return
        tile = self.tile(table)
        if state == "cleared":
            tile.alerts.pop(alert_id, None)
            self._cleared.add(alert_id)
        elif alert_id not in self._cleared:
            tile.alerts[alert_id] = a
            self._alert_heard[alert_id] = time.monotonic()
        self.changed()

    # ---------------------------------------------------------------- PostgreSQL
    async def load(self, table_id: str | None = None) -> None:
        """Tiles from PostgreSQL (all, or one table's), keeping any row that arrived meanwhile. A tile
        with rows missing that is ahead of PostgreSQL (the recorder behind the live rows) is kept, and
        loaded again at the next tick until PostgreSQL has its rows: kept for good, it would show a
        table without the rounds of the gap (its road, its house today) while every new row is
        contiguous and asks for nothing."""
        began = time.monotonic()
        loaded = await asyncio.to_thread(load_tiles, self.dsn, table_id, self.day)
        for name, fresh in loaded.items():
            live = self.tiles.get(name)
            if live is None or live.journal != fresh.journal or live.last_row <= fresh.last_row:
                fresh.heard = max(fresh.heard, live.heard if live else 0.0)
                newer = {k: a for k, a in (live.alerts if live else {}).items()
                         if self._alert_heard.get(k, 0.0) >= began}
                fresh.alerts = {k: a for k, a in {**fresh.alerts, **newer}.items() if k not in self._cleared}
                self.tiles[name] = fresh
                self._gaps.discard(name)
            elif name in self._gaps:
                self._reload.add(name)
        # A gap in a table PostgreSQL has no row of yet: the same, until it has.
        self._reload |= {t for t in self._gaps - loaded.keys() if table_id in (None, t)}
        self.changed()

    async def keep_up(self, stop: asyncio.Event) -> None:
        """Redraw every :data:`TICK` s and reload the tables that missed rows (at most once a tick)."""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), TICK)
            now = time.time()
            for tile in self.tiles.values():
                tile.prune(now, self.day)
            missing, self._reload = self._reload, set()
            for table_id in sorted(missing):
                try:
                    await self.load(table_id)
                except Exception as exc:  # PostgreSQL away: the live rows go on; try at the next gap
                    log.warning("%s: reloading from PostgreSQL failed: %s", table_id, exc)
                    if table_id in self._gaps:  # rows missing from the tile: again at the next tick
                        self._reload.add(table_id)
            self.changed()


async def follow(board: Board, nc: NATS, stop: asyncio.Event) -> None:
    """Subscribe to heartbeats, alerts and (once the stream exists) every table's rows, then load the
    tiles from PostgreSQL and keep them up until ``stop``."""
    from nats.js.api import DeliverPolicy
    from nats.js.errors import NotFoundError

    async def row(msg: Msg) -> None:
        board.take_row(msg.data, msg.subject)

    async def heartbeat(msg: Msg) -> None:
        board.take_heartbeat(msg.data, msg.subject)

    async def alert(msg: Msg) -> None:
        board.take_alert(msg.data, msg.subject)

    await nc.subscribe(ALIVE_SUBJECTS, cb=heartbeat)
    await nc.subscribe(alerts.SUBJECTS, cb=alert)
    js = nc.jetstream()

    async def rows() -> bool:
        try:
            await js.subscribe(wire.SUBJECTS, ordered_consumer=True, deliver_policy=DeliverPolicy.NEW, cb=row)
            return True
        except NotFoundError:  # no table has published yet: the first uplink creates the stream
            return False

    subscribed = await rows()
    while not stop.is_set():
        try:
            await board.load()
            break
        except Exception as exc:
            log.warning("loading the board from PostgreSQL failed (trying again): %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)
    keeping = asyncio.ensure_future(board.keep_up(stop))
    while not subscribed and not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0)
        subscribed = await rows()  # rows published before it: the first one after is a gap, reloaded
    await keeping

"""``croupier floor alerts``: the rules fed live from NATS, each alert stored, logged and published.

Rows come from the stream through a durable pull consumer of the service's own (``alerts``; created
delivering the rows after the recorders' acknowledged floor, so a first start judges what PostgreSQL
does not hold yet and does not replay the floor's past), acknowledged after
their alerts are committed: a restarted service resumes where it stopped, and the partial unique
index on open alerts makes any re-raise a no-op. Heartbeats come from core NATS (``croupier.*.alive``).
Every change goes through controller.floor.alerts (PostgreSQL and the significant-event log in one
transaction) and is then published on ``croupier.alerts.<table>`` as :meth:`Alert.message`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import nats.errors
import nats.js.errors
import psycopg
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js import JetStreamContext, api

from controller.floor import alerts
from controller.floor.alerting import history
from controller.floor.alerting.rules import FEED_LOST, Pit
from controller.floor.alerting.shoes import Action, Raise
from controller.floor.alive import ALIVE_SUBJECTS, Heartbeat, loads
from controller.floor.database import Database
from controller.floor.schema import migrate
from controller.floor.stream import ensure_stream, rows_consumer
from controller.floor.uplink import NATS_ERRORS, retrying
from controller.floor.wire import STREAM, own_table

log = logging.getLogger("croupier.floor")


def _write(conn: psycopg.Connection[Any], a: Action) -> alerts.Alert | None:
    if isinstance(a, Raise):
        return alerts.raise_alert(conn, table_id=a.table_id, kind=a.kind, key=a.key, detail=a.detail,
                                  severity="critical" if a.severity == "critical" else "warning",
                                  data=a.data, cause_at=a.cause_at)
    return alerts.clear_alert(conn, table_id=a.table_id, kind=a.kind, key=a.key)


class AlertService:
    """One alert service's work; :attr:`stop` ends it after the message in hand."""

    def __init__(self, nc: NATS, dsn: str, *, durable: str = "alerts", batch: int = 256,
                 check_every: float = 0.5, replicas: int = 1, drift_window: int | None = None,
                 feed_lost: float = FEED_LOST, recorder: str = "recorder") -> None:
        self.nc = nc
        self.js: JetStreamContext = nc.jetstream()
        self.dsn = dsn
        self.durable = durable
        #: The recorders' consumer: a first start takes the rows they have not acknowledged.
        self.recorder = recorder
        self.batch = batch
        self.check_every = check_every
        self.replicas = replicas
        self.drift_window = drift_window
        self.feed_lost = feed_lost
        self.stop = asyncio.Event()
        self.db = Database(dsn, self.stop)
        self.pit = Pit()
        self._heard: asyncio.Queue[tuple[dict[str, Any], float]] = asyncio.Queue()

    async def run(self) -> None:
        await retrying("creating the stream", lambda: ensure_stream(self.js, self.replicas), self.stop)
        await self.db.run(migrate)
        first = not await retrying("reading the consumer", self._consumer_exists, self.stop)
        # Read before the history: every row up to the recorders' floor is in PostgreSQL by then.
        floor = 0
        if first:
            floor = await retrying("reading the recorders' consumer", self._recorded_floor, self.stop)
        self.pit, loaded = await self.db.run(
            lambda conn: history.load(conn, time.time(), self.drift_window, self.feed_lost))
        await self._apply(loaded)
        config = api.ConsumerConfig(ack_policy=api.AckPolicy.EXPLICIT, ack_wait=30.0, max_ack_pending=20_000,
                                    num_replicas=self.replicas,
                                    deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
                                    opt_start_seq=floor + 1)
        if first:
            # A first start takes the rows after the recorders' floor (those PostgreSQL may not hold yet:
            # a tilt the recorders had not written was never judged, a review found); what stands below
            # it is judged from the history (the newest journal's last tilt and each device's last word).
            standing = await self.db.run(history.standing)
            await self._apply([a for message in standing for a in self.pit.row(message, time.time())])
        await retrying("joining the consumer", lambda: rows_consumer(self.js, self.durable, config),
                       self.stop)
        psub = await self.js.pull_subscribe_bind(durable=self.durable, stream=STREAM)

        async def heard(msg: Msg) -> None:
            try:  # the floor's one reading of a heartbeat (the recorder's and the pit board's): a bad one
                body = Heartbeat.body(msg.data, msg.subject)  # raised OverflowError or RecursionError here
                self._heard.put_nowait((body, time.time()))
            except ValueError as exc:
                log.warning("a heartbeat on %s that does not parse: %s", msg.subject, exc)

        await self.nc.subscribe(ALIVE_SUBJECTS, cb=heard)
        await self.nc.flush()
        log.info("alerts: %d open, %d shoes on record, %d tables watched", len(self.pit.open),
                 len(self.pit.shoes.history.shoes), len(self.pit.tables))
        checked = 0.0
        try:
            while not self.stop.is_set():
                await self._rows(psub)
                while not self._heard.empty():
                    body, at = self._heard.get_nowait()
                    if isinstance(body, dict) and "table" in body:
                        await self._apply(self.pit.alive(body, at))
                if time.monotonic() - checked >= self.check_every:
                    checked = time.monotonic()
                    await self._apply(self.pit.tick(time.time()))
                    await self._apply(self.pit.gaps(await self.db.run(history.unfilled_gaps)))
                    await self._apply(self.pit.conflicts(await self.db.run(history.conflicts)))
        finally:
            self.db.close()

    async def _recorded_floor(self) -> int:
        """The stream sequence up to which the recorders acknowledged every row (each after its commit, so
        PostgreSQL holds them all); 0 when no recorder has joined the stream yet (nothing is recorded)."""
        try:
            info = await self.js.consumer_info(STREAM, self.recorder)
        except nats.js.errors.NotFoundError:
            return 0
        return int(info.ack_floor.stream_seq or 0) if info.ack_floor is not None else 0

    async def _consumer_exists(self) -> bool:
        try:
            await self.js.consumer_info(STREAM, self.durable)
        except nats.js.errors.NotFoundError:
            return False
        return True

    async def _rows(self, psub: JetStreamContext.PullSubscription) -> None:
        """A batch of rows (waiting at most a tenth of a second for one): judged, committed, acknowledged."""
        try:
            msgs = await psub.fetch(self.batch, timeout=0.1)
        except (nats.errors.TimeoutError, TimeoutError):
            return
        except NATS_ERRORS as exc:
            log.warning("fetch failed (%s: %s): retrying", type(exc).__name__, exc)
            await asyncio.sleep(0.5)
            return
        for m in msgs:
            try:
                body = loads(m.data)  # as a heartbeat: not nested past the stack, every number finite
                own_table(body["table"], m.subject)  # one table's user, another's alerts: no
                actions = self.pit.row(body, time.time())
            except (ValueError, KeyError, TypeError, OverflowError) as exc:
                log.error("row %s on %s not judged: %s", m.headers, m.subject, exc)
                actions = []
            await self._apply(actions)
            try:
                await m.ack()
            except NATS_ERRORS as exc:  # judged and committed: a redelivery raises nothing new
                log.warning("ack failed (%s): the row will be delivered again", exc)

    async def _apply(self, actions: list[Action]) -> None:
        for action in actions:
            alert = await self.db.run(lambda conn, a=action: _write(conn, a))  # type: ignore[misc]
            if alert is None:
                continue
            log.info("%s %s %s %s: %s", alert.table_id, alert.state, alert.kind, alert.key, alert.detail)
            try:
                await self.nc.publish(alerts.subject(alert.table_id), json.dumps(alert.message()).encode())
            except NATS_ERRORS as exc:  # stored: the board reads PostgreSQL too
                log.warning("alert %d not published (%s)", alert.id, exc)

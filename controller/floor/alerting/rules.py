"""The alert rules as a pure state machine: rows, heartbeats, gaps and the clock in, raise/clear out.

No socket, database or clock inside: the service passes each message with the floor's time of its
arrival (``now``, seconds since the epoch) and applies what comes back through controller.floor.alerts.
The rules remember which alerts are open (loaded from PostgreSQL at start), so a cause that persists
is raised once and a clear is only said for an open alert; an alert whose cause nobody has seen end
(a table silent since before a restart) stays open until its cause is seen to clear.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from controller.floor.alerting.shoes import Action, Clear, DayWatch, DriftWatch, Raise, ShoeWatch
from controller.money import round_decimals

#: A table whose rows and heartbeats have all been silent this long has lost its feed (issue 27).
FEED_LOST: Final = 10.0
#: A table's clock further than this from the floor's is an alert (issue 27).
CLOCK_SKEW: Final = 0.5
#: Heartbeats whose lowest (receive - sent) is the clock's offset: transit only ever adds to it.
SKEW_SAMPLES: Final = 3
#: Tables silent for longer than this when the service starts are not watched for a lost feed.
FORGET_AFTER: Final = 86_400.0

__all__ = ["Action", "Clear", "Pit", "Raise", "FEED_LOST", "CLOCK_SKEW"]


@dataclass
class _Table:
    heard: float
    skews: deque[float] = field(default_factory=lambda: deque(maxlen=SKEW_SAMPLES))


#: The kinds of alert an event clears (tilt_cleared, a device back online): their clears always written.
EVENT_CLEARED: Final = frozenset({"tilt", "device_offline"})


class Pit:
    """Every table's rules; each method returns the alerts to raise and to clear, in order."""

    def __init__(self, open_alerts: Iterable[tuple[str, str, str]] = (), shoes: ShoeWatch | None = None,
                 drift: DriftWatch | None = None, feed_lost: float = FEED_LOST) -> None:
        #: (table, kind, key) of every alert not yet cleared.
        self.open: set[tuple[str, str, str]] = set(open_alerts)
        self.shoes = shoes or ShoeWatch()
        self.drift = drift or DriftWatch()
        self.days = DayWatch()
        self.tables: dict[str, _Table] = {}
        self.feed_lost = feed_lost
        #: Per (table, journal) the last seq already judged (from PostgreSQL at start): not judged again.
        self.judged: dict[tuple[str, str], int] = {}
        #: Per (table, journal) the last seq this service judged from the stream: a row delivered again
        #: (its ack lost) raised its tilt again after the tilt_cleared that followed it, open for good.
        self.seen: dict[tuple[str, str], int] = {}

    def known(self, table_id: str, heard: float, now: float) -> None:
        """A table the floor heard from at ``heard`` before this service started (watched for its feed
        unless it has been silent longer than FORGET_AFTER)."""
        if now - heard <= FORGET_AFTER and table_id not in self.tables:
            self.tables[table_id] = _Table(heard)

    def filter(self, actions: Iterable[Action]) -> list[Action]:
        """The raises of alerts not open and the clears of open ones, the open set kept up to date."""
        out: list[Action] = []
        for a in actions:
            k = (a.table_id, a.kind, a.key)
            if isinstance(a, Raise) and k not in self.open:
                self.open.add(k)
                out.append(a)
            elif isinstance(a, Clear) and (k in self.open or a.kind in EVENT_CLEARED):
                # A clear an event says is written whether or not this service raised it: two services
                # share the stream's rows, and the other may hold the raise (PostgreSQL's clear of an
                # alert not open does nothing). A feed's clear, on every row heard, only when open.
                self.open.discard(k)
                out.append(a)
        return out

    def _heard(self, table_id: str, now: float) -> list[Action]:
        table = self.tables.setdefault(table_id, _Table(now))
        table.heard = max(table.heard, now)
        return [Clear(table_id, "feed_lost")]

    def row(self, msg: Mapping[str, Any], now: float) -> list[Action]:
        """A row message from the stream (controller/floor/wire.py's body)."""
        table_id, journal, at = str(msg["table"]), str(msg["journal"]), float(msg["at"])
        actions: list[Action] = []
        if at >= now - self.feed_lost:  # an old row redelivered after an outage says nothing of the feed now
            actions += self._heard(table_id, now)
        actions += self.shoes.journal(table_id, journal)
        judged = self.judged.get((table_id, journal), 0)
        seen = self.seen.get((table_id, journal), 0)
        for e in msg.get("events") or ():
            seq = int(e.get("seq", 0))
            if seq <= seen:
                continue  # judged already from this stream (a redelivery, a row sent again): old news
            self.seen[(table_id, journal)] = max(self.seen.get((table_id, journal), 0), seq)
            actions += self._event(table_id, journal, e, msg, at, seq <= judged)
        return self.filter(actions)

    def _event(self, table_id: str, journal: str, e: Mapping[str, Any], msg: Mapping[str, Any],
               at: float, judged: bool) -> list[Action]:
        """One event's alerts. ``judged``: its shoe and drift figures came from PostgreSQL at start (the
        durable consumer redelivers only rows not acknowledged, so tilts and devices are never judged)."""
        name = e.get("event")
        if name == "tilt":
            detail = f"tilt in round {e.get('round')}: {e.get('detail') or e.get('reason')}"
            return [Raise(table_id, "tilt", "", "critical", detail,
                          {"reason": e.get("reason"), "card": e.get("card"), "round": e.get("round")}, at)]
        if name == "tilt_cleared":
            return [Clear(table_id, "tilt")]
        if name == "device":
            device = str(e.get("device"))
            if not judged:
                self.shoes.event(table_id, journal, e)  # a shoe that says it is empty: nothing undealt
            if e.get("online"):
                return [Clear(table_id, "device_offline", device)]
            return [Raise(table_id, "device_offline", device, "warning",
                          f"{device} offline: {e.get('detail', '')}", {"device": device}, at)]
        if judged:
            return []
        actions = self.shoes.event(table_id, journal, e)
        actions += self.days.event(table_id, msg.get("options") or {}, e, at)
        record = msg.get("round")
        if name == "round_settled" and isinstance(record, Mapping):  # the row's record: stakes and bases
            decimals = round_decimals(record, msg.get("currency") or {})
            actions += self.drift.round(table_id, str(msg.get("game", "")), msg.get("options") or {}, record,
                                        decimals)
        return actions

    def alive(self, msg: Mapping[str, Any], now: float) -> list[Action]:
        """An uplink's heartbeat (controller/floor/alive.py): the feed, the daemon, its journal, its clock."""
        table_id = str(msg["table"])
        actions = self._heard(table_id, now)
        daemon = msg.get("daemon")
        if daemon == "stopped":
            actions.append(Raise(table_id, "daemon_stopped", "", "critical",
                                 "the table's daemon stopped (its uplink runs)", {}, msg.get("daemon_at")))
        elif daemon == "alive":
            actions.append(Clear(table_id, "daemon_stopped"))
        fault = msg.get("journal_fault")
        if isinstance(fault, Mapping):
            actions.append(Raise(table_id, "journal_fault", "", "critical",
                                 f"journal cannot be written, the table is halted: {fault.get('error')}",
                                 dict(fault), fault.get("at")))
        elif daemon == "alive":
            actions.append(Clear(table_id, "journal_fault"))
        sent = msg.get("sent_at")
        if isinstance(sent, int | float):
            actions += self._clock(table_id, now - float(sent))
        return self.filter(actions)

    def _clock(self, table_id: str, sample: float) -> list[Action]:
        skews = self.tables[table_id].skews
        skews.append(sample)
        if len(skews) < 2:
            return []
        offset = min(skews)  # the floor's clock minus the table's, plus the quickest transit seen
        if abs(offset) <= CLOCK_SKEW:
            return [Clear(table_id, "clock_skew")]
        side = "behind" if offset > 0 else "ahead of"
        return [Raise(table_id, "clock_skew", "", "warning",
                      f"the table's clock is {abs(offset) * 1000:.0f} ms {side} the floor's",
                      {"offset_ms": round(offset * 1000)}, None)]

    def tick(self, now: float) -> list[Action]:
        """Every half second or so: tables silent for :attr:`feed_lost` seconds."""
        return self.filter(
            Raise(t, "feed_lost", "", "critical", f"no row and no heartbeat for {now - s.heard:.0f} s",
                  {"heard_at": s.heard}, s.heard)
            for t, s in sorted(self.tables.items()) if now - s.heard > self.feed_lost)

    def gaps(self, unfilled: Iterable[tuple[str, str, int, int]]) -> list[Action]:
        """The ``gaps`` rows with ``filled_at`` NULL now: (table, journal, first row, last row)."""
        now_open = {(t, f"{j}:{first}"): (first, last) for t, j, first, last in unfilled}
        actions: list[Action] = [
            Raise(t, "gap", key, "critical", f"rows {first}..{last} of journal {key.split(':')[0]} are "
                  f"missing from the floor's history", {"first_row": first, "last_row": last}, None)
            for (t, key), (first, last) in sorted(now_open.items())]
        return self.filter(actions + self._gone("gap", set(now_open)))

    def conflicts(self, found: Iterable[tuple[str, str, int, int]]) -> list[Action]:
        """The journals with rows sent again with another body (table, journal, first row, rows): one alert
        a journal, never cleared by itself (the floor holds two histories under it: a person decides), but
        cleared once a person has settled its rows in ``conflicts`` (``croupier floor conflicts --settle``)
        or removed them: left open, it stayed
        on the board for ever, and a later conflict of that journal was never raised again (a review)."""
        found = sorted(found)
        now_open = {(t, j) for t, j, _, _ in found}
        actions: list[Action] = [
            Raise(t, "conflicting_rows", j, "critical",
                  f"journal {j}: {n} row(s) from row {first} came again with another input than the one "
                  f"recorded: two histories under one journal (two Pis running copies of it?)",
                  {"first_row": first, "rows": n}, None)
            for t, j, first, n in found]
        return self.filter(actions + self._gone("conflicting_rows", now_open))

    def _gone(self, kind: str, found: set[tuple[str, str]]) -> list[Action]:
        """A clear for every open alert of ``kind`` whose (table, key) the history no longer holds."""
        return [Clear(t, kind, key) for t, k, key in sorted(self.open) if k == kind and (t, key) not in found]

"""The table service: journal, then apply, then number; the one path every input takes.

This is the daemon's state without its sockets: a :class:`Table`, the
journal it is rebuilt from, the ``seq`` of the last event, the round
recorder and a short ring of recent events for subscribers catching up.
Everything here runs on the daemon's single loop thread; nothing in it
blocks except the journal's commit, which is the point (an event must not
leave the process before its input is durable).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controller.daemon import checkpoint, journal_limits
from controller.daemon.config import TableConfig
from controller.daemon.journal import Journal, JournalFault
from controller.daemon.recall import RoundRecorder
from controller.events import Event, WagerPlaced
from controller.inputs import CardSeen, Input, SetLimits
from controller.table import Table
from drivers.shoe import FrameId

log = logging.getLogger("croupier.daemon")

#: The first reply to each ref'd command, kept for its resends (controller.daemon.resend).
REPLIES_SCHEMA = "CREATE TABLE IF NOT EXISTS replies (row INTEGER PRIMARY KEY, reply TEXT NOT NULL)"
#: The refusals given before the journal to ref'd commands (a role denied, an amount or a seat the limits
#: refuse), kept for their resends: the ref as journaled, the request (its input as JSON and its source)
#: and the reply (controller.daemon.resend.refuse).
REFUSED_SCHEMA = ("CREATE TABLE IF NOT EXISTS refused (ref TEXT PRIMARY KEY, key TEXT NOT NULL, "
                  "input TEXT NOT NULL, source TEXT NOT NULL, reply TEXT NOT NULL)")


def event_payload(table_id: str, seq: int, event: Event) -> dict[str, Any]:
    """The wire form of an event: ``event``, ``table``, ``seq`` first, then the event's own fields in order.

    Putting the two added keys right after ``event`` keeps the event's own key
    order intact, so removing ``table`` and ``seq`` gives back exactly the
    engine's ``to_dict()`` (the ``round_settled`` line of docs/scenarios.md).
    """
    d = event.to_dict()
    out: dict[str, Any] = {"event": d.pop("event"), "table": table_id, "seq": seq}
    out.update(d)
    return out


@dataclass(slots=True)
class Applied:
    """What one submitted input did: its journal row and its numbered events."""

    row: int
    first_seq: int
    events: list[Event]
    duplicate: bool = False
    payloads: list[dict[str, Any]] = field(default_factory=list)

    @property
    def last_seq(self) -> int:
        return self.first_seq + len(self.events) - 1

    @property
    def refused(self) -> str | None:
        """The refusal reason if the table refused the input."""
        if len(self.events) == 1 and self.events[0].event == "refused":
            reason: str = self.events[0].to_dict()["reason"]
            return reason
        return None


class TableService:
    """A table rebuilt from its journal, taking new inputs through it."""

    def __init__(
        self, config: TableConfig, journal: Journal, *, keep_rounds: int = 100, keep_events: int = 2000,
        checkpoint_every: int = checkpoint.EVERY, checkpoint_keep: int = checkpoint.KEEP,
        checkpoint_mid_round: bool = False,
    ) -> None:
        self.config = config
        self.journal = journal
        self.table = Table(config.new_game(), config.limits)
        self.seq = 0
        self.recorder = RoundRecorder(keep_rounds)
        #: (seq, event) of the most recent events, for subscribers that missed a few.
        self.recent: deque[tuple[int, Event]] = deque(maxlen=keep_events)
        self.replayed = 0
        self.replay_seconds = 0.0
        #: Cards refused while the table is tilted (journaled): only past the engine's bound of held
        #: cards (controller.tilts.MAX_HELD), until the tilt ends; the dealer keys them again by hand.
        self.refused_cards: list[str] = []
        #: Wagers standing now that chip sensors placed (the rest were keyed: no chips to expect).
        self.sensor_wagers: set[tuple[int, str]] = set()
        #: Checkpoints (controller.daemon.checkpoint): every so many inputs, at a round end unless mid_round.
        self.checkpoint_every = checkpoint_every
        self.checkpoint_keep = checkpoint_keep
        self.checkpoint_mid_round = checkpoint_mid_round
        #: The row of the last checkpoint written or started from (0: none).
        self.checkpoint_row = 0
        #: Set by the daemon: called when :meth:`submit` finds a checkpoint due, instead of writing it
        #: there; it must call :meth:`maybe_checkpoint` before the next input. So the input's events
        #: (a round's settlement: checkpoints come at round ends) are published, and its shoe frame
        #: acknowledged, without waiting for the checkpoint (milliseconds of pickling and a write).
        self.checkpoint_later: Callable[[], object] | None = None
        #: The ref'd command rows :meth:`replay` applied (after the checkpoint): the daemon keeps the
        #: replies a crash lost from them (controller.daemon.resend.keep_replayed), then drops them.
        self.replayed_commands: list[Applied] = []
        #: The table file's limits change found at the start, waiting for the round in play to end.
        self.limits_pending: SetLimits | None = None

    @property
    def table_id(self) -> str:
        return self.config.table_id

    def replay(self, *, checkpoint_at: int | None = None) -> None:
        """Rebuild the state from the newest usable checkpoint and the inputs after it (once, at start),
        then journal a change of the table file's limits if there is one (controller.daemon.journal_limits).

        ``checkpoint_at``: 0 replays every input from row 1; a row starts from exactly that
        checkpoint (tests use both to prove a checkpoint plus its tail equals a full replay).
        """
        if self.seq or self.replayed:
            raise RuntimeError("replay() runs once, on a fresh service")
        started = time.perf_counter()
        conn = self.journal.connection
        checkpoint.ensure_schema(conn)
        conn.execute(REPLIES_SCHEMA)
        conn.execute(REFUSED_SCHEMA)
        saved = None if checkpoint_at == 0 else checkpoint.load(
            conn, self.journal.path, self.journal.last_id, at_row=checkpoint_at)
        if checkpoint_at and saved is None:
            raise ValueError(f"no usable checkpoint at row {checkpoint_at}")
        seq = 0
        # Every row replays under the limits it was played under: the journal's, not the table file's.
        self.table.limits = journal_limits.record_starting_limits(self.journal, self.config.limits)
        if saved is not None:
            self.table, seq, self.checkpoint_row = saved.table, saved.seq, saved.row
            self.recorder.finished.extend(saved.finished)
            self.recorder.current = saved.current
            self.recent.extend(saved.recent_events())
        table, recorder, recent = self.table, self.recorder, self.recent
        for entry in self.journal.entries(self.checkpoint_row + 1):
            events = table.apply(entry.input)
            self._track_refused_cards(entry.input, events)
            recorder.observe(seq + 1, entry.at, entry.source, entry.input, events, table)
            if entry.ref is not None and entry.source.startswith("command:"):
                self.replayed_commands.append(Applied(entry.id, seq + 1, events))
            for event in events:
                seq += 1
                recent.append((seq, event))
            self.replayed += 1
        self.seq = seq
        self.sensor_wagers = self._sensor_wagers_of_round()
        self.replay_seconds = time.perf_counter() - started
        log.info(
            "replayed %d inputs after the checkpoint at row %d in %.3f s: round %d, %s, seq %d",
            self.replayed,
            self.checkpoint_row,
            self.replay_seconds,
            table.round_no,
            table.phase,
            seq,
        )
        # Between rounds: before any other input; else right after the input that ends the round in play.
        self.limits_pending = journal_limits.change_due(self.journal, table, self.config.limits)
        self._change_limits_between_rounds()
        self.maybe_checkpoint()

    def _change_limits_between_rounds(self) -> None:
        """Journal the table file's limits change that waits (:attr:`limits_pending`) once no round is
        in play; if the round's inputs made it drop money, make none and halt (the journal faulted)."""
        change = self.limits_pending
        if change is None or self.table.phase != "idle":
            return
        why = journal_limits.deferred_refusal(self.table, change)
        if why is not None:
            self.journal.mark_fault(why)
            return
        self.limits_pending = None
        with contextlib.suppress(JournalFault):  # the input before it stands; the fault halts the table
            self.submit(change, journal_limits.SOURCE)

    def submit(
        self,
        inp: Input,
        source: str,
        ref: str | None = None,
        at: float | None = None,
        frame: FrameId | None = None,
    ) -> Applied:
        """Journal ``inp`` (durably), apply it, number its events. ``ref`` makes a resend a no-op.

        ``frame``: the shoe frame ``inp`` came in, committed with it. A failed write raises
        :class:`~controller.daemon.journal.JournalFault` before anything is applied. A command's
        resend is answered before it gets here (controller.daemon.resend); a ref found here is a
        device's resend (the camera's ``camera:<file>``), which only needs not to be applied twice.
        """
        if ref is not None:
            entry = self.journal.find_ref(ref)
            if entry is not None:
                return Applied(entry.id, self.seq + 1, [], duplicate=True)
        when = time.time() if at is None else at
        row = self.journal.append(inp, source, when, ref, frame)
        events = self.table.apply(inp)
        self._track_wagers(source, events)
        self._track_refused_cards(inp, events)
        first = self.seq + 1
        self.recorder.observe(first, when, source, inp, events, self.table)
        payloads = []
        for event in events:
            self.seq += 1
            self.recent.append((self.seq, event))
            payloads.append(event_payload(self.table_id, self.seq, event))
        if self.limits_pending is not None:
            self._change_limits_between_rounds()
        if self.checkpoint_later is None:
            self.maybe_checkpoint()
        elif self.checkpoint_due():
            self.checkpoint_later()
        return Applied(row, first, events, payloads=payloads)

    def _sensor_wagers_of_round(self) -> set[tuple[int, str]]:
        """After a replay (from a checkpoint or not): the standing wagers the round's record says chip
        sensors placed; the last placement of a spot decides."""
        placed: set[tuple[int, str]] = set()
        for item in (self.recorder.current or {}).get("inputs", []):
            if item.get("input") == "place_wager" and "refused" not in item:  # as live: placements only
                key = (item["seat"], item["spot"])
                if str(item["source"]).startswith("gpio "):
                    placed.add(key)
                else:
                    placed.discard(key)
        return placed & set(self.table.staked)

    def _track_refused_cards(self, inp: Input, events: list[Event]) -> None:
        """A card refused while tilted (the tilt already holds its most) is out of the shoe and no hand
        or tilt holds it: in view until the tilt ends. Cards the tilt holds are the engine's state."""
        if self.table.tilt is None:
            self.refused_cards.clear()
        elif isinstance(inp, CardSeen) and len(events) == 1 and events[0].event == "refused":
            self.refused_cards.append(inp.card.code)

    def tilt_view(self) -> dict[str, Any] | None:
        """The tilt as status and the heartbeat show it: the snapshot's (reason, card, detail, held), and
        the cards refused past the bound of held cards."""
        tilt = self.table.tilt
        if tilt is None:
            return None
        return {**tilt.view(), "refused_cards": list(self.refused_cards)}

    def _track_wagers(self, source: str, events: list[Event]) -> None:
        """Which standing wagers chip sensors placed (``gpio ...`` sources): only those have chips to
        reconcile after a restart; a wager keyed by command never had chips on a sensor."""
        for event in events:
            if isinstance(event, WagerPlaced):
                key = (event.seat, event.spot)
                if source.startswith("gpio "):
                    self.sensor_wagers.add(key)
                else:
                    self.sensor_wagers.discard(key)
        if self.sensor_wagers:
            self.sensor_wagers &= set(self.table.staked)

    def checkpoint_due(self) -> bool:
        """:attr:`checkpoint_every` inputs went by since the last checkpoint, and (unless mid_round) the
        round is over; never while a tilt's refused cards wait for the dealer (:attr:`refused_cards`: the
        service's, not the table's, so not in a checkpoint; a start from one taken then lost them, a
        review, 2026-12-07: the replay from the checkpoint before rebuilds them)."""
        if self.journal.last_id - self.checkpoint_row < self.checkpoint_every or self.refused_cards:
            return False
        return self.checkpoint_mid_round or self.table.phase == "idle"

    def maybe_checkpoint(self) -> bool:
        """Write a checkpoint if one is due (:meth:`checkpoint_due`); True if it was written."""
        if not self.checkpoint_due():
            return False
        row = self.journal.last_id
        state = checkpoint.capture(row, self.seq, self.table, self.recorder, self.recent)
        try:
            size = checkpoint.write(self.journal, state, keep=self.checkpoint_keep)
        except (sqlite3.Error, OSError) as exc:
            # The input before it is committed and applied: it must not be reported as failed.
            # But the disk is failing: the journal is faulted, so the next input is refused.
            self.journal.mark_fault(f"checkpoint write failed: {type(exc).__name__}: {exc}")
            return False
        self.checkpoint_row = row
        log.info("checkpoint at row %d (seq %d, %d bytes)", row, self.seq, size)
        return True

    def events_since(self, since: int) -> list[dict[str, Any]] | None:
        """Events with seq > ``since`` if the ring still holds them all; ``None`` otherwise."""
        if since > self.seq:
            return None  # not a seq of this journal: the client must redraw from the state
        if since == self.seq:
            return []
        if not self.recent or self.recent[0][0] > since + 1:
            return None
        return [event_payload(self.table_id, s, e) for s, e in self.recent if s > since]

    def snapshot(self) -> dict[str, Any]:
        """The clone-pattern snapshot: the table state and the seq it stands at (and a journal fault)."""
        return {
            "table": self.table_id,
            "seq": self.seq,
            "currency": self.config.spec.currency.model_dump(),
            "state": self.table.snapshot(),
            "journal_fault": self.journal_fault(),
            "limits_pending": self.pending_limits_view(),
        }

    def pending_limits_view(self) -> dict[str, int] | None:
        """The table file's limits that wait for the round in play to end (None: none wait)."""
        change = self.limits_pending
        return None if change is None else change.limits()

    def journal_fault(self) -> dict[str, str] | None:
        """``{"file", "error"}`` once a journal write failed (the table is halted), else None."""
        fault = self.journal.fault
        return None if fault is None else {"file": str(fault.path), "error": fault.reason}

    def status(self) -> dict[str, Any]:
        t = self.table
        return {
            "table": self.table_id,
            "game": t.game.name,
            "round": t.round_no,
            "phase": t.phase,
            "seq": self.seq,
            "currency": self.config.spec.currency.model_dump(),
            "due": t.snapshot()["due"],
            "tilt": self.tilt_view(),
            "journal_fault": self.journal_fault(),
            "limits_pending": self.pending_limits_view(),
            "offline": dict(t.offline),
            "burn_next": t.burn_next,
            "dealer": t.dealer,
            "credits": {str(s): c for s, c in sorted(t.credits.items())},
            "wagers": [{"seat": s, "spot": p, "amount": a} for (s, p), a in sorted(t.staked.items())],
            "shoe": t.composition.to_dict(),
            "journal": {
                "path": str(self.journal.path),
                "rows": self.journal.last_id,
                "replayed_at_start": self.replayed,
                "checkpoint_row": self.checkpoint_row,
                "replay_seconds": round(self.replay_seconds, 3),
            },
        }


def dumps(data: Any) -> bytes:
    """JSON as every Croupier line is written (``json.dumps`` defaults), UTF-8."""
    return json.dumps(data).encode()

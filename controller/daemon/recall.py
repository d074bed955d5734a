"""Recall: the story of each round, rebuilt from the journal's inputs and the events they caused.

A disputed round is settled by looking at exactly what happened: the cards
in order, every decision, every wager, the settlement lines and each seat's
credits before and after. The recorder builds that from the same
(input, events) stream the daemon produces live and during replay, so a
round's record is the same whether it was played a second ago or rebuilt
from a journal after a restart. The daemon keeps the last rounds in memory;
older rounds are rebuilt on request by replaying the journal
(:func:`recall_from_journal`), so every round in the journal can be recalled.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from pathlib import Path
from typing import Any

from controller.events import Event
from controller.inputs import Input
from controller.table import Table

#: Events that belong to the round's record (credit changes between rounds do not).
_ROUND_EVENTS = frozenset(
    {
        "wager_placed",
        "wager_returned",
        "betting_closed",
        "card_dealt",
        "card_burned",
        "card_held",
        "burn_declared",
        "decision",
        "notice",
        "round_result",
        "tilt",
        "tilt_cleared",
        "refused",
        "device",
    }
)


class RoundRecorder:
    """Builds round records from (input, events); keeps the last ``keep`` finished rounds."""

    def __init__(self, keep: int = 100) -> None:
        self.keep = keep
        self.finished: deque[dict[str, Any]] = deque(maxlen=keep)
        self.current: dict[str, Any] | None = None

    def observe(
        self, seq_first: int, at: float, source: str, inp: Input, events: list[Event], table: Table
    ) -> None:
        """Account for one applied input (``seq_first`` is the seq of its first event)."""
        if inp.kind == "open_betting" and events and events[0].event == "betting_opened":
            self.current = {
                "round": table.round_no,
                "game": table.game.name,
                "status": "in_progress",
                "opened_at": at,
                "ended_at": None,
                "first_seq": seq_first,
                "last_seq": seq_first,
                "dealer": table.dealer,  # the dealer in at the round's first seq (controller.dealers)
                # The decimals of its amounts: the limits in force (a change of them waits for a round's
                # end), so a round played before a change is shown at its own scale, not today's.
                "minor_units": table.limits.minor_units,
                "credits_before": {str(s): c for s, c in sorted(table.credits.items())},
                "credits_after": None,
                "inputs": [],
                "wagers": [],
                "cards": [],
                "decisions": [],
                "result": None,
                "settlements": None,
                "house_net": None,
                "tilts": [],
                "bets": {},
            }
        cur = self.current
        if cur is None:
            return
        entry = {"at": at, "source": source, **inp.to_dict()}
        if events and events[0].event == "refused":  # marked, so a recall does not count it as done
            entry["refused"] = events[0].to_dict()["reason"]
        cur["inputs"].append(entry)
        for offset, event in enumerate(events):
            name = event.event
            cur["last_seq"] = seq_first + offset
            if name in ("round_settled", "round_voided"):
                d = event.to_dict()
                cur["status"] = "settled" if name == "round_settled" else "voided"
                cur["ended_at"] = at
                cur["settlements"] = d["settlements"]
                cur["house_net"] = d.get("house_net", 0)
                cur["credits_after"] = d["credits"]
                self.finished.append(cur)
                self.current = None
                return
            if name not in _ROUND_EVENTS:
                continue
            d = event.to_dict()
            if name in ("wager_placed", "wager_returned"):
                cur["wagers"].append(d)
            elif name in ("card_dealt", "card_burned", "card_held", "burn_declared"):
                cur["cards"].append(d)
            elif name == "decision":
                cur["decisions"].append(d)
            elif name == "round_result":
                cur["result"] = d["result"]
            elif name in ("tilt", "tilt_cleared", "device"):
                cur["tilts"].append(d)
        if table.phase == "betting":
            cur["bets"] = _standing(table)

    def last_bets(self, betting: bool) -> dict[int, dict[str, int]]:
        """Each seat's wagers standing when betting last ended: what a panel's ``repeat_bet`` repeats.

        ``betting``: the table is taking bets now, so the round in progress has not ended its betting
        and the finished round before it is the one to repeat. Rebuilt from the records (a checkpoint
        holds them too), so a restart repeats what the player last had down, not the table minimum.
        """
        rounds = list(self.finished)
        if self.current is not None and not betting:
            rounds.append(self.current)
        if not rounds:
            return {}
        return {int(seat): dict(spots) for seat, spots in rounds[-1].get("bets", {}).items()}

    def last(self, n: int) -> list[dict[str, Any]]:
        """The last ``n`` rounds, oldest first, the round in progress (if any) last."""
        rounds = list(self.finished)
        if self.current is not None:
            rounds.append(self.current)
        return rounds[-n:] if n > 0 else []


def _standing(table: Table) -> dict[str, dict[str, int]]:
    """The wagers standing now on the game's bet spots, by seat (JSON keys: the seat as text)."""
    spots = table.game.bet_spots
    bets: dict[str, dict[str, int]] = {}
    for (seat, spot), amount in sorted(table.staked.items()):
        if spot in spots:
            bets.setdefault(str(seat), {})[spot] = amount
    return bets


def recall_from_journal(
    conn: sqlite3.Connection, path: Path, table: Table, n: int, stop: int
) -> list[dict[str, Any]]:
    """Replay rows 1..``stop`` through ``table`` (fresh) and return the last ``n`` rounds."""
    from controller.daemon.journal import read_entries

    recorder = RoundRecorder(keep=n)
    seq = 1
    for entry in read_entries(conn, path, 1, stop):
        events = table.apply(entry.input)
        recorder.observe(seq, entry.at, entry.source, entry.input, events, table)
        seq += len(events)
    return recorder.last(n)

"""The table state the panels' lamps show, and what each dealer word posts: for the logic and the daemon."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from controller import inputs as I
from controller.cards import parse_card
from controller.game_base import DecisionDue
from controller.games.blackjack import is_natural
from controller.games.two_way_winner.rules import TwoWayWinner
from controller.games.two_way_winner.seat import offered_bets

if TYPE_CHECKING:
    from controller.table import Table

#: What each dealer button posts.
DEALER_INPUTS: dict[str, type[I.Input]] = {
    "open_betting": I.OpenBetting,
    "close_betting": I.CloseBetting,
    "confirm": I.ClearTilt,  # the dealer confirms an impossible card was taken out (held_card: take it)
    "burn": I.DeclareBurn,
    "void": I.VoidRound,
    "new_shoe": I.NewShoe,
}
#: Which spot's stake ``bet_2x`` doubles (2WayWinner's antes are equal when in play).
BET_2X_ANTE = "poker_ante"

Post = tuple[I.Input, str]
#: The fault key of a panel fault found in the journal at start (see :meth:`PanelLogic.restore`).
RESTORED = "before restart"
#: Joins the faults of one panel into its DeviceStatus detail.
JOIN = "; "


def seat_device(seat: int) -> str:
    return f"panel {seat}"


#: How a chips fault's words begin: chips moved after the close, chips of a wager missing at a start.
MOVED, MISSING = "chips moved after no more bets: ", "chips missing at start: "


def moved(spot: str, covered: bool) -> str:
    """The fault's words for chips put on (``covered``) or lifted from ``spot`` after no more bets."""
    return f"{MOVED}{spot} chips {'placed' if covered else 'lifted'}"


class Said(NamedTuple):
    """What a journaled chips fault says of its spot: its words, and whether the chips were on the spot
    when it was raised (put down after the close) or off (lifted after it, or missing at a start)."""

    words: str
    on: bool


def chips_said(detail: str) -> dict[str, Said]:
    """The spots a panel's journaled fault ``detail`` (its faults joined) names in a chips fault, each with
    :class:`Said`. The journal keeps only the words, and a restart must know which spots they were and what
    their chips read: to know the state at the close again, and to put simulated chips back as they were."""
    said: dict[str, Said] = {}
    for part in detail.split(JOIN):
        if part.startswith((MOVED, MISSING)):
            spot, rest = part.split(": ", 1)[1].split(" ", 1)
            said[spot] = Said(part, rest == "chips placed")
    return said


DEALER_DEVICE = "dealer panel"
#: The tilt the daemon shows when its journal cannot be written: no input is applied, so no
#: dealer action can resolve it (only a restart of the daemon with a working journal does).
JOURNAL_FAULT = "journal_fault"


@dataclass(frozen=True, slots=True)
class LampView:
    """The table state the lamps show; built from :meth:`Table.snapshot` data or from a table."""

    phase: str = "idle"
    #: Decision due now: seat -> legal actions.
    due: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    #: Accepted (staked) wagers: (seat, spot) -> amount.
    wagers: Mapping[tuple[int, str], int] = field(default_factory=dict)
    #: The tilt's reason (``card_not_due``, ``impossible_card``, ``device_offline``, ``held_card``;
    #: :data:`JOURNAL_FAULT` when the daemon cannot write its journal) or None.
    tilt: str | None = None
    dp_seat: int | None = None
    seated: frozenset[int] = frozenset()
    offline: tuple[str, ...] = ()
    burn_next: bool = False
    #: Seat -> the amounts its ``bet`` may stake now (2WayWinner's check-or-bet: see :func:`due_bets`).
    bets: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def from_snapshot(cls, snap: Mapping[str, Any]) -> LampView:
        due = snap.get("due") or {}
        decision = due.get("decision", {}) if isinstance(due, Mapping) else {}
        tilt = snap.get("tilt")
        game_state = snap.get("game_state") or {}
        dp = game_state.get("dp_seat")
        choices = {int(s): tuple(a) for s, a in decision.items()}
        wagers = {(int(w["seat"]), str(w["spot"])): int(w["amount"]) for w in snap.get("wagers", ())}
        credits = {int(s): int(c) for s, c in snap.get("credits", {}).items()}
        return cls(
            phase=str(snap["phase"]),
            due=choices,
            wagers=wagers,
            tilt=None if tilt is None else str(tilt["reason"]),
            dp_seat=None if dp is None else int(dp),
            seated=frozenset(int(s) for s in snap.get("credits", {})),
            offline=tuple(sorted(snap.get("offline", {}))),
            burn_next=bool(snap.get("burn_next", False)),
            bets=due_bets(snap.get("game"), choices, wagers, credits, lambda: snap.get("round_view") or {}),
        )

    @classmethod
    def from_table(cls, table: Table) -> LampView:
        """Cheaper than a snapshot (no meters, no shoe): what the daemon calls after every input."""
        due = table.due()
        dp = getattr(table.game, "dp_seat", None)
        choices = dict(due.choices) if isinstance(due, DecisionDue) else {}
        wagers = dict(table.staked)
        rnd = table.round
        return cls(
            phase=table.phase,
            due=choices,
            wagers=wagers,
            tilt=None if table.tilt is None else table.tilt.reason,
            dp_seat=dp if isinstance(dp, int) else None,
            seated=frozenset(table.credits),
            offline=tuple(sorted(table.offline)),
            burn_next=table.burn_next,
            bets=due_bets(table.game.name, choices, wagers, table.credits,
                          lambda: {} if rnd is None else rnd.view()),
        )


def due_bets(game: object, due: Mapping[int, tuple[str, ...]], wagers: Mapping[tuple[int, str], int],
             credits: Mapping[int, int],
             round_view: Callable[[], Mapping[str, Any]]) -> dict[int, tuple[int, ...]]:
    """Seat -> the amounts a ``bet`` due now may stake: what ``bet_2x`` may light.

    Only 2WayWinner's bet takes an amount: the round's own rule (:func:`offered_bets`) over the seat's
    two cards (the round's view), its ante and its credits, so a snapshot and a table give the same.
    The round's view is read only when a bet is due.
    """
    betting = [seat for seat, actions in due.items() if "bet" in actions]
    if game != TwoWayWinner.name or not betting:
        return {}
    seats = round_view().get("seats", {})
    out: dict[int, tuple[int, ...]] = {}
    for seat in betting:
        hands = seats.get(str(seat), {}).get("hands") or [[]]
        natural = is_natural([parse_card(code) for code in hands[0]])
        out[seat] = offered_bets(natural, wagers.get((seat, BET_2X_ANTE), 0), credits.get(seat, 0))
    return out

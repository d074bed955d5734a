"""The contract between the table and a game.

A game is a small state machine over shared building blocks. The table owns
money (credits, the wagers staked) and the shoe; a game owns the rules. At
every moment a round says what it is waiting for (:meth:`GameRound.due`): a
card for a named hand, a decision from given seats with their legal choices,
or nothing (the round is over). It accepts exactly that. Anything else is
refused with a :class:`Refusal` *before* any state changes, so the table can
report the reason and go on as if the input never came.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from controller.cards import Card
from controller.events import Event, WagerPlaced
from controller.limits import TableLimits
from controller.money import DEFAULT_CURRENCY, Currency


class Refusal(Exception):
    """An input that is not legal now. ``str(refusal)`` is the reason shown to people."""


@dataclass(frozen=True, slots=True)
class CardDue:
    """The next card goes to ``hand`` (``player``, ``seat 3``, ``dealer``, ...)."""

    hand: str


@dataclass(frozen=True, slots=True)
class DecisionDue:
    """These seats may decide now, each with its legal actions (one seat when in seat order)."""

    choices: Mapping[int, tuple[str, ...]]


Due = CardDue | DecisionDue | None


@dataclass(slots=True)
class Settlement:
    """One line of the settlement record: what a (seat, spot) staked and gained."""

    seat: int
    spot: str
    stake: int
    net: int

    def to_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "spot": self.spot, "stake": self.stake, "net": self.net}


class GameOptions(BaseModel):
    """Base of every game's table options: unknown keys are errors, values are frozen, and strict: a
    flag is true or false and a count a whole number, never a value read as the operator may have meant
    (1, "yes", "off", "6": the rules say other values stop the table with the key named)."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True, strict=True)

    decks: int


class RoundLedger:
    """The money of one round as a game sees it: stakes by (seat, spot) and the seats' credits.

    Stakes are debited from credits when placed; the table pays back
    ``stake + net`` at settlement. In-round wagers (doubles, extensions, plays)
    go through :meth:`add`, which refuses one the seat cannot fund.
    """

    __slots__ = ("round", "stakes", "credits", "money")

    def __init__(
        self,
        round_no: int,
        stakes: dict[tuple[int, str], int],
        credits: dict[int, int],
        money: Currency = DEFAULT_CURRENCY,
    ) -> None:
        self.round = round_no
        #: How the round's refusals show amounts (the table's currency).
        self.money = money
        self.stakes = stakes
        self.credits = credits  # shared with the table

    def stake(self, seat: int, spot: str) -> int:
        return self.stakes.get((seat, spot), 0)

    def seats(self) -> list[int]:
        """Seats holding a wager this round, in seat order."""
        return sorted({seat for seat, _ in self.stakes})

    def can_fund(self, seat: int, amount: int) -> bool:
        return self.credits.get(seat, 0) >= amount

    def check_fund(self, seat: int, amount: int, what: str) -> None:
        """Raise :class:`Refusal` unless ``seat`` can stake ``amount`` more."""
        have = self.credits.get(seat, 0)
        if have < amount:
            m = self.money.format
            raise Refusal(f"seat {seat} cannot fund {what} of {m(amount)}: credits {m(have)}")

    def add(self, seat: int, spot: str, amount: int) -> WagerPlaced:
        """Stake ``amount`` more on ``spot`` for ``seat`` (checked first: nothing changes on refusal)."""
        self.check_fund(seat, amount, f"the {spot} wager")
        self.credits[seat] -= amount
        total = self.stakes.get((seat, spot), 0) + amount
        self.stakes[(seat, spot)] = total
        return WagerPlaced(self.round, seat, spot, total, self.credits[seat])


class GameRound(ABC):
    """One round of a game, from betting closed to settlement."""

    __slots__ = ("ledger", "finished")

    def __init__(self, ledger: RoundLedger) -> None:
        self.ledger = ledger
        #: Set by the round once it needs nothing more; the table then settles it.
        self.finished = False

    @abstractmethod
    def due(self) -> Due:
        """What the round waits for now; ``None`` once finished."""

    @abstractmethod
    def on_card(self, card: Card) -> list[Event]:
        """Take the card that :meth:`due` asked for (the table has checked that one is due)."""

    def on_decision(self, seat: int, action: str, amount: int | None) -> list[Event]:
        """Take a decision that :meth:`due` offered (the table has checked seat and action)."""
        raise Refusal("this game takes no decisions")

    def start(self) -> list[Event]:
        """Events at the start of the round (after betting closes); may finish the round."""
        return []

    @abstractmethod
    def result(self) -> dict[str, Any]:
        """The result record of a finished round (keys per the game's rules file)."""

    @abstractmethod
    def settlements(self) -> list[Settlement]:
        """One line per (seat, spot) that held a wager, plus banker-seat lines."""

    def view(self) -> dict[str, Any]:
        """The round so far, for snapshots and displays."""
        return {}


class Game(ABC):
    """A game's rules and its state across rounds (e.g. the Designated Player)."""

    name: ClassVar[str]
    #: Spots a player may bet before the deal.
    bet_spots: ClassVar[tuple[str, ...]]
    #: Decision words this game accepts.
    actions: ClassVar[tuple[str, ...]] = ()
    #: Seats at the table when a table file does not say.
    default_seats: ClassVar[int] = 7
    #: True if a round is dealt with no wagers (Baccarat); else it settles at once.
    deals_without_wagers: ClassVar[bool] = False
    #: True if every round is dealt from a freshly shuffled shoe (2WayWinner's one deck): betting does not
    #: close on wagers while a card has been seen since the last new shoe.
    fresh_shoe_every_round: ClassVar[bool] = False
    options_model: ClassVar[type[GameOptions]]

    def __init__(self, options: GameOptions) -> None:
        self.options = options

    @property
    def decks(self) -> int:
        return self.options.decks

    def check_bets(self, seat: int, bets: Mapping[str, int], limits: TableLimits) -> None:
        """Refuse a combination of pre-deal wagers the rules forbid.

        The table has already checked each chosen wager against the unit and
        the limits; this is for the game's own rules (Player with Banker, an
        odd number of units under an Odds-Win, a wager from the DP seat).
        """
        return None

    def with_derived(self, bets: Mapping[str, int]) -> dict[str, int]:
        """The wagers actually staked for the chosen ones (e.g. Swap-Hand's Odds-Win)."""
        return dict(bets)

    def playable(self, seat: int, bets: Mapping[str, int]) -> str | None:
        """When betting closes: ``None`` if the seat takes part, else why its wagers go back."""
        return None

    def check_close(self, seats: list[int]) -> None:
        """Refuse closing betting when the game cannot start (e.g. no Designated Player)."""
        return None

    @abstractmethod
    def new_round(self, ledger: RoundLedger) -> GameRound:
        """A round over the wagers fixed when betting closed."""

    def after_round(self, seated: list[int]) -> list[Event]:
        """Between rounds (e.g. the Designated Player rotates)."""
        return []

    def set_designated_player(self, seat: int, seated: list[int]) -> list[Event]:
        raise Refusal(f"{self.name} has no Designated Player")

    def view(self) -> dict[str, Any]:
        """Game state across rounds, for snapshots."""
        return {}

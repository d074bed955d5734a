"""2WayWinner table options and the Dealer Bonus pay table.

The pay table is an operator setting (the seed only says that it starts at
a pair of jacks), so it is configuration, validated like every option: a
table file gives a mapping of the documented keys to quoted odds or
``lose``; keys left out keep the shipped default; an unknown key or an
unquoted number is refused naming the key. The same classification of a
five-card hand into those keys serves the engine (settling the wager) and
the par-sheet tool (its exact return), so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Final

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer

from controller.cards import Card
from controller.game_base import GameOptions
from controller.games.poker_hands import HandRank, PokerHand, best_hand
from controller.money import Odds, OddsError
from controller.options import OddsText

#: The pay-table keys, best hand first (the order of the rules' table).
BONUS_KEYS: Final = (
    "royal_flush",
    "straight_flush",
    "four_of_a_kind",
    "full_house",
    "flush",
    "straight",
    "three_of_a_kind",
    "two_pair",
    "jacks_or_better",
)

#: The word for a hand that loses, in a pay table.
LOSE: Final = "lose"

#: Lowest pair that qualifies as ``jacks_or_better`` (J = 11).
JACKS: Final = 11


def _odds_or_lose(value: object) -> Odds | None:
    """``'n:d'`` -> Odds, ``'lose'`` -> None; a bare number is refused (YAML reads 5:1 as 301)."""
    if value == LOSE:
        return None
    if isinstance(value, Odds):
        return value
    try:
        return Odds.parse(value)
    except OddsError as exc:
        raise ValueError(f"{exc} or 'lose'") from None


def _show(value: Odds | None) -> str:
    return LOSE if value is None else str(value)


#: A pay-table entry: quoted odds, or ``lose``.
BonusPay = Annotated[Odds | None, BeforeValidator(_odds_or_lose), PlainSerializer(_show, return_type=str)]


class DealerBonusPayTable(BaseModel):
    """What each community hand pays on the Dealer Bonus (``None`` = loses). Defaults: the shipped table."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    royal_flush: BonusPay = Odds(1000, 1)
    straight_flush: BonusPay = Odds(250, 1)
    four_of_a_kind: BonusPay = Odds(100, 1)
    full_house: BonusPay = Odds(40, 1)
    flush: BonusPay = Odds(20, 1)
    straight: BonusPay = Odds(15, 1)
    three_of_a_kind: BonusPay = Odds(8, 1)
    two_pair: BonusPay = Odds(5, 1)
    jacks_or_better: BonusPay = Odds(1, 1)

    def pays(self, key: str | None) -> Odds | None:
        """The odds paid for a hand of pay-table ``key`` (``None``: the wager loses)."""
        if key is None:
            return None
        odds: Odds | None = getattr(self, key)
        return odds

    def as_text(self) -> dict[str, str]:
        return {key: _show(self.pays(key)) for key in BONUS_KEYS}


def _natural_pays(odds: Odds) -> Odds:
    if str(odds) not in ("6:5", "3:2"):
        raise ValueError(f"must be '6:5' or '3:2', not '{odds}'")
    return odds


class TwoWayWinnerOptions(GameOptions):
    """The 2WayWinner table options (docs/rules/two_way_winner.md)."""

    decks: int = Field(default=1, ge=1, le=1, description="one 52-card deck (fixed by the game)")
    natural_pays: Annotated[OddsText, AfterValidator(_natural_pays)] = Odds(6, 5)
    dealer_bonus_paytable: DealerBonusPayTable = Field(default_factory=DealerBonusPayTable)
    max_seats: int = Field(default=6, ge=1, le=6)


def bonus_key(hand: PokerHand) -> str | None:
    """The pay-table key of a five-card community hand; ``None`` below a pair of jacks."""
    rank = hand.rank
    if rank is HandRank.ONE_PAIR:
        # Reading order puts the pair first.
        return "jacks_or_better" if hand.cards[0].rank_value >= JACKS else None
    if rank is HandRank.HIGH_CARD:
        return None
    return rank.name.lower()


def community_bonus(community: Sequence[Card]) -> tuple[PokerHand, str | None]:
    """The community's poker hand and its pay-table key (five cards)."""
    if len(community) != 5:
        raise ValueError(f"the Dealer Bonus settles on five community cards, not {len(community)}")
    hand = best_hand(community)
    return hand, bonus_key(hand)


def bonus_view(hand: PokerHand, key: str | None) -> dict[str, Any]:
    """The ``bonus_hand`` entry of the result record."""
    return {**hand.to_dict(), "pays": key}

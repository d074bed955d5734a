"""Baccarat (Punto Banco): the tableau decides every draw; players only bet.

Rules: docs/rules/baccarat.md. There are no decisions, so a round is four to
six cards in a fixed order; the Banker's third-card table is the only rule
with any depth and lives in :data:`BANKER_DRAWS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from controller.cards import Card
from controller.events import CardDealt, Event
from controller.game_base import CardDue, Due, Game, GameOptions, GameRound, Refusal, RoundLedger, Settlement
from controller.limits import TableLimits
from controller.money import EVEN, Odds
from controller.options import OddsText, odds_in


class BaccaratOptions(GameOptions):
    decks: int = Field(default=8, ge=1, le=8)
    deal_order: Literal["PPBB", "PBPB"] = "PPBB"
    tie_pays: Annotated[OddsText, odds_in("9:1", "8:1")] = Odds(9, 1)
    banker_pays: Annotated[OddsText, odds_in("19:20")] = Odds(19, 20)


#: Baccarat value of each rank, indexed by ``card.rank_value`` (2..14).
VALUE = (0, 0, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0, 1)

#: BANKER_DRAWS[banker_score][v]: does a Banker with that two-card score draw
#: when the Player drew a third card of value v? (The seed's tableau.)
BANKER_DRAWS: tuple[tuple[bool, ...], ...] = (
    (True,) * 10,  # 0
    (True,) * 10,  # 1
    (True,) * 10,  # 2
    tuple(v != 8 for v in range(10)),  # 3
    tuple(2 <= v <= 7 for v in range(10)),  # 4
    tuple(4 <= v <= 7 for v in range(10)),  # 5
    tuple(6 <= v <= 7 for v in range(10)),  # 6
    (False,) * 10,  # 7
)

_PLAYER = CardDue("player")
_BANKER = CardDue("banker")


class BaccaratRound(GameRound):
    """One coup: four cards in deal order, then the tableau's third cards."""

    __slots__ = ("game", "player", "banker", "_next", "natural", "pscore", "bscore")

    def __init__(self, game: Baccarat, ledger: RoundLedger) -> None:
        super().__init__(ledger)
        self.game = game
        self.player: list[Card] = []
        self.banker: list[Card] = []
        self._next: CardDue | None = game.first_four[0]
        self.natural = False
        self.pscore = 0  # running scores: the tableau reads them after every card
        self.bscore = 0

    def due(self) -> Due:
        return self._next

    def on_card(self, card: Card) -> list[Event]:
        # By name, not identity: a round restored from a journal checkpoint holds equal, not identical, dues.
        due = self._next
        player, banker = self.player, self.banker
        if due is not None and due.hand == "player":
            hand = "player"
            player.append(card)
            self.pscore = (self.pscore + VALUE[card.rank_value]) % 10
        else:
            hand = "banker"
            banker.append(card)
            self.bscore = (self.bscore + VALUE[card.rank_value]) % 10
        n = len(player) + len(banker)
        if n < 4:
            self._next = self.game.first_four[n]
        else:
            self._next = due = self._third_card_rule()
            if due is None:
                self.finished = True
        return [CardDealt(self.ledger.round, card.code, hand)]

    def _third_card_rule(self) -> CardDue | None:
        p, b = self.player, self.banker
        ps, bs = self.pscore, self.bscore
        if len(p) == 2 and len(b) == 2:
            if ps >= 8 or bs >= 8:
                self.natural = True
                return None
            if ps <= 5:
                return _PLAYER
            return _BANKER if bs <= 5 else None
        if len(b) == 2:
            if len(p) == 3:  # the Player drew: the tableau decides
                return _BANKER if BANKER_DRAWS[bs][VALUE[p[2].rank_value]] else None
            return None
        return None

    def winner(self) -> str:
        ps, bs = self.pscore, self.bscore
        return "player" if ps > bs else "banker" if bs > ps else "tie"

    def result(self) -> dict[str, Any]:
        p, b = self.player, self.banker
        return {
            "winner": self.winner(),
            "player_cards": [c.code for c in p],
            "banker_cards": [c.code for c in b],
            "player_score": self.pscore,
            "banker_score": self.bscore,
            "natural": self.natural,
            "player_pair": p[0].rank == p[1].rank,
            "banker_pair": b[0].rank == b[1].rank,
        }

    def settlements(self) -> list[Settlement]:
        winner = self.winner()
        odds = self.game.pays[winner]
        push = winner == "tie"  # a tie pushes Player and Banker; any other result loses the other spots
        return [
            Settlement(seat, spot, stake, odds.win(stake) if spot == winner else 0 if push else -stake)
            for (seat, spot), stake in self.ledger.stakes.items()
        ]

    def view(self) -> dict[str, Any]:
        return {
            "player_cards": [c.code for c in self.player],
            "banker_cards": [c.code for c in self.banker],
        }


class Baccarat(Game):
    name: ClassVar[str] = "baccarat"
    bet_spots: ClassVar[tuple[str, ...]] = ("player", "banker", "tie")
    deals_without_wagers: ClassVar[bool] = True
    options_model: ClassVar[type[GameOptions]] = BaccaratOptions
    options: BaccaratOptions

    def __init__(self, options: GameOptions) -> None:
        assert isinstance(options, BaccaratOptions)
        super().__init__(options)
        order = {"PPBB": "PPBB", "PBPB": "PBPB"}[options.deal_order]
        self.first_four = tuple(_PLAYER if h == "P" else _BANKER for h in order)
        #: What a winning stake on each spot is paid at (read every round: kept out of the options model).
        self.pays = {"player": EVEN, "banker": options.banker_pays, "tie": options.tie_pays}

    def check_bets(self, seat: int, bets: Mapping[str, int], limits: TableLimits) -> None:
        if "player" in bets and "banker" in bets:
            raise Refusal(f"seat {seat} cannot bet Player and Banker in the same round")

    def new_round(self, ledger: RoundLedger) -> BaccaratRound:
        return BaccaratRound(self, ledger)

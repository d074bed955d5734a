"""Each game's par figures for the floor's reports and drift alerts: the house's expected result and variance.

A report's theoretical win is the amount staked times the house's edge per unit, each bet type at the
exact figure of the project's own par sheet for the table's game and options (``croupier math``):
Baccarat and One Card Poker computed here as fractions, Swap-Hand and 2WayWinner read from their stored
exact sheets (``exact_defaults.json``; the blackjack games' figures depend on how the players play, and
the report uses :data:`STRATEGY`). A table whose options have no stored sheet gets no theoretical win
rather than a wrong one (:class:`NoPar`). Figures are the house's, per unit of the bet type's *base*: its
own settled stake, or for the blackjack games the wager placed when betting closed (doubles, splits and
plays are part of the figure per unit of it), counted in every round it stands, a line or not. The
results-drift rule (controller/floor/integrity/drift.py) takes its laws from here too, so each game's
par has one source.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

from controller.games.baccarat.par_sheet import outcome_weights
from controller.money import Odds

#: Which strategy's exact figures stand for the players' play in the blackjack games: the best
#: composition-dependent play, so the theoretical win is the least the house can expect.
STRATEGY = "optimal"
#: The pseudo bet type of a round's whole result, for a par that gives its standard deviation only.
ROUND = "(round)"


class NoPar(Exception):
    """The project has no exact par figure for this game, options or bet (the report says so)."""


@dataclass(frozen=True)
class BetPar:
    """One bet type: the house's expected result and variance per unit of its base (None: unknown)."""

    edge: Fraction
    variance: Fraction | None
    #: The record's wager (``bets`` at the close of betting) the figures are per unit of; None: the
    #: bet type's own settled stake.
    base: str | None = None
    #: The figures are of :data:`STRATEGY`'s play (the blackjack games): players playing otherwise
    #: expect less, never more.
    strategy: bool = False


@dataclass(frozen=True)
class GamePar:
    """A game's par under its options: each settlement spot's bet type, each type's figures, and (when
    every seat shares the round's outcome) the joint law of the house's result per unit of each type."""

    game: str
    types: dict[str, BetPar]
    #: settlement spot -> (bet type, whether its stake counts as wagered)
    spots: dict[str, tuple[str, bool]]
    #: (probability, the house's net per unit of each type) for each outcome; empty: seats differ.
    joint: tuple[tuple[Fraction, dict[str, Fraction]], ...] = ()
    #: (base spot, standard deviation per unit of it) of a round's whole result, for the types whose
    #: own variance the par sheet does not give.
    round_sd: tuple[str, Fraction] | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def covariance(self, t: str, u: str) -> Fraction | float | None:
        """Of the house's results per unit of bet types ``t`` and ``u`` in one round: exact from the joint
        law; else the bound sd_t x sd_u (their correlation at most 1), ``ROUND`` standing for the types
        without a variance of their own; None if unknown."""
        if self.joint:
            def mean(name: str) -> Fraction:
                return sum((p * h[name] for p, h in self.joint), Fraction(0))
            return sum((p * h[t] * h[u] for p, h in self.joint), Fraction(0)) - mean(t) * mean(u)
        sds = []
        for name in (t, u):
            if name == ROUND:
                sds.append(None if self.round_sd is None else float(self.round_sd[1]))
            elif self.types[name].variance is None:
                sds.append(0.0 if self.round_sd is not None else None)  # in the round's figure
            else:
                sds.append(math.sqrt(self.types[name].variance or 0))
        a, b = sds
        return None if a is None or b is None else a * b

    def type_of(self, spot: str) -> tuple[str, bool]:
        if spot not in self.spots:
            raise NoPar(f"{self.game}: no par figure for the bet {spot!r}")
        return self.spots[spot]


@lru_cache(maxsize=16)
def baccarat_probabilities(decks: int) -> dict[str, dict[str, Fraction]]:
    """Exact outcome probabilities from the par sheet: the winner, and each hand's first two cards a pair."""
    banker, player, tie, total = outcome_weights(decks)
    pair = Fraction(4 * decks - 1, 52 * decks - 1)  # the second of any two cards has the first's rank
    return {
        "winner": {"banker": Fraction(banker, total), "player": Fraction(player, total),
                   "tie": Fraction(tie, total)},
        "player_pair": {"yes": pair, "no": 1 - pair},
        "banker_pair": {"yes": pair, "no": 1 - pair},
    }


def _fraction(value: float | Fraction) -> Fraction:
    """A stored float figure as the exact fraction of its binary value (sums stay order-independent)."""
    return value if isinstance(value, Fraction) else Fraction(value)


def _joint_par(game: str, joint: tuple[tuple[Fraction, dict[str, Fraction]], ...],
               spots: dict[str, tuple[str, bool]], note: str) -> GamePar:
    names = joint[0][1].keys()
    types = {}
    for name in names:
        mean = sum((p * h[name] for p, h in joint), Fraction(0))
        types[name] = BetPar(mean, sum((p * h[name] ** 2 for p, h in joint), Fraction(0)) - mean ** 2)
    return GamePar(game, types, spots, joint, note=note)


def baccarat(options: dict[str, Any]) -> GamePar:
    """Every seat shares the coup: the joint law is exact (a tie pushes Banker and Player)."""
    decks = int(options.get("decks", 8))
    bank = Odds.parse(str(options.get("banker_pays", "19:20")))
    tie = Odds.parse(str(options.get("tie_pays", "9:1")))
    w = baccarat_probabilities(decks)["winner"]
    one, zero = Fraction(1), Fraction(0)
    joint = (
        (w["banker"], {"banker": -Fraction(bank.num, bank.den), "player": one, "tie": one}),
        (w["player"], {"banker": one, "player": -one, "tie": one}),
        (w["tie"], {"banker": zero, "player": zero, "tie": -Fraction(tie.num, tie.den)}),
    )
    spots = {s: (s, True) for s in ("banker", "player", "tie")}
    return _joint_par("baccarat", joint, spots, f"exact, {decks} decks, Tie {tie}, Banker {bank}")


def one_card_poker(options: dict[str, Any]) -> GamePar:
    """The house banks the Tie wager (unless ``tie_banker: dp``) and takes the DP's fee; the primary
    and extensions are banked by the Designated Player (the house's figure is 0, its result 0)."""
    from controller.games.one_card_poker.par_sheet import first_cards

    decks = int(options.get("decks", 1))
    pays = Odds.parse(str(options.get("tie_pays", "10:1")))
    p_tie = first_cards(decks)[2]
    win = Fraction(pays.num, pays.den)
    tie_house = options.get("tie_banker", "house") == "house"
    edge = 1 - p_tie * (1 + win)  # tie_wager_edge's figure
    types = {"dp_banked": BetPar(Fraction(0), Fraction(0)), "dp_fee": BetPar(Fraction(1), Fraction(0))}
    spots = {"primary": ("dp_banked", True), "extension": ("dp_banked", True), "bank": ("dp_banked", False),
             "fee": ("dp_fee", True), "tie": ("tie" if tie_house else "dp_banked", True)}
    if tie_house:
        types["tie"] = BetPar(edge, p_tie * win ** 2 + (1 - p_tie) - edge ** 2)
    return GamePar("one_card_poker", types, spots,
                   note=f"exact, {decks} deck(s), Tie {pays} banked by the {'house' if tie_house else 'DP'}")


@lru_cache(maxsize=8)
def _swap_hand(key: str) -> GamePar:
    from controller.games.swap_hand.exact_sheet import cached
    from controller.games.swap_hand.options import SwapHandOptions

    options = SwapHandOptions.model_validate(json.loads(key))
    sheet = cached(options)
    if sheet is None:
        raise NoPar("swap_hand: no stored exact sheet for these options "
                    "(croupier math swap_hand computes one)")
    returns = sheet.returns()[STRATEGY]
    main_sd = sheet.main_spread()[STRATEGY]["standard_deviation"][1]  # the upper bound (split rounds)
    odds_sd = sheet.odds_win_spread()[STRATEGY]["standard_deviation"]
    types = {"main": BetPar(-_fraction(returns["main"]), _fraction(main_sd) ** 2, base="main", strategy=True),
             "odds_win": BetPar(-_fraction(returns["odds_win"]), _fraction(odds_sd) ** 2, strategy=True)}
    return GamePar("swap_hand", types, {"main": ("main", True), "odds_win": ("odds_win", True)},
                   note=f"stored exact sheet, {STRATEGY} strategy; Main per unit of the Main placed, its "
                        "standard deviation the sheet's upper bound")


def swap_hand(options: dict[str, Any]) -> GamePar:
    return _swap_hand(json.dumps(options, sort_keys=True))


@lru_cache(maxsize=8)
def _two_way_winner(key: str) -> GamePar:
    from controller.games.two_way_winner.bonus_math import par_sheet
    from controller.games.two_way_winner.exact_sheet import cached, figures
    from controller.games.two_way_winner.options import TwoWayWinnerOptions

    options = TwoWayWinnerOptions.model_validate(json.loads(key))
    exact = cached(str(options.natural_pays))
    if exact is None:
        raise NoPar("two_way_winner: no stored exact sheet for natural_pays "
                    f"{options.natural_pays} (croupier math two_way_winner computes one)")
    sheet = exact.sheets[STRATEGY]
    types = {w: BetPar(-_fraction(net), None, base="bj_ante", strategy=True)
             for w, net in sheet.shares.items()}
    bonus = par_sheet(options.dealer_bonus_paytable)
    types["dealer_bonus"] = BetPar(bonus["house_edge"], bonus["variance"])
    round_sd = figures(sheet)["standard_deviation_per_round_in_antes"][1]
    return GamePar("two_way_winner", types, {t: (t, True) for t in types},
                   round_sd=("bj_ante", _fraction(round_sd)),
                   note=f"stored exact sheet, {STRATEGY} strategy, per ante; no variance per wager (the "
                        "sheet gives the round's, upper bound, used for the total)")


def two_way_winner(options: dict[str, Any]) -> GamePar:
    return _two_way_winner(json.dumps(options, sort_keys=True))


GAMES = {"baccarat": baccarat, "one_card_poker": one_card_poker, "swap_hand": swap_hand,
         "two_way_winner": two_way_winner}


def par_for(game: str, options: dict[str, Any]) -> GamePar:
    """The par of ``game`` under ``options`` (a journal's header); :class:`NoPar` if there is none."""
    if game not in GAMES:
        raise NoPar(f"no par sheet for the game {game!r}")
    return GAMES[game](options)


@dataclass
class RoundTerms:
    """One round's settlement lines per bet type: the stakes counted as wagered, the house's net, and the
    base each type's par is per unit of (with :data:`ROUND`'s when the par gives the round's spread)."""

    wagered: dict[str, int] = field(default_factory=dict)
    house: dict[str, int] = field(default_factory=dict)
    bases: dict[str, int] = field(default_factory=dict)


def round_terms(par: GamePar | None, lines: Iterable[tuple[str, int, int]],
                placed: Iterable[tuple[str, int]]) -> RoundTerms:
    """The terms of a round's ``lines`` ((spot, stake, net) each) under ``par`` (None: no par, each spot
    its own bet type, its base its stake); ``placed``: (spot, amount) of each wager standing when
    betting closed (a blackjack game's base)."""
    terms = RoundTerms()
    for spot, stake, net in lines:
        name = spot.split(":")[0]  # a split hand's line (bj_play:2) is its bet's
        kind, counted = (name, True) if par is None else par.type_of(name)
        terms.wagered[kind] = terms.wagered.get(kind, 0) + (stake if counted else 0)
        terms.house[kind] = terms.house.get(kind, 0) - net
    terms.bases = dict(terms.wagered)
    if par is not None:
        amounts: dict[str, int] = {}
        for spot, amount in placed:
            amounts[spot] = amounts.get(spot, 0) + amount
        # A type whose par is per unit of a placed wager takes that wager in every round it stands, its
        # line or not: 2WayWinner's shares are each wager's net per ante over all rounds (0 in a round
        # without it: no Blackjack Play when the seat plays Poker), so a share counts on every ante.
        terms.bases = {k: stake if par.types[k].base is None else amounts.get(par.types[k].base or "", 0)
                       for k, stake in terms.wagered.items()}
        terms.bases.update((k, amounts[bet.base]) for k, bet in par.types.items()
                           if bet.base is not None and amounts.get(bet.base))
        if par.round_sd is not None:
            terms.bases[ROUND] = amounts.get(par.round_sd[0], 0)
    return terms


def record_lines(record: Mapping[str, Any]) -> tuple[tuple[str, int, int], ...]:
    """(spot, stake, net) of each settlement line of a round's record (as ``ctl recall`` and the floor's
    ``rounds`` hold it)."""
    return tuple((str(s["spot"]), int(s["stake"]), int(s["net"])) for s in record.get("settlements") or ())


def in_play(record: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """The wagers of a round's record that were in play: those of its ``bets`` (standing when betting
    ended) with a settlement line. A wager the close gave back (2WayWinner's unequal antes) has none: it
    was counted in the theoretical win, the seats with a wager and the drift's base (a review,
    2026-12-07), while ``bets`` keep it for ``repeat_bet``, which repeats what the player had down."""
    lines = {(str(s["seat"]), str(s["spot"])) for s in record.get("settlements") or ()}
    out: dict[str, dict[str, int]] = {}
    for seat, spots in (record.get("bets") or {}).items():
        kept = {spot: int(a) for spot, a in spots.items() if (str(seat), spot) in lines}
        if kept:
            out[str(seat)] = kept
    return out


def record_bets(record: Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
    """(spot, amount) of each wager of a round's record in play (:func:`in_play`), sorted."""
    return tuple(sorted((spot, a) for seat in in_play(record).values() for spot, a in seat.items()))


def record_terms(par: GamePar, record: Mapping[str, Any]) -> RoundTerms:
    """:func:`round_terms` of a settled round's record."""
    return round_terms(par, record_lines(record), record_bets(record))

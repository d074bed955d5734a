"""The alert service's results-drift rule without I/O (controller/floor/alerting/shoes.py, DriftWatch):
each game's rigged pay table, dealt through its real engine, drifts out within the rounds docs/floor.md
predicts while its honest table does not, and the window's money across a change of decimals."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

import pytest
from alerting_rules_support import T0, kinds, rigged_rounds, settled_row

from controller import inputs as I
from controller.daemon.recall import RoundRecorder
from controller.events import Event
from controller.floor.alerting.rules import Pit, Raise
from controller.floor.alerting.shoes import DRIFT_WINDOW, DriftWatch
from controller.floor.integrity.drift import BetLaw, laws, rounds_to_detect
from controller.floor.report_par import par_for
from controller.game_base import CardDue, DecisionDue
from controller.games.blackjack_strategy import Chart
from controller.games.one_card_poker.rules import OneCardPoker, OneCardPokerOptions
from controller.games.swap_hand import seat as swap_seat
from controller.games.swap_hand.options import SwapHandOptions
from controller.games.swap_hand.play import Player, SimTable
from controller.games.swap_hand.simulation import cut_card
from controller.games.two_way_winner import simulation as two_way
from controller.games.two_way_winner.options import DealerBonusPayTable, TwoWayWinnerOptions
from controller.limits import TableLimits
from controller.money import Odds
from controller.simulation.shoe_shuffle import ShuffledShoe
from controller.table import Table


def recorded(table: Table) -> deque[dict[str, Any]]:
    """The round records a daemon would make of ``table`` from now on (its own RoundRecorder told of
    every input applied), as the row messages that end rounds carry them."""
    recorder, apply, seq = RoundRecorder(keep=10**6), table.apply, [1]

    def observed(inp: I.Input) -> list[Event]:
        events = apply(inp)
        recorder.observe(seq[0], 0.0, "test", inp, events, table)
        seq[0] += len(events)
        return events

    table.apply = observed  # type: ignore[method-assign]
    return recorder.finished


def first_flagged(table: str, game: str, records: Iterator[dict[str, Any]]) -> int | None:
    """The round after which a fresh alert service first raises drift on ``records``, or None."""
    pit = Pit()
    for n, record in enumerate(records, start=1):
        got = pit.row(settled_row(table, n, game, record), T0 - 60)
        assert all(isinstance(a, Raise) and a.kind == "results_drift" for a in got), got
        if got:
            return n
    return None


def test_a_banker_paid_even_money_by_the_real_engine_drifts_out_within_the_rounds_the_docs_predict() -> None:
    honest, rigged = (laws(par_for("baccarat", {"banker_pays": p}))["banker"] for p in ("19:20", "1:1"))
    predicted = rounds_to_detect(honest, rigged, 0.99)
    assert predicted == 52_708 == DRIFT_WINDOW  # docs/floor.md's figure, and the service's window
    flagged = first_flagged("rigged", "baccarat", rigged_rounds(Odds(1, 1), predicted, seed=27))
    assert flagged is not None and flagged <= predicted
    print(f"the rigged table flagged after {flagged} rounds")
    assert first_flagged("honest", "baccarat", rigged_rounds(Odds(19, 20), flagged, seed=27)) is None


def one_card_poker_rounds(tie_pays: Odds, rounds: int, seed: int) -> Iterator[dict[str, Any]]:
    """The real engine's records: seat 1 the DP, seat 2 staking 100 on the primary and 100 on the Tie
    (extending every tie, the DP extending too), the Tie paid ``tie_pays`` (the rig when not 10:1)."""
    game = OneCardPoker(OneCardPokerOptions())
    game.options = game.options.model_copy(update={"tie_pays": tie_pays})  # past the options' check
    table = Table(game, TableLimits(seats=2))
    records = recorded(table)
    for inp in (I.CreditIn(1, 10**15), I.CreditIn(2, 10**15), I.SetDesignatedPlayer(1)):
        table.apply(inp)
    yield from _dealt(table, records, [I.PlaceWager(2, "primary", 100), I.PlaceWager(2, "tie", 100)],
                      ShuffledShoe(1, seed, 8), rounds)


def _dealt(table: Table, records: deque[dict[str, Any]], wagers: list[I.Input], shoe: ShuffledShoe,
           rounds: int) -> Iterator[dict[str, Any]]:
    for _ in range(rounds):
        if shoe.needs_shuffle():
            shoe.shuffle()
            table.apply(I.NewShoe())
        for inp in (I.OpenBetting(), *wagers, I.CloseBetting()):
            table.apply(inp)
        while not records or records[-1]["status"] == "in_progress" or table.round is not None:
            due = table.due()
            if isinstance(due, CardDue):
                table.apply(I.CardSeen(shoe.draw()))
            elif isinstance(due, DecisionDue):
                seat, legal = min(due.choices.items())
                table.apply(I.Decision(seat, legal[0], None))
            else:
                break
        yield records.pop()


def swap_hand_rounds(odds_win_pays: Odds, rounds: int, seed: int,
                     monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """The real engine's records, one seat playing the simulator's chart, the Odds-Win paid
    ``odds_win_pays`` (the rig when not 2:1)."""
    monkeypatch.setattr(swap_seat, "ODDS_WIN_PAYS", odds_win_pays)
    options = SwapHandOptions()
    sim = SimTable(options)
    records = recorded(sim.table)
    player = Player(Chart(options.dealer_hits_soft_17, options.double_after_split))
    shoe = ShuffledShoe(options.decks, seed, cut_card(options.decks))
    sim.new_shoe()
    for _ in range(rounds):
        if shoe.needs_shuffle():
            shoe.shuffle()
            sim.new_shoe()
        sim.play(shoe.draw, player)
        yield records.pop()


def two_way_winner_rounds(paytable: DealerBonusPayTable, rounds: int, seed: int,
                          monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """The real engine's records, one seat playing the simulator's policy with antes and the Dealer
    Bonus, the bonus paid by ``paytable`` (the rig when not the default)."""
    kept: list[deque[dict[str, Any]]] = []

    def table(*args: Any, **kwargs: Any) -> Table:
        made = Table(*args, **kwargs)
        kept.append(recorded(made))
        return made

    monkeypatch.setattr(two_way, "Table", table)
    monkeypatch.setattr(two_way, "TwoWayWinnerOptions",
                        lambda **kw: TwoWayWinnerOptions(**kw, dealer_bonus_paytable=paytable))
    two_way.play(rounds, seed, 1, "6:5", with_bonus=True, progress=False)
    yield from kept[0]


#: One Card Poker's Tie paid 20:1 (10:1), Swap-Hand's Odds-Win 3:1 (2:1), 2WayWinner's Dealer Bonus
#: paying Jacks or Better 10:1 (1:1): each game's rig of docs/floor.md, its bet and predicted rounds.
RIGS = {"one_card_poker": ("tie", 1_158), "swap_hand": ("odds_win", 1_192),
        "two_way_winner": ("dealer_bonus", 383)}


def rigged_law(game: str) -> tuple[BetLaw, BetLaw]:
    """The honest law of each game's rigged bet (its par's) and the rigged one."""
    if game == "one_card_poker":
        return laws(par_for(game, {}))["tie"], laws(par_for(game, {"tie_pays": "20:1"}))["tie"]
    if game == "two_way_winner":
        rig = {"dealer_bonus_paytable": {"jacks_or_better": "10:1"}}
        return laws(par_for(game, {}))["dealer_bonus"], laws(par_for(game, rig))["dealer_bonus"]
    honest = laws(par_for(game, {}))["odds_win"]
    # The Odds-Win pays 2:1, loses 1 or pushes: its win and loss chances from the par's two moments.
    second = honest.variance + honest.mean ** 2
    win = (second + honest.mean) / 6
    lose = 2 * win - honest.mean
    rigged = BetLaw("odds_win", 3 * win - lose, 9 * win + lose - (3 * win - lose) ** 2, ("odds_win",))
    return honest, rigged


def game_rounds(game: str, rigged: bool, rounds: int, monkeypatch: pytest.MonkeyPatch
                ) -> Iterator[dict[str, Any]]:
    if game == "one_card_poker":
        return one_card_poker_rounds(Odds(20, 1) if rigged else Odds(10, 1), rounds, 5)
    if game == "swap_hand":
        return swap_hand_rounds(Odds(3, 1) if rigged else Odds(2, 1), rounds, 5, monkeypatch)
    table = DealerBonusPayTable(jacks_or_better=Odds(10, 1)) if rigged else DealerBonusPayTable()
    return two_way_winner_rounds(table, rounds, 5, monkeypatch)


@pytest.mark.parametrize("game", sorted(RIGS))
def test_each_game_s_rigged_pay_table_drifts_out_within_the_docs_rounds_and_its_honest_table_does_not(
        game: str, monkeypatch: pytest.MonkeyPatch) -> None:
    bet, docs = RIGS[game]
    predicted = rounds_to_detect(*rigged_law(game), 0.99)
    print(game, bet, predicted)
    assert predicted == docs  # docs/floor.md's table
    flagged = first_flagged("rigged", game, game_rounds(game, True, predicted, monkeypatch))
    assert flagged is not None and flagged <= predicted
    assert first_flagged("honest", game, game_rounds(game, False, predicted, monkeypatch)) is None


def test_a_change_of_decimals_goes_on_with_the_drift_window_at_the_finer_scale() -> None:
    """A ``limits`` row changing the decimals changes what a minor unit is worth, not what the rounds
    were worth: the window goes on with every amount exact at the finer scale (never a sum of two
    scales), so a Banker paid 2:1 that drifted out stays out (it was cleared: the window started again
    with one round), whichever way the decimals went."""
    for first, then in ((2, 0), (0, 2)):
        watch = DriftWatch(window=400)
        records = rigged_rounds(Odds(2, 1), 401, seed=5)  # each round: 100 minor units on Banker
        for _ in range(400):
            got = watch.round("t", "baccarat", {}, next(records), first)
        assert kinds(got) == [("raise", "results_drift", "banker")] and got[0].data["rounds"] == 400
        got = watch.round("t", "baccarat", {}, next(records), then)
        assert kinds(got) == [("raise", "results_drift", "banker")], (first, then, got)
        staked = 399 * 100 + 100 * 100 if first == 2 else 399 * 100 * 100 + 100  # at 2 decimals
        assert (got[0].data["minor_units"], got[0].data["rounds"], got[0].data["staked"]) == (2, 400, staked)
        # The text a person reads shows those amounts in major units at those decimals, not minor units.
        assert f"({staked // 100:,}.{staked % 100:02d} staked)" in got[0].detail, got[0].detail


def test_the_drift_alerts_text_shows_money_at_its_decimals() -> None:
    """The alert's data are minor units for machines; its text is for the pit boss, who reads 400.00, not
    40000 (a JPY table, 0 decimals, reads whole units)."""
    for decimals, staked_text in ((2, "400.00 staked"), (0, "40,000 staked")):
        watch = DriftWatch(window=400)
        records = rigged_rounds(Odds(2, 1), 400, seed=5)  # each round: 100 minor units on Banker
        for _ in range(400):
            got = watch.round("t", "baccarat", {}, next(records), decimals)
        assert kinds(got) == [("raise", "results_drift", "banker")]
        text = got[0].detail
        assert f"over 400 rounds ({staked_text})" in text, text
        actual = got[0].data["actual"]
        shown = f"{abs(actual) // 100:,}.{abs(actual) % 100:02d}" if decimals else f"{abs(actual):,}"
        assert f"players' net {'-' if actual < 0 else ''}{shown} over" in text, text

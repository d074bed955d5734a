"""The floor's theoretical win, seats with a wager and drift base count the wagers in play only.

2WayWinner gives back a seat's unequal antes when betting closes; the round record's ``bets`` keep them
(``repeat_bet`` repeats what the player had down, live and after a restart alike), and the floor counted
them as wagered (a review, 2026-12-07: the theoretical win of bj_ante 4,899.97 for 4,424.08 of a day).
"""

from __future__ import annotations

from controller import inputs as I
from controller.daemon.recall import RoundRecorder
from controller.floor.report_par import in_play, record_bets
from controller.games.two_way_winner.options import TwoWayWinnerOptions
from controller.games.two_way_winner.rules import TwoWayWinner
from controller.limits import TableLimits
from controller.table import Table


def test_antes_given_back_at_the_close_are_not_in_play_but_stay_for_repeat_bet() -> None:
    table = Table(TwoWayWinner(TwoWayWinnerOptions()), TableLimits(seats=6))
    recorder = RoundRecorder()
    play = [I.CreditIn(1, 100_000), I.CreditIn(5, 100_000), I.NewShoe(), I.OpenBetting(),
            I.PlaceWager(1, "bj_ante", 1000), I.PlaceWager(1, "poker_ante", 1000),
            I.PlaceWager(5, "bj_ante", 3100), I.PlaceWager(5, "poker_ante", 3200),  # unequal: given back
            I.CloseBetting(), I.VoidRound()]
    for seq, inp in enumerate(play, start=1):
        events = table.apply(inp)
        assert not [e for e in events if e.event == "refused"], events
        recorder.observe(seq, 0.0, "operator", inp, events, table)
    [record] = recorder.last(1)
    assert record["bets"]["5"] == {"bj_ante": 3100, "poker_ante": 3200}  # what repeat_bet repeats
    settled = {**record, "settlements": [{"seat": 1, "spot": "bj_ante", "stake": 1000, "net": 1000},
                                         {"seat": 1, "spot": "poker_ante", "stake": 1000, "net": -1000}]}
    assert in_play(settled) == {"1": {"bj_ante": 1000, "poker_ante": 1000}}
    assert record_bets(settled) == (("bj_ante", 1000), ("poker_ante", 1000))

"""A round record's ``bets`` are the wagers in play when betting ended: none the close gave back.

2WayWinner returns a seat's lone or unequal antes when betting closes; the record kept them in ``bets``,
and the floor counted them in the theoretical win, the seats with a wager and the results-drift base
(a review, 2026-12-07: 86 of 286 rounds of a table, the theoretical win of bj_ante 4,899.97 for 4,424.08).
"""

from __future__ import annotations

from controller import inputs as I
from controller.daemon.recall import RoundRecorder
from controller.games.two_way_winner.options import TwoWayWinnerOptions
from controller.games.two_way_winner.rules import TwoWayWinner
from controller.limits import TableLimits
from controller.table import Table


def test_antes_given_back_at_the_close_are_not_in_the_record_s_bets() -> None:
    table = Table(TwoWayWinner(TwoWayWinnerOptions()), TableLimits(seats=6))
    recorder = RoundRecorder()
    play = [I.CreditIn(1, 100_000), I.CreditIn(5, 100_000), I.NewShoe(), I.OpenBetting(),
            I.PlaceWager(1, "bj_ante", 1000), I.PlaceWager(1, "poker_ante", 1000),
            I.PlaceWager(5, "bj_ante", 3100), I.PlaceWager(5, "poker_ante", 3200),  # unequal: given back
            I.CloseBetting()]
    for seq, inp in enumerate(play, start=1):
        events = table.apply(inp)
        assert not [e for e in events if e.event == "refused"], events
        recorder.observe(seq, 0.0, "operator", inp, events, table)
    [record] = recorder.last(1)
    assert [w["seat"] for w in record["wagers"] if w["event"] == "wager_returned"] == [5, 5]
    assert record["bets"] == {"1": {"bj_ante": 1000, "poker_ante": 1000}}
    assert recorder.last_bets(betting=False) == {1: {"bj_ante": 1000, "poker_ante": 1000}}

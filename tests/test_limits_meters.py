"""The meters never add two money scales: a change of the currency's decimals starts a new meter period.

rev9's case (tests/test_journal_export.py's two-limits journal): two rounds at 2 decimals (the house
-18.00, seat 1 in 50.00), the money out, a restart at 0 decimals, two rounds more (the house -3,600,
seat 1 in 9,000). Totals across the change were shown as house -5,400 and seat 1 in 14,000: sums
of two scales, true at neither. Now the meters after the change count the new period alone, from 0,
and the reply says since when (docs/daemon.md, "Limits"); a change that keeps the decimals keeps the
meters. Real SQLite journals and the daemon's own service; nothing mocked.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_journal_export import two_limits
from test_limits_journal import config, open_service

from controller import inputs as I
from controller.daemon.config import TableConfig
from controller.daemon.replies import meters_reply
from controller.floor.report import aggregate, from_journal
from controller.floor.report_format import to_text
from controller.floor.report_page import render
from controller.money import Currency
from controller.tools.ctl import format_reply

pytestmark = pytest.mark.timeout(60)

#: Player 5C 3D = natural 8, Banker 2H AS = 3: the Player wins.
CARDS = [I.CardSeen(I.parse_card(c)) for c in ("5C", "3D", "2H", "AS")]


def meters_now(cfg: TableConfig, seat: int | None = None) -> dict[str, Any]:
    """The ``meters`` reply of the table rebuilt from its journal by a start under ``cfg``."""
    live = open_service(cfg)
    live.replay()
    try:
        return meters_reply(live.table, live.seq, seat)
    finally:
        live.journal.close()


@pytest.fixture(scope="module")
def after(tmp_path_factory: pytest.TempPathFactory) -> TableConfig:
    """rev9's journal (played once for the module's tests): the table file after the change."""
    return two_limits(tmp_path_factory.mktemp("two_limits"))[1]


def test_meters_after_a_decimals_change_count_only_the_new_period_and_say_since_when(
        after: TableConfig) -> None:
    reply = meters_now(after)  # from the newest checkpoint, as a start does
    assert reply["since"] == {"round": 2, "minor_units": 0}
    assert reply["totals"] == {"rounds_settled": 2, "rounds_voided": 0, "house_net": -3600}
    assert reply["seats"] == {
        "1": {"credits_in": 9000, "credits_out": 0, "wagered": 4000, "won": 4000, "lost": 0, "rounds": 2},
        "2": {"credits_in": 9000, "credits_out": 0, "wagered": 400, "won": 0, "lost": 400, "rounds": 2},
    }
    with sqlite3.connect(after.state_dir / "journal.sqlite3") as conn:
        conn.execute("DELETE FROM checkpoints")  # as after an upgrade: the whole journal replayed
    conn.close()
    assert meters_now(after) == reply
    text = format_reply({"cmd": "meters"}, reply, Currency(minor_units=2))  # the reply's decimals rule
    assert text.splitlines()[:2] == [
        "meters since round 2 (restarted when the currency's decimals changed; earlier rounds: recall)",
        "table: rounds settled 2, voided 0, house net -3,600"]
    assert "seat 1: credits_in 9,000, credits_out 0, wagered 4,000, won 4,000" in text
    assert meters_now(after, seat=1)["seats"] == {"1": reply["seats"]["1"]}


def test_the_floor_report_names_the_decimals_of_each_block_of_one_table(after: TableConfig) -> None:
    """rev9: the report's text printed two blocks titled ``t  (no currency)``, one per scale."""
    report = aggregate(from_journal(after, 0.0, 2.0), "table", 0.0, 2.0)
    titles = [line for line in to_text(report).splitlines() if line.startswith("t  (")]
    assert titles == ["t  (no currency, 0 decimals)", "t  (no currency, 2 decimals)"]
    page = render(report)
    assert "<h2>t <small>(no currency, 2 decimals)</small></h2>" in page
    assert "t (no currency, 0 decimals)" in page  # a chart's label


def test_a_limits_change_that_keeps_the_decimals_keeps_the_meters(tmp_path: Path) -> None:
    def play(cfg: TableConfig, inputs: list[I.Input]) -> None:
        live = open_service(cfg)
        live.replay()
        for inp in inputs:
            assert live.submit(inp, "test", at=1.0).refused is None, inp
        live.journal.close()

    one_round = [I.OpenBetting(), I.PlaceWager(1, "player", 1000), I.CloseBetting(), *CARDS]
    play(config(tmp_path, 100, 1000), [I.CreditIn(1, 5000), I.NewShoe(), *one_round])
    wider = config(tmp_path, 200, 2000)  # money held: only a change that keeps the decimals may be made
    play(wider, [I.CreditIn(1, 1000), *one_round])
    reply = meters_now(wider)
    assert reply["since"] == {"round": 0, "minor_units": 2}
    assert reply["totals"] == {"rounds_settled": 2, "rounds_voided": 0, "house_net": -2000}
    assert reply["seats"]["1"] == {"credits_in": 6000, "credits_out": 0, "wagered": 2000, "won": 2000,
                                   "lost": 0, "rounds": 2}
    text = format_reply({"cmd": "meters"}, reply, Currency())
    assert text.splitlines()[0] == "meters since the first round"

"""``croupier floor report``: the floor's report equals the one rebuilt from the tables' journals, exactly.

The history is made the way the floor makes it under trouble: a Baccarat table dealing through its
daemon, its ``croupier uplink`` dying right after a publish (before its ack) and ``croupier floor
record`` right after a commit (before its ack), both restarted. The report from PostgreSQL must
equal, field for field, the report of the rounds rebuilt by replaying the table's journal through
the engine (``from_journal``, as ``croupier scenario`` and ``ctl recall`` replay), for every grouping.
The other games go through the uplink's and recorder's code in process (as test_floor_recall_games).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import psycopg
import pytest
from floor_support import Dealer, Proc, nats_server, postgres, recorded_row, wait_for  # noqa: F401
from test_daemon_support import baccarat_play, config_for
from test_floor_recall_games import dealt, to_the_floor
from test_zmq_snapshot import send_all

from controller import inputs as I
from controller.cli import main as cli_main
from controller.daemon.client import CommandClient, local_key
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.floor.local import NatsServer
from controller.floor.report import GROUPINGS, NO_DEALER, aggregate, facts, from_floor, from_journal
from controller.floor.report_format import to_csv, to_json
from controller.floor.report_page import render
from controller.floor.report_par import par_for
from controller.games.baccarat.par_sheet import par_sheet
from controller.money import Odds
from tests.server_fixtures import FloorDatabase

pytestmark = pytest.mark.timeout(90)

EVER = (0.0, 4_102_444_800.0)  # 1970 .. 2100


def test_the_floor_s_report_equals_the_journal_s_replayed_after_crashes_of_the_floor(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    config = config_for(tmp_path, name="rep1")
    play, _ = baccarat_play(10, seed=5)
    nats, db = nats_server.url, postgres.dsn
    uplink = Proc(tmp_path / "up.log", "uplink", str(config.path), "--nats", nats, "--window", "4",
                  fault="floor_published:20")
    recorder = Proc(tmp_path / "rec.log", "floor", "record", "--nats", nats, "--db", db, "--batch", "10",
                    "--ack-wait", "2", fault="floor_committed:2")
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
        try:
            uplink.start()
            recorder.start()
            dealer = Dealer(client, play, chunk=12, pause=0.1).start()
            # Both armed faults fire on their own, mid-flow: restarted as a supervisor would.
            wait_for("the recorder died after a commit and the uplink after a publish",
                     lambda: not recorder.running() and not uplink.running(), 40, uplink, recorder)
            recorder.start()
            uplink.start()
            dealer.join(60)
            wait_for("every row recorded", lambda: recorded_row(db, "rep1") == len(play), 60,
                     uplink, recorder)
        finally:
            client.close()
            uplink.stop()
            recorder.stop()
    replayed = from_journal(config, *EVER)
    with psycopg.connect(db) as conn:
        recorded = from_floor(conn, *EVER)
    assert len(recorded) == len(replayed) == 10
    assert recorded == replayed
    for by in GROUPINGS:
        assert aggregate(recorded, by, *EVER) == aggregate(replayed, by, *EVER), by
    assert cli_main(["floor", "report", "--from", "1970-01-01", "--to", "2100-01-01", "--json",
                     "--db", db]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(to_json(aggregate(replayed, "table", *EVER)))


def test_every_game_s_report_from_the_floor_and_by_dealer(
        tmp_path: Path, postgres: FloorDatabase, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    configs = []
    for game in ("one_card_poker", "swap_hand", "two_way_winner"):
        (tmp_path / game).mkdir()
        configs.append(dealt(tmp_path / game, game)[0])
    # A Baccarat table whose dealers change between rounds 3 and 4 (Ann in), 6 and 7 (Bob relieves her)
    # and 9 and 10 (Bob out), by the operator's commands (``ctl dealer-in`` / ``dealer-out``), and Cy
    # in mid-round 11 (after its betting opened): round 11 stays nobody's, round 12 is Cy's.
    config = config_for(tmp_path, name="bac")
    play: list[I.Input] = []
    changes: dict[int, I.Input] = {3: I.DealerIn("Ann"), 6: I.DealerIn("Bob"), 9: I.DealerOut()}
    closed, marked = 0, set()
    for inp in baccarat_play(12, seed=8)[0]:
        if isinstance(inp, I.OpenBetting) and closed in changes and closed not in marked:
            marked.add(closed)
            play.append(changes[closed])
        closed += isinstance(inp, I.CloseBetting)
        play.append(inp)
        if isinstance(inp, I.OpenBetting) and closed == 10:
            play.append(I.DealerIn("Cy"))
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
        try:
            send_all(client, play)
            recalled = client.call("recall", n=100)["rounds"]
        finally:
            client.close()
    for c in [*configs, config]:
        to_the_floor(c, postgres.dsn)
    replayed = sorted((f for c in [*configs, config] for f in from_journal(c, *EVER)),
                      key=lambda f: (f.table_id, f.journal_id, f.round))
    with psycopg.connect(postgres.dsn) as conn:
        assert from_floor(conn, *EVER) == replayed
        report = aggregate(replayed, "game", *EVER)
        assert [g.key for g in report.groups] == ["baccarat", "one_card_poker", "swap_hand", "two_way_winner"]
        for g in report.groups:
            assert g.total.theoretical is not None and g.total.house == sum(b.house for b in g.bets.values())
            assert g.total.interval is not None, g.key
        # Each round's dealer is its record's (the engine's dealer at the round's first seq), as the
        # daemon's recall gives it.
        by_dealer = aggregate(from_floor(conn, *EVER, table="bac"), "dealer", *EVER)
        logged = [e[0] for e in conn.execute("SELECT payload->>'dealer' FROM events WHERE table_id = 'bac' "
                                             "AND event = 'dealer' ORDER BY seq").fetchall()]
        # The record alone says it: without the dealer events the report is the same.
        conn.execute("DELETE FROM events WHERE table_id = 'bac' AND event = 'dealer'")
        assert aggregate(from_floor(conn, *EVER, table="bac"), "dealer", *EVER) == by_dealer
        conn.rollback()
    assert logged == ["Ann", "Bob", None, "Cy"]
    dealers = [r["dealer"] for r in recalled]
    assert dealers == [None] * 3 + ["Ann"] * 3 + ["Bob"] * 3 + [None, None, "Cy"]
    assert {g.key: g.rounds + g.voided for g in by_dealer.groups} == {"Ann": 3, "Bob": 3, "Cy": 1,
                                                                       NO_DEALER: 5}
    assert cli_main(["floor", "report", "--from", "1970-01-01", "--to", "2100-01-01", "--by", "dealer",
                     "--table", "bac", "--csv", "--db", postgres.dsn]) == 0
    out = capsys.readouterr().out
    assert out == to_csv(by_dealer)
    assert {line.split(",")[0] for line in out.splitlines()[1:]} == {"Ann", "Bob", "Cy", NO_DEALER}


def _baccarat_round(n: int, lines: list[tuple[str, int, int]], ended_at: float) -> dict[str, Any]:
    return {"round": n, "status": "settled", "ended_at": ended_at, "first_seq": 10 * n,
            "credits_before": {"1": 10_000, "2": 10_000, "3": 10_000},
            "bets": {"1": {spot: stake for spot, stake, _ in lines}},
            "settlements": [{"seat": 1, "spot": s, "stake": st, "net": net} for s, st, net in lines],
            "house_net": -sum(net for _, _, net in lines)}


def test_theoretical_win_is_wagered_times_the_exact_edge_and_the_interval_from_the_exact_variance() -> None:
    options: dict[str, Any] = {"decks": 8, "tie_pays": "9:1", "banker_pays": "19:20"}
    rounds = [_baccarat_round(1, [("banker", 1000, 950), ("tie", 100, -100)], 3600.0),
              _baccarat_round(2, [("player", 500, -500)], 3700.0),
              _baccarat_round(3, [("banker", 200, -200), ("player", 300, 300)], 7300.0)]
    report = aggregate([facts("t", "j", "baccarat", options, {"code": "EUR", "minor_units": 2}, r)
                        for r in rounds], "table", *EVER)
    (g,) = report.groups
    sheet = par_sheet(8, Odds(9, 1), Odds(19, 20))
    assert (g.rounds, len(g.hours), g.rounds_per_hour) == (3, 2, 1.5)
    assert (g.seat_rounds, g.seated_rounds) == (3, 9)
    assert g.bets["banker"].wagered == 1200 and g.bets["banker"].house == -750
    assert g.bets["banker"].theoretical == -sheet["ev_banker"] * 1200
    assert g.bets["player"].theoretical == -sheet["ev_player"] * 800
    assert g.total.theoretical == -(sheet["ev_banker"] * 1200 + sheet["ev_player"] * 800
                                    + sheet["ev_tie"] * 100)
    assert (g.total.house, g.total.wagered) == (-750 + 100 + 200, 1200 + 800 + 100)
    # The banker's variance per unit, exact: E[h^2] - E[h]^2 with h = -19/20 (Banker), +1 (Player), 0 (Tie).
    pb, pp = sheet["banker"], sheet["player"]
    per_unit = pb * Fraction(19, 20) ** 2 + pp - sheet["ev_banker"] ** 2
    assert g.bets["banker"].variance == per_unit * (1000 ** 2 + 200 ** 2)
    low, high = g.bets["banker"].interval or (0, 0)
    assert (high - low) / 2 == pytest.approx(1.96 * float(per_unit * (1000 ** 2 + 200 ** 2)) ** 0.5, rel=1e-4)
    # Round 3 bets Banker and Player together: its variance is of one outcome, less than the sum.
    summed = float(sum(b.variance or 0 for b in g.bets.values()))
    assert g.total.variance is not None and g.total.variance < summed


def test_the_report_page_shows_every_group_and_figure() -> None:
    options: dict[str, Any] = {"decks": 8}
    rounds = [facts(t, "j", "baccarat", options, {"code": "EUR", "minor_units": 2},
                    _baccarat_round(n, [("banker", 1000, 950)], 3600.0 * n))
              for n, t in ((1, "bac_1"), (2, "bac_2"), (3, "bac_2"))]
    page = render(aggregate(rounds, "table", *EVER))
    assert page.startswith("<!DOCTYPE html>") and "http" not in page.split("</style>")[1]
    for text in ("bac_1", "bac_2", "banker", "Rounds", "Rounds per hour", "Seats with a wager",
                 "Wagered", "House result", "Theoretical win", "Actual minus theoretical", "<svg", "EUR",
                 "-9.50", "-19.00"):
        assert text in page, text
    assert page.count("<svg") >= 3


def test_the_report_page_draws_money_of_each_currency_in_its_own_chart_and_units() -> None:
    """Groups of two scales (EUR with 2 decimals, JPY with none) shared one money axis labelled in raw
    minor units: the euro table's 1,500.00 read 150,000 beside the yen's 2,000 (a helper's review,
    2026-12-07)."""
    options: dict[str, Any] = {"decks": 8}
    rounds = [facts("euro_table", "j1", "baccarat", options, {"code": "EUR", "minor_units": 2},
                    _baccarat_round(1, [("banker", 150_000, -150_000)], 3600.0)),
              facts("yen_table", "j2", "baccarat", options, {"code": "JPY", "minor_units": 0},
                    _baccarat_round(1, [("banker", 2_000, -2_000)], 3600.0))]
    page = render(aggregate(rounds, "table", *EVER))
    assert "House result (bar) and theoretical win (grey), EUR with 2 decimals" in page
    assert "House result (bar) and theoretical win (grey), JPY with 0 decimals" in page
    assert ">1,500.00<" in page and ">150,000<" not in page


def test_voided_rounds_apart_hours_in_utc_and_no_theoretical_without_a_stored_sheet() -> None:
    euro = {"code": "EUR", "minor_units": 2}
    voided = {**_baccarat_round(4, [], 7400.0), "status": "voided", "settlements": None, "house_net": None}
    rounds = [facts("t", "j", "baccarat", {}, euro, r)
              for r in (_baccarat_round(1, [("banker", 1000, 950)], 3600.0),
                        _baccarat_round(2, [("player", 500, -500)], 3700.0), voided)]
    by_hour = aggregate(rounds, "hour", *EVER)
    assert [(g.key, g.rounds, g.voided) for g in by_hour.groups] == [
        ("1970-01-01 01:00", 2, 0), ("1970-01-01 02:00", 0, 1)]
    # A Swap-Hand table with two decks: no stored exact sheet, so no theoretical win and the notes say why.
    swap = {"round": 1, "status": "settled", "ended_at": 3600.0, "credits_before": {"1": 5000},
            "dealer": "Ann",
            "bets": {"1": {"main": 1000}}, "house_net": -1000,
            "settlements": [{"seat": 1, "spot": "main", "stake": 1000, "net": 1000}]}
    report = aggregate([facts("s", "j", "swap_hand", {"decks": 2}, euro, swap)], "dealer", *EVER)
    (g,) = report.groups
    assert (g.key, g.total.house, g.bets["main"].wagered) == ("Ann", -1000, 1000)
    assert g.total.theoretical is None and g.total.interval is None and g.bets["main"].theoretical is None
    assert "no stored exact sheet" in report.notes["swap_hand"]


def test_two_way_winner_theoretical_win_takes_each_wagers_share_on_every_ante() -> None:
    """Review hR: the stored sheet's figures are each wager's net per round *in antes* (0 in a round
    without that wager: no Blackjack Play when the seat plays Poker, no Poker Play or Bet when it plays
    Blackjack), so a group's theoretical win is the sum of the shares times every ante. The report
    added a share only for the rounds whose settlement has that wager's line: the negative shares
    (Play, Bet) counted on part of the antes, the theoretical win overstated."""
    lines_of = {
        1: [("bj_ante", 100, -100), ("poker_ante", 100, -100), ("bj_play", 100, -100)],  # Blackjack chosen
        2: [("bj_ante", 100, -100), ("poker_ante", 100, 100), ("poker_play", 100, 100),
            ("poker_bet", 100, 100)],  # Poker chosen, a bet made
    }
    rounds = [{**_baccarat_round(n, lines, 3600.0 + n),
               "bets": {"1": {"bj_ante": 100, "poker_ante": 100}}} for n, lines in lines_of.items()]
    report = aggregate([facts("t", "j", "two_way_winner", {}, {"code": "EUR", "minor_units": 2}, r)
                        for r in rounds], "table", *EVER)
    (g,) = report.groups
    par = par_for("two_way_winner", {})
    per_ante = sum((b.edge for b in par.types.values() if b.base == "bj_ante"), Fraction(0))
    assert g.total.theoretical == per_ante * 200

"""The alert service's rules without I/O (controller/floor/alerting/rules.py, shoes.py): each kind raised
once and cleared when its cause clears; feeds, tilts, devices, the daemon, clocks, gaps, shoes and days.
(Results drift, fed by the real engines' rounds: tests/test_floor_alerting_drift.py.)"""

from __future__ import annotations

from typing import Any

from alerting_rules_support import T0, kinds, row

from controller.cards import DECK, parse_cards
from controller.floor.alerting.rules import Pit, Raise


def test_a_silent_table_loses_its_feed_after_ten_seconds_and_the_next_heartbeat_clears_it() -> None:
    pit = Pit()
    assert kinds(pit.alive({"table": "b1", "daemon": "alive"}, T0)) == []
    assert pit.tick(T0 + 10.0) == []
    assert kinds(pit.tick(T0 + 10.5)) == [("raise", "feed_lost", "")]
    assert pit.tick(T0 + 11.0) == []  # raised once while it lasts
    # An old row redelivered after an outage is not the feed coming back.
    assert kinds(pit.row(row("b1", T0), T0 + 12)) == []
    assert kinds(pit.row(row("b1", T0 + 12, seq=2), T0 + 12.1)) == [("clear", "feed_lost", "")]


def test_a_restarted_service_keeps_what_is_open_and_raises_nothing_twice() -> None:
    pit = Pit({("b1", "feed_lost", ""), ("b1", "daemon_stopped", ""), ("b1", "tilt", "")})
    pit.known("b1", T0 - 60, T0)
    pit.known("gone", T0 - 2 * 86_400, T0)  # silent for two days: not watched
    assert pit.tick(T0) == []  # already open: nothing new
    assert kinds(pit.alive({"table": "b1", "daemon": "stopped"}, T0)) == [("clear", "feed_lost", "")]
    tilt = {"event": "tilt", "round": 3, "reason": "device_offline", "card": "", "detail": "shoe offline"}
    assert kinds(pit.row(row("b1", T0, tilt), T0)) == []
    assert kinds(pit.alive({"table": "b1", "daemon": "alive"}, T0 + 1)) == [("clear", "daemon_stopped", "")]


def test_tilts_and_devices_each_raise_once_and_clear_by_their_own_events() -> None:
    pit = Pit()
    lid = {"event": "device", "device": "shoe lid", "online": False, "detail": "lid open"}
    tilt = {"event": "tilt", "round": 1, "reason": "device_offline", "card": "", "detail": "shoe lid offline"}
    got = pit.row(row("b1", T0, lid, tilt), T0)
    assert kinds(got) == [("raise", "device_offline", "shoe lid"), ("raise", "tilt", "")]
    assert isinstance(got[0], Raise) and got[0].cause_at == T0
    assert got[0].detail == "shoe lid offline: lid open"
    back = {"event": "device", "device": "shoe lid", "online": True, "detail": "lid closed"}
    cleared = {"event": "tilt_cleared", "round": 1, "how": "device_back"}
    assert kinds(pit.row(row("b1", T0 + 1, back, cleared, seq=3), T0 + 1)) == [
        ("clear", "device_offline", "shoe lid"), ("clear", "tilt", "")]


def test_a_row_delivered_again_raises_nothing_and_a_clear_the_other_service_raised_is_written() -> None:
    """A row whose ack was lost comes again (after ack_wait) once its tilt_cleared was judged: it raised the
    tilt again, open for good. And two services share the stream's rows: one may raise a tilt whose clear
    the other gets, which it dropped for not knowing the tilt open (a helper's review, 2026-12-07)."""
    pit = Pit()
    tilt = {"event": "tilt", "round": 1, "reason": "card_not_due", "card": "5C", "detail": "5C not due"}
    cleared = {"event": "tilt_cleared", "round": 1, "how": "burned"}
    assert kinds(pit.row(row("b1", T0, tilt, seq=1), T0)) == [("raise", "tilt", "")]
    assert kinds(pit.row(row("b1", T0 + 1, cleared, seq=2), T0 + 1)) == [("clear", "tilt", "")]
    assert pit.row(row("b1", T0, tilt, seq=1), T0 + 31) == []  # delivered again: judged already
    other = Pit()  # the second service: the raise went to the first
    assert kinds(other.row(row("b1", T0 + 1, cleared, seq=2), T0 + 1)) == [("clear", "tilt", "")]


def test_the_daemon_and_its_journal_fault_relayed_by_the_uplink() -> None:
    pit = Pit()
    assert kinds(pit.alive({"table": "b1", "daemon": "stopped", "daemon_at": T0}, T0)) == [
        ("raise", "daemon_stopped", "")]
    fault = {"at": T0 + 1, "file": "/var/lib/croupier/b1/journal.sqlite3",
             "error": "database or disk is full"}
    got = pit.alive({"table": "b1", "daemon": "alive", "journal_fault": fault}, T0 + 1)
    assert kinds(got) == [("clear", "daemon_stopped", ""), ("raise", "journal_fault", "")]
    assert "database or disk is full" in got[1].detail  # type: ignore[union-attr]
    assert pit.alive({"table": "b1", "daemon": "alive", "journal_fault": fault}, T0 + 2) == []
    assert kinds(pit.alive({"table": "b1", "daemon": "alive", "journal_fault": None}, T0 + 3)) == [
        ("clear", "journal_fault", "")]


def test_clock_skew_is_the_lowest_offset_of_the_last_heartbeats_so_a_slow_delivery_is_not_skew() -> None:
    pit = Pit()

    def beat(now: float, sent: float) -> list[tuple[str, str, str]]:
        return kinds(pit.alive({"table": "b1", "sent_at": sent}, now))

    assert beat(T0, T0 - 0.002) == []
    assert beat(T0 + 5, T0 + 5 - 2.0) == []  # delivered 2 s late (a reconnect's buffer): not skew
    assert beat(T0 + 10, T0 + 10 - 0.001) == []
    assert beat(T0 + 15, T0 + 15 + 0.8) == [("raise", "clock_skew", "")]  # the table runs 800 ms ahead
    assert beat(T0 + 20, T0 + 20 + 0.8) == []
    for t in (25, 30):
        beat(T0 + t, T0 + t)
    assert beat(T0 + 35, T0 + 35 + 0.01) == [("clear", "clock_skew", "")]
    for t in (40, 45):  # behind by 700 ms: every sample of the window must say so
        assert beat(T0 + t, T0 + t - 0.7) == []
    got = pit.alive({"table": "b1", "sent_at": T0 + 50 - 0.7}, T0 + 50)
    assert kinds(got) == [("raise", "clock_skew", "")]
    assert got[0].detail == "the table's clock is 700 ms behind the floor's"  # type: ignore[union-attr]


def test_a_gap_is_raised_while_unfilled_and_cleared_when_filled() -> None:
    pit = Pit()
    assert kinds(pit.gaps([("b1", "j1", 40, 42)])) == [("raise", "gap", "j1:40")]
    assert pit.gaps([("b1", "j1", 40, 42)]) == []
    assert kinds(pit.gaps([])) == [("clear", "gap", "j1:40")]


def cards_events(cards: str) -> list[dict[str, Any]]:
    return [{"event": "card_dealt", "round": 1, "card": c, "hand": "player"} for c in cards.split()]


def test_a_card_seen_more_often_than_the_shoe_holds_it_is_raised_at_once() -> None:
    pit = Pit()
    shoe = {"event": "new_shoe", "decks": 1, "shoe_number": 1}
    got = pit.row(row("b1", T0, shoe, *cards_events("AS 2D AS")), T0)
    assert kinds(got) == [("raise", "shoe_integrity", "j1:1")]
    assert "AS seen 2 times; the shoe holds it 1 times" in got[0].detail  # type: ignore[union-attr]


def test_a_card_missing_from_a_shoe_that_said_it_is_empty_is_named_at_the_shoe_s_end() -> None:
    """A dispensing shoe's SHOE_EMPTY (journaled as the ``shoe feed`` going offline) says nothing was left
    undealt, so a one-deck shoe that dealt 51 cards is a card short, and which one is named; the same
    51 cards with no such word may have left one behind a cut card, so nothing is raised."""
    deck = [str(c) for c in DECK if str(c) != "KS"]
    empty = {"event": "device", "device": "shoe feed", "online": False,
             "detail": "shoe empty: load cards and shuffle"}
    for said, expected in ((True, [("raise", "shoe_integrity", "j1:1")]), (False, [])):
        pit = Pit()
        shoe = {"event": "new_shoe", "decks": 1, "shoe_number": 1}
        pit.row(row("b1", T0, shoe, *cards_events(" ".join(deck)), *([empty] if said else [])), T0)
        got = [a for a in pit.row(row("b1", T0, {**shoe, "shoe_number": 2}, seq=99), T0)
               if a.kind == "shoe_integrity"]
        assert kinds(got) == expected
        if said:
            assert "1 card missing from 1 deck (51 seen + 0 undealt = 51, not 52): KS" in got[0].detail  # type: ignore[union-attr]


def test_a_shoe_dealt_again_in_the_same_order_on_another_table_is_a_false_shuffle() -> None:
    pit = Pit()
    order = " ".join(str(c) for c in DECK[:30])
    other = " ".join(str(c) for c in DECK[30:50])
    for table, cards in (("b1", order), ("b2", other), ("b3", order)):
        shoe = {"event": "new_shoe", "decks": 8, "shoe_number": 1}
        assert pit.row(row(table, T0, shoe, *cards_events(cards)), T0) == []
    # A shoe ends at the table's next shoe (or its journal's replacement): then it is checked.
    for table in ("b1", "b2"):
        assert pit.row(row(table, T0, {"event": "new_shoe", "decks": 8, "shoe_number": 2}, seq=90), T0) == []
    got = pit.row(row("b3", T0, {"event": "new_shoe", "decks": 8, "shoe_number": 2}, seq=90), T0)
    assert kinds(got) == [("raise", "false_shuffle", "j1:1")]
    assert "30 cards in the same order as shoe b1:j1:1" in got[0].detail  # type: ignore[union-attr]
    assert parse_cards(order)[0] == DECK[0]


def test_a_day_of_too_many_ties_is_raised_when_the_next_day_begins() -> None:
    pit = Pit()
    day = 1_796_083_200.0  # a midnight, UTC

    def result(winner: str, at: float, seq: int) -> list[Any]:
        e = {"event": "round_result", "round": seq, "game": "baccarat", "result": {"winner": winner}}
        return pit.row(row("b1", at, e, seq=seq), at)

    outcomes = ["banker"] * 40 + ["player"] * 35 + ["tie"] * 25  # ties: 25 of 100, 9.5 expected
    assert all(result(w, day + 60 * i, i + 1) == [] for i, w in enumerate(outcomes))
    got = result("banker", day + 86_400 + 1, 101)
    assert kinds(got) == [("raise", "outcome_frequencies", "day:2026-12-01")]
    detail = got[0].detail
    assert detail.startswith("day 2026-12-01: winners {'banker': 40, 'player': 35, 'tie': 25} over 100 ")

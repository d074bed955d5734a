"""A change of the table file's limits takes effect when it is made, never retroactively.

The rows of a journal were played under the limits in force when they were journaled: a restart under
other limits must rebuild exactly what was published and paid (the round records, every seq, every credit),
from row 1 and from a checkpoint, and the new limits apply from the start on. Real SQLite journals, the
daemon's own service; nothing mocked.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller import inputs as I
from controller.cards import parse_card
from controller.daemon.commands import CommandError, parse_command
from controller.daemon.config import TableConfig, parse_table
from controller.daemon.journal import Journal, JournalFault, JournalMismatch
from controller.daemon.service import TableService, event_payload
from controller.table import Table

pytestmark = pytest.mark.timeout(60)

#: Player 5C 3D = natural 8, Banker 2H AS = 3 (deal order PPBB): the Player wins.
ROUND = [I.OpenBetting(), I.PlaceWager(1, "player", 1000), I.PlaceWager(2, "banker", 100), I.CloseBetting(),
         *(I.CardSeen(parse_card(c)) for c in ("5C", "3D", "2H", "AS"))]


def config(tmp_path: Path, min_bet: int, max_bet: int, seats: int = 3, minor_units: int = 2) -> TableConfig:
    raw = {"table": "t", "game": "baccarat", "seats": seats, "state_dir": str(tmp_path / "state"),
           "limits": {"unit": 100, "min_bet": min_bet, "max_bet": max_bet},
           "currency": {"minor_units": minor_units}}
    return parse_table(raw, tmp_path / "t.yaml")


def open_service(cfg: TableConfig, **kw: Any) -> TableService:
    journal = Journal.open(cfg.state_dir, table="t", game=cfg.game_name, options=cfg.options_dict(),
                           fsync=False)
    return TableService(cfg, journal, **kw)


def history(service: TableService) -> dict[str, Any]:
    """What was published and paid: the round records, the events with their seq, the money."""
    snap = service.table.snapshot()
    return {"rounds": service.recorder.last(1000), "seq": service.seq,
            "events": [event_payload("t", s, e) for s, e in service.recent],
            "credits": snap["credits"], "meters": snap["meters"], "round": snap["round"]}


def play(cfg: TableConfig, rounds: int, **kw: Any) -> dict[str, Any]:
    live = open_service(cfg, **kw)
    live.replay()
    for inp in [I.CreditIn(1, 5000), I.CreditIn(2, 5000), I.NewShoe()] * (live.journal.last_id == 0):
        live.submit(inp, "test", at=1.0)
    for _ in range(rounds):
        for inp in ROUND:
            live.submit(inp, "test", at=1.0)
    want = history(live)
    live.journal.close()
    return want


def test_a_restart_under_other_limits_rebuilds_what_was_published_and_paid(tmp_path: Path) -> None:
    want = play(config(tmp_path, 100, 1000), 2, checkpoint_every=10**9)
    assert want["credits"]["1"] == 7000 and want["credits"]["2"] == 4800  # both wagers stood, twice
    lower = config(tmp_path, 200, 500)  # the 1000 wager is over the new maximum, the 100 under the minimum
    again = open_service(lower)
    again.replay()
    assert history(again) == want
    assert again.table.limits == lower.limits
    assert [(e.source, e.input) for e in again.journal.entries(again.journal.last_id)] == [
        ("config", I.SetLimits(**lower.limits.model_dump()))]
    # From now on the new limits hold: the wagers that stood before are refused, 500 is taken.
    again.submit(I.OpenBetting(), "test", at=1.0)
    assert again.submit(I.PlaceWager(1, "player", 1000), "test", at=1.0).refused
    assert again.submit(I.PlaceWager(2, "banker", 100), "test", at=1.0).refused
    assert again.submit(I.PlaceWager(1, "player", 500), "test", at=1.0).refused is None
    again.journal.close()


def play_to(tmp_path: Path, upto: int) -> None:
    """Credits in, then ROUND[:upto] under a maximum of 1000: a round left in play."""
    play(config(tmp_path, 100, 1000), 0)
    live = open_service(config(tmp_path, 100, 1000))
    live.replay()
    for inp in ROUND[:upto]:
        assert live.submit(inp, "test", at=1.0).refused is None
    live.journal.close()


def start_mid_round(tmp_path: Path, upto: int, max_bet: int = 500, seats: int = 3) -> TableService:
    """A round left in play (:func:`play_to`), then a start under ``max_bet`` and ``seats``."""
    play_to(tmp_path, upto)
    again = open_service(config(tmp_path, 100, max_bet, seats=seats))
    again.replay()
    return again


@pytest.mark.parametrize("upto, rest", [
    (2, ROUND[2:]),  # betting open, 1000 on the Player: 100 on the Banker comes after the start, then dealt
    (5, ROUND[5:]),  # mid-deal: one card out
    (2, [I.VoidRound()]),  # betting open, then the round voided
], ids=["betting", "dealing", "voided"])
def test_a_change_found_mid_round_waits_for_the_round_to_end(
        tmp_path: Path, upto: int, rest: list[I.Input]) -> None:
    """As a floor changes its sign between hands: the round in play (its later wagers too) is played
    under the old limits; the change is journaled right after the input that ends it, and is pending,
    in status and the snapshot, until then."""
    again = start_mid_round(tmp_path, upto)
    old, new = config(tmp_path, 100, 1000).limits, config(tmp_path, 100, 500).limits
    assert again.journal.last_id == 3 + upto and again.table.limits == old, "nothing journaled in the round"
    assert again.status()["limits_pending"] == again.snapshot()["limits_pending"] == new.model_dump()
    if upto == 2:  # a wager of the round in play, after the start: the round's limits (1000), not 500
        assert again.submit(I.PlaceWager(2, "banker", 1000), "test", at=1.0).refused is None
        assert again.submit(I.CancelWager(2, "banker"), "test", at=1.0).refused is None
    for inp in rest:
        assert again.submit(inp, "test", at=1.0).refused is None
    assert again.table.phase == "idle" and again.table.limits == new
    assert [(e.source, e.input) for e in again.journal.entries(again.journal.last_id)] == [
        ("config", I.SetLimits(**new.model_dump()))], "right after the input that ended the round"
    assert again.status()["limits_pending"] is None and again.submit(I.OpenBetting(), "test").refused is None
    assert again.submit(I.PlaceWager(1, "player", 1000), "test", at=1.0).refused
    assert again.submit(I.PlaceWager(1, "player", 500), "test", at=1.0).refused is None
    again.journal.close()


def test_the_engine_refuses_a_limits_input_while_a_round_is_in_play(tmp_path: Path) -> None:
    """So no row, hand-edited or replayed, changes the limits inside a hand."""
    old, new = config(tmp_path, 100, 1000), config(tmp_path, 100, 500)
    table = Table(old.new_game(), old.limits)
    change = I.SetLimits(**new.limits.model_dump())
    for inp, phase in ((I.OpenBetting(), "betting"), (I.CloseBetting(), "dealing")):
        table.apply(inp)
        [refused] = table.apply(change)
        assert table.phase == phase and table.limits == old.limits
        assert refused.to_dict()["reason"] == (
            f"the limits change between rounds, not while round 1 is in play ({phase})")
    assert [e.event for e in table.apply(I.VoidRound())] == ["round_voided"]
    assert table.apply(change) == [] and table.limits == new.limits  # between rounds: taken


def test_a_change_the_rounds_end_cannot_make_halts_the_table(tmp_path: Path) -> None:
    """Seat 3 holds nothing at the start (2 seats may take effect), but buys in during the round still
    under 3 seats: at the round's end the change would drop its money. No change, no row: the table
    halts and says why (the journal faulted, status), until a restart under a corrected table file."""
    again = start_mid_round(tmp_path, 2, max_bet=1000, seats=2)
    assert again.status()["limits_pending"] is not None
    assert again.submit(I.CreditIn(3, 700), "test", at=1.0).refused is None  # the round's limits: 3 seats
    for inp in ROUND[3:]:
        assert again.submit(inp, "test", at=1.0).refused is None
    rows, status = again.journal.last_id, again.status()
    assert "take effect at the end of round 1: seat 3 holds credits" in status["journal_fault"]["error"]
    assert status["limits_pending"] is not None and again.table.limits.seats == 3
    with pytest.raises(JournalFault):
        again.submit(I.OpenBetting(), "test", at=1.0)
    assert again.journal.last_id == rows and again.table.phase == "idle"
    again.journal.close()
    refused_start(config(tmp_path, 100, 1000, seats=2), "seat 3 holds credits")  # until it is corrected


def refused_start(cfg: TableConfig, why: str) -> None:
    """A start under ``cfg`` is refused, saying ``why``, and journals nothing."""
    service = open_service(cfg)
    rows = service.journal.last_id
    with pytest.raises(JournalMismatch, match=why):
        service.replay()
    assert service.journal.last_id == rows
    service.journal.close()


@pytest.mark.parametrize("seats, minor_units, why", [
    (1, 2, "seat 2 holds credits or a wager"),
    # Journaled in minor units: 5000 held as 50.00 would read 5000 whole units (a hundredfold change).
    (3, 0, "currency.minor_units 2 -> 0 while seats hold credits"),
])
def test_limits_that_would_drop_or_rescale_money_refuse_the_start_and_journal_nothing(
        tmp_path: Path, seats: int, minor_units: int, why: str) -> None:
    play(config(tmp_path, 100, 1000), 1)  # seats 1 and 2 hold credits
    refused_start(config(tmp_path, 100, 1000, seats=seats, minor_units=minor_units), why)


def test_only_the_table_file_sets_the_limits(tmp_path: Path) -> None:
    limits = config(tmp_path, 100, 1000).limits
    raw = json.dumps({"cmd": "input", "input": {"input": "limits", **limits.model_dump(), "max_bet": 10**9}})
    with pytest.raises(CommandError, match="the limits come from the table file"):
        parse_command(raw.encode(), limits.seats, "t", limits)


def test_a_checkpoint_written_under_other_limits_is_used_and_equals_a_full_replay(tmp_path: Path) -> None:
    before = play(config(tmp_path, 100, 1000), 3, checkpoint_every=8)  # checkpoints at rows 11, 19, 27
    lower = config(tmp_path, 200, 500)
    again = open_service(lower, checkpoint_every=10**9)
    again.replay()
    assert again.checkpoint_row == 27 and again.replayed == 0, "started from the checkpoint, not row 1"
    assert history(again) == before and again.journal.last_id == 28  # and the change journaled
    want = again.table.snapshot()
    again.journal.close()
    for at in (0, 11):  # a full replay, and a checkpoint with old-limits rows and the change after it
        service = open_service(lower, checkpoint_every=10**9)
        service.replay(checkpoint_at=at)
        assert service.replayed == 28 - at and service.journal.last_id == 28, "the change is journaled once"
        assert history(service) == before and service.table.snapshot() == want
        service.journal.close()


def test_a_journal_from_before_limits_were_recorded_takes_the_files_limits_of_its_first_start(
        tmp_path: Path) -> None:
    first = config(tmp_path, 100, 1000)
    want = play(first, 1)
    with sqlite3.connect(first.state_dir / "journal.sqlite3") as conn:
        conn.execute("DELETE FROM meta WHERE key = 'limits'")  # as software before this change wrote it
    again = open_service(first)
    again.replay()  # its first start under this software: the file's limits are taken as the journal's
    assert history(again) == want and again.journal.header["limits"] == first.limits.model_dump_json()
    again.journal.close()
    later = open_service(config(tmp_path, 200, 500))
    later.replay()  # a later change is journaled, and the old rows keep the limits taken at the upgrade
    assert history(later) == want and later.table.limits.max_bet == 500
    later.journal.close()


CHILD = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from test_limits_journal import config, play
play(config(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])), int(sys.argv[5]))
"""


def crash(tmp_path: Path, fault: str, *args: int, script: str = CHILD) -> None:
    """Run ``script`` (by default: play ``min_bet, max_bet, rounds``) in a child process that
    CROUPIER_FAULT kills at ``fault``; it must die there."""
    env = {**os.environ, "CROUPIER_FAULT": fault}
    done = subprocess.run([sys.executable, "-c", script, str(Path(__file__).parent), str(tmp_path),
                           *map(str, args)], env=env, timeout=30, check=False)
    assert done.returncode == -9, f"not killed at {fault}"


MID_ROUND_CHILD = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from test_limits_journal import ROUND, config, open_service
service = open_service(config(Path(sys.argv[2]), 100, 500))
service.replay()
for inp in ROUND[int(sys.argv[3]):]:
    service.submit(inp, "test", at=1.0)
"""


@pytest.mark.parametrize("fault", ["journal_commit:6", "journal_commit:7"], ids=["before", "after"])
def test_a_kill_at_the_rounds_end_leaves_the_deferred_change_exactly_once(tmp_path: Path, fault: str) -> None:
    """Started under new limits with betting open, the rest of the round played (6 rows), then killed
    right after the round's last row commits (before the deferred change: the next start, between
    rounds, journals it) or right after the deferred row commits (the next start replays it)."""
    play_to(tmp_path, 2)
    crash(tmp_path, fault, 2, script=MID_ROUND_CHILD)
    lower = config(tmp_path, 100, 500)
    for _ in range(2):  # and a later start journals nothing more
        again = open_service(lower)
        again.replay()
        inputs = [e.input for e in again.journal.entries()]
        assert len(inputs) == 3 + len(ROUND) + 1 and inputs[-1] == I.SetLimits(**lower.limits.model_dump())
        assert again.table.limits == lower.limits and again.table.snapshot()["credits"] == {
            "1": 6000, "2": 4900}, "the round played under the old limits: 1000 on the Player won"
        again.journal.close()


def test_a_kill_right_after_the_limits_row_is_committed_leaves_it_exactly_once(tmp_path: Path) -> None:
    want = play(config(tmp_path, 100, 1000), 1)
    with sqlite3.connect(tmp_path / "state" / "journal.sqlite3") as conn:
        rows = conn.execute("SELECT MAX(id) FROM inputs").fetchone()[0]
    crash(tmp_path, "journal_commit:1", 200, 500, 0)  # the limits row committed, not applied or published
    lower = config(tmp_path, 200, 500)
    again = open_service(lower)
    again.replay()
    assert again.journal.last_id == rows + 1 and again.table.limits == lower.limits  # exactly once
    assert history(again) == want
    again.journal.close()


@pytest.mark.parametrize("fault, rows", [("journal_created:1", 0), ("journal_commit:1", 1)])
def test_a_kill_during_the_first_start_leaves_the_limits_exactly_once(
        tmp_path: Path, fault: str, rows: int) -> None:
    """Killed with the new journal not yet in place (the next start makes it anew: no row), or right
    after the first start recorded its starting limits (no input yet: the next one journals the change,
    once); then a start after it journals nothing more."""
    crash(tmp_path, fault, 100, 1000, 1)
    lower = config(tmp_path, 200, 500)
    for _ in range(2):
        again = open_service(lower)
        again.replay()
        assert again.journal.last_id == rows and again.table.limits == lower.limits
        assert [e.input for e in again.journal.entries()] == [I.SetLimits(**lower.limits.model_dump())] * rows
        again.journal.close()


def test_a_seat_cashed_out_to_nothing_does_not_hold_the_seats_back(tmp_path: Path) -> None:
    """The refusal says "cash it out first": once seat 3 has cashed out all it had (it stays seated with
    nothing), a table file with 2 seats starts, journals the change, and seat 3 is no longer the table's."""
    cfg = config(tmp_path, 100, 1000)
    live = open_service(cfg)
    live.replay()
    for inp in (I.CreditIn(1, 5000), I.CreditIn(3, 700), I.CreditOut(3, 700)):
        assert live.submit(inp, "test", at=1.0).refused is None
    live.journal.close()
    fewer = config(tmp_path, 100, 1000, seats=2)
    again = open_service(fewer)
    again.replay()
    assert again.table.limits == fewer.limits and again.journal.last_id == 4
    assert again.table.snapshot()["credits"] == {"1": 5000}
    assert again.submit(I.CreditIn(3, 100), "test", at=1.0).refused
    again.journal.close()


def test_the_designated_player_seat_is_not_left_out_of_the_seats(tmp_path: Path) -> None:
    """A One Card Poker DP at seat 3, cashed out to nothing: it still banks the next round, so a table
    file with 2 seats refuses the start (set another DP first) and journals nothing."""
    def ocp(seats: int) -> TableConfig:
        raw = {"table": "t", "game": "one_card_poker", "seats": seats, "state_dir": str(tmp_path / "state"),
               "limits": {"unit": 100, "min_bet": 100, "max_bet": 1000}}
        return parse_table(raw, tmp_path / "t.yaml")
    live = open_service(ocp(3))
    live.replay()
    for inp in (I.CreditIn(3, 700), I.SetDesignatedPlayer(3), I.CreditOut(3, 700)):
        assert live.submit(inp, "test", at=1.0).refused is None
    live.journal.close()
    refused_start(ocp(2), "seat 3 is the Designated Player")


def test_the_floor_derives_every_row_under_its_limits_through_two_changes(tmp_path: Path) -> None:
    """The uplink's derivation (controller.floor.derive), from row 1 and from each checkpoint, with a
    table file older than both changes: the events the daemon published, row for row."""
    from controller.floor.derive import JournalSource, Replay

    stale = config(tmp_path, 100, 1000)
    play(stale, 2, checkpoint_every=8)
    play(config(tmp_path, 200, 500), 2, checkpoint_every=8)
    want = play(config(tmp_path, 100, 2000), 2, checkpoint_every=8)["events"]
    source = JournalSource(stale)
    try:
        last = source.last_row()
        rows = [e.input.kind for e in source.entries(1, last)]
        assert rows.count("limits") == 2
        starts = set()
        for bound in range(0, last + 1, 4):
            replay = Replay(source)
            begun = replay.resume(source, bound) if bound else 0
            got = [ev for e in source.entries(begun + 1, last) for ev in replay.message(e, last).events]
            assert got == want[len(want) - len(got):]
            starts.add(begun)
        assert len(starts) > 2, "from row 1 and from checkpoints before and after the second change"
    finally:
        source.close()


def test_a_journal_from_before_limits_were_recorded_keeps_its_seats_holding_money(tmp_path: Path) -> None:
    """Its first start under this software, with a table file of fewer seats: the rows name seat 2, so
    the journal started with a seat 2 (not the file's one seat, under which seat 2's credit_in would
    be refused in the replay and its money silently gone); seat 2 holds credits: the start is refused."""
    play(config(tmp_path, 100, 1000), 1)  # seats 1 and 2 hold credits
    with sqlite3.connect(tmp_path / "state" / "journal.sqlite3") as conn:
        conn.execute("DELETE FROM meta WHERE key = 'limits'")  # as software before this change wrote it
    refused_start(config(tmp_path, 100, 1000, seats=1), "seat 2 holds credits or a wager")


DAEMON_CHILD = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from test_limits_journal import config
from controller.daemon.server import Daemon
Daemon(config(Path(sys.argv[2]), 100, 1000), use_shoe=False).open()
"""


def test_a_new_journal_has_its_limits_from_its_first_byte(tmp_path: Path) -> None:
    """The daemon killed at its first journal write after making a new journal: an uplink that opens
    it then (its table file older: a maximum of 500) must still find the limits its rows will be
    played under (1000), or it derives the 1000 wagers as refused while the daemon took them."""
    env = {**os.environ, "CROUPIER_FAULT": "journal_write:1"}
    subprocess.run([sys.executable, "-c", DAEMON_CHILD, str(Path(__file__).parent), str(tmp_path)],
                   env=env, timeout=30, check=False)
    from controller.floor.derive import JournalSource, Replay

    source = JournalSource(config(tmp_path, 100, 500))
    try:
        want = play(config(tmp_path, 100, 1000), 1)["events"]
        replay, last = Replay(source), source.last_row()
        assert [ev for e in source.entries(1, last) for ev in replay.message(e, last).events] == want
    finally:
        source.close()

"""``croupier journal export`` gives a third party all it needs to replay what it exports.

Rounds are played under one table file, the money cashed out, and the table
restarted under a file with other limits (a larger maximum, other decimals),
as tests/test_limits_journal.py does. The export (from row 1, from the
``limits`` row, from the row after it) is then replayed with the engine's
pure API alone (``Table(game, limits).apply``), from nothing but the export's
lines: it must settle every round as the daemon published it. Each line
validates against docs/schema/journal-export.schema.json. Real SQLite
journals and the daemon's own service; nothing mocked.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from controller import inputs as I
from controller.cli import main as cli_main
from controller.daemon import checkpoint
from controller.daemon.config import TableConfig, parse_table
from controller.daemon.contract import SCHEMA_DIR
from controller.daemon.journal import Journal, open_readonly
from controller.daemon.journal_export import EXPORT_NAME, HEADER
from controller.daemon.service import TableService
from controller.events import Event, RoundSettled, RoundVoided
from controller.floor.derive import JournalSource, Replay
from controller.floor.report import aggregate, from_journal
from controller.games import game_class
from controller.limits import TableLimits
from controller.money import Currency
from controller.rules_version import RULES_VERSION
from controller.table import Table
from controller.tools import journal_cmd
from controller.tools.ctl import format_round
from pitboard.tile import Tile

pytestmark = pytest.mark.timeout(60)

#: Player 5C 3D = natural 8, Banker 2H AS = 3 (deal order PPBB): the Player wins.
CARDS = [I.CardSeen(I.parse_card(c)) for c in ("5C", "3D", "2H", "AS")]


def config(tmp_path: Path, min_bet: int, max_bet: int, minor_units: int) -> TableConfig:
    raw = {"table": "t", "game": "baccarat", "seats": 3, "state_dir": str(tmp_path / "state"),
           "limits": {"unit": 100, "min_bet": min_bet, "max_bet": max_bet},
           "currency": {"minor_units": minor_units}}
    return parse_table(raw, tmp_path / "t.yaml")


def settled(events: list[Event]) -> list[tuple[Any, ...]]:
    """What a round paid: its settlement lines, the house's net and the credits after it (not its
    number: an export from a later row starts counting at 1)."""
    return [(e.settlements, getattr(e, "house_net", 0), e.credits) for e in events
            if isinstance(e, RoundSettled | RoundVoided)]


def session(cfg: TableConfig, inputs: list[I.Input], at: float = 1.0) -> tuple[list[Event], int]:
    """Start the daemon's service under ``cfg`` and play ``inputs`` (journaled at ``at``): the events it
    published for them, and the journal's last row before them (a change of limits the start journaled,
    if any)."""
    journal = Journal.open(cfg.state_dir, table="t", game=cfg.game_name, options=cfg.options_dict(),
                           fsync=False)
    live = TableService(cfg, journal, checkpoint_every=8)  # a later export starts from one (below)
    live.replay()
    before, seq = journal.last_id, live.seq
    for inp in inputs:
        assert live.submit(inp, "test", at=at).refused is None, inp
    published = [e for s, e in live.recent if s > seq]
    journal.close()
    return published, before


def export(tmp_path: Path, start: int) -> list[dict[str, Any]]:
    out = tmp_path / f"from{start}.jsonl"
    state = str(tmp_path / "state")
    assert cli_main(["journal", "export", "--state-dir", state, "--from", str(start), "--out", str(out)]) == 0
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def replay(lines: list[dict[str, Any]]) -> list[Event]:
    """A third party's replay: the engine's pure API and the export's lines, nothing else."""
    header, *rows = lines
    cls = game_class(header["game"])
    table = Table(cls(cls.options_model.model_validate(header["options"])), TableLimits(**header["limits"]))
    return [e for row in rows for e in table.apply(I.input_from_dict(row["input"]))]


def rounds(wagers: list[I.Input], n: int) -> list[I.Input]:
    return [inp for _ in range(n) for inp in (I.OpenBetting(), *wagers, I.CloseBetting(), *CARDS)]


def two_limits(tmp_path: Path,
               at: float = 1.0) -> tuple[TableConfig, TableConfig, list[Event], list[Event], int]:
    """Two rounds under a first table file (decimals 2), the money out, a restart under a second one
    (decimals 0) and two rounds more, every input journaled at ``at``: both files, the events each
    session published, the limits row. Each set refuses a wager the other takes (100 under the second
    minimum, 2000 over the first maximum): a replay under the wrong limits pays other rounds."""
    before, after = config(tmp_path, 100, 1000, 2), config(tmp_path, 200, 2000, 0)
    first, _ = session(before, [
        I.CreditIn(1, 5000), I.CreditIn(2, 5000), I.NewShoe(),
        *rounds([I.PlaceWager(1, "player", 1000), I.PlaceWager(2, "banker", 100)], 2),
        I.CreditOut(1, 7000), I.CreditOut(2, 4800)], at)  # the money out, so the decimals may change
    second, change = session(after, [
        I.CreditIn(1, 9000), I.CreditIn(2, 9000), I.NewShoe(),
        *rounds([I.PlaceWager(1, "player", 2000), I.PlaceWager(2, "banker", 200)], 2)], at)
    return before, after, first, second, change


def test_an_export_replays_alone_to_what_the_daemon_paid_across_a_limits_change(tmp_path: Path) -> None:
    before, after, first, second, change = two_limits(tmp_path)
    assert I.input_from_dict(export(tmp_path, change)[1]["input"]) == I.SetLimits(**after.limits.model_dump())
    assert [e for e in second if isinstance(e, RoundSettled)][-1].credits == {"1": 13000, "2": 8600}
    conn, path, _ = open_readonly(after.state_dir)
    saved = checkpoint.rows(conn)
    conn.close()
    assert saved and min(saved) < change, "the header's limits of a later row start from a checkpoint"
    schema = json.loads((SCHEMA_DIR / EXPORT_NAME).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    for start, published, limits in ((1, first + second, before.limits), (change, second, before.limits),
                                     (change + 1, second, after.limits)):
        lines = export(tmp_path, start)
        header = lines[0]
        assert header["header"] == HEADER and "row" not in header
        assert header["limits"] == limits.model_dump(), f"the limits in force before row {start}"
        assert header["standalone"] is True, f"no money held before row {start}, a new shoe before a card"
        assert [row["row"] for row in lines[1:]][:1] == [start]
        for line in lines:
            errors = list(validator.iter_errors(line))
            assert not errors, f"{errors[0].message} in {line}"
        assert settled(replay(lines)) == settled(published), f"export from row {start}"
    assert lines[1]["input"] == {"input": "credit_in", "seat": 1, "amount": 9000}


def test_the_header_says_whose_rows_they_are_and_null_limits_when_the_journal_records_none(
        tmp_path: Path) -> None:
    cfg = config(tmp_path, 100, 1000, 2)
    journal = Journal.open(cfg.state_dir, table="t", game="baccarat", options=cfg.options_dict(), fsync=False)
    journal.append(I.NewShoe(), "test", 1.0)  # a journal no daemon has given limits yet (written before them)
    header = journal.header
    journal.close()
    first = export(tmp_path, 1)[0]
    assert first == {"header": HEADER, "version": 1, "table": "t", "journal_id": header["id"],
                     "game": "baccarat", "options": cfg.options_dict(), "rules": RULES_VERSION,
                     "from": 1, "to": 1, "limits": None, "standalone": False}
    assert export(tmp_path, 5) == [{**first, "from": 5}]  # past the last row: the header alone


def test_a_round_s_amounts_keep_the_decimals_it_was_played_under(tmp_path: Path) -> None:
    """After a change of ``currency.minor_units`` (allowed once no money is held), the rounds before it
    are shown at their own scale by recall (the daemon's and the floor's), the uplink's rows, the
    report and the pit board, and those after it at theirs: 1000 played under 2 decimals is 10.00,
    never 1,000; 2000 played under 0 decimals is 2,000, never 20.00."""
    _, after, _, _, change = two_limits(tmp_path)
    journal = Journal.open(after.state_dir, table="t", game="baccarat", options=after.options_dict(),
                           fsync=False)
    again = TableService(after, journal)
    again.replay()
    records = again.recorder.last(10)
    journal.close()
    assert [(r["round"], r["minor_units"]) for r in records] == [(1, 2), (2, 2), (3, 0), (4, 0)]
    today = Currency(minor_units=after.limits.minor_units)
    assert "seat 1 player stake now 10.00" in "\n".join(format_round(records[0], today))
    assert "seat 1 player stake now 2,000" in "\n".join(format_round(records[2], today))
    source, board = JournalSource(after), Tile("t")
    try:
        replay, last = Replay(source), source.last_row()
        decimals, in_play = {}, {}
        for entry in source.entries(1, last):
            message = replay.message(entry, last)
            decimals[entry.id] = message.currency["minor_units"]
            board.take_row(message)  # the pit board folds the uplink's rows
            in_play[entry.id] = board.view(1.0)["in_play_text"]
    finally:
        source.close()
    assert {decimals[row] for row in range(1, change)} == {2} and {decimals[change], decimals[last]} == {0}
    assert "10.00" in in_play.values() and "2,000" in in_play.values(), in_play  # rounds 1 and 3, bet open
    seen = from_journal(after, 0.0, 2.0)
    assert [f.minor_units for f in seen] == [2, 2, 0, 0]
    assert [(g.minor_units, g.rounds) for g in aggregate(seen, "table", 0.0, 2.0).groups] == [(0, 2), (2, 2)]


def test_a_long_replay_before_the_first_row_says_why_and_how_far_on_stderr(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The header's replay of the rows before ``--from`` is said on stderr when it is long (here any
    length): from which row and why (no usable checkpoint: the daemon keeps only its newest few, or
    they were written by other engine code), then its progress; what is exported does not change."""
    two_limits(tmp_path)
    conn, _, last = open_readonly(tmp_path / "state")
    saved = checkpoint.rows(conn)
    conn.close()
    assert len(saved) == checkpoint.KEEP and saved[0] > 3, saved
    quiet = {row: export(tmp_path, row) for row in (3, saved[-1] + 1)}
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(journal_cmd, "LONG_REPLAY", 1, raising=False)  # any replay is long here
    assert export(tmp_path, 3) == quiet[3]
    assert capsys.readouterr().err == (
        "croupier journal export: replaying rows 1..2 to find the limits and the table before row 3 "
        f"(no usable checkpoint at or before row 2: the daemon keeps only its newest {checkpoint.KEEP} "
        f"checkpoints, the oldest at row {saved[0]}, after row 2)\n"
        "  2/2 rows replayed\n")  # (every 10 % on a pipe: the last)
    middle = saved[-2]
    assert middle + 3 <= last and export(tmp_path, middle + 3)
    assert (f"replaying rows {middle + 1}..{middle + 2} to find the limits and the table before row "
            f"{middle + 3} (from the checkpoint at row {middle})") in capsys.readouterr().err
    with sqlite3.connect(tmp_path / "state" / "journal.sqlite3") as db:
        db.execute("UPDATE checkpoints SET code = 'an older build'")
    db.close()
    assert export(tmp_path, saved[-1] + 1) == quiet[saved[-1] + 1]  # replayed from row 1 now, the same
    said = capsys.readouterr().err
    assert f"replaying rows 1..{saved[-1]} " in said and "written by other engine code" in said, said


def test_a_replay_before_the_first_checkpoint_ever_taken_does_not_blame_the_pruning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Fewer than :data:`checkpoint.KEEP` checkpoints: none was ever pruned, so a row before the first
    has none because none was taken before it (a journal older than checkpoints), not because the
    daemon keeps only its newest few. A replay of exactly ``LONG_REPLAY`` rows is not "more" (quiet)."""
    two_limits(tmp_path)
    with sqlite3.connect(tmp_path / "state" / "journal.sqlite3") as db:  # one left: the first taken
        newest = db.execute("SELECT MAX(row) FROM checkpoints").fetchone()[0]
        db.execute("DELETE FROM checkpoints WHERE row < ?", (newest,))
    db.close()
    monkeypatch.setattr(journal_cmd, "LONG_REPLAY", 2, raising=False)
    assert export(tmp_path, 3) and capsys.readouterr().err == ""  # 2 rows: not more than LONG_REPLAY
    monkeypatch.setattr(journal_cmd, "LONG_REPLAY", 1, raising=False)  # any replay is long here
    assert export(tmp_path, 3)
    said = capsys.readouterr().err
    assert (f"(no usable checkpoint at or before row 2: the daemon took its first checkpoint at row "
            f"{newest}, after row 2)\n") in said and "keeps only" not in said, said


def test_out_is_written_private_and_whole_or_not_at_all(tmp_path: Path) -> None:
    """``--out`` is a file we create: 0600 from its first byte, and whole or absent (an export that
    stops at a bad row must not leave a file that reads as an export of fewer rows, nor spoil the one
    there before)."""
    cfg = config(tmp_path, 100, 1000, 2)
    session(cfg, [I.CreditIn(1, 5000), I.NewShoe(), *rounds([I.PlaceWager(1, "player", 1000)], 1)])
    out, state = tmp_path / "inputs.jsonl", str(cfg.state_dir)
    old = os.umask(0o022)
    try:
        assert cli_main(["journal", "export", "--state-dir", state, "--out", str(out)]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    whole = out.read_text(encoding="utf-8")
    with sqlite3.connect(cfg.state_dir / "journal.sqlite3") as conn:
        conn.execute("DELETE FROM inputs WHERE id = 4")  # a row lost: the export stops there, exit 1
    assert cli_main(["journal", "export", "--state-dir", state, "--out", str(out)]) == 1
    assert out.read_text(encoding="utf-8") == whole
    assert cli_main(["journal", "export", "--state-dir", state, "--out", str(tmp_path / "new.jsonl")]) == 1
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".jsonl") == ["inputs.jsonl"]


def test_the_header_says_whether_the_rows_replay_alone(tmp_path: Path) -> None:
    """An export from a later row carries the limits, not the table's state: the header's ``standalone``
    says whether a new ``Table(game, limits)`` stands where the table stood (no money, no round, no tilt,
    no device offline, the game's state across rounds a new game's, the shoe unused or shuffled before
    its first card). Here a shoe went offline before the money was cashed out: the daemon refused
    ``close_betting`` and took a second wager of 500, a replay from the row after the cash-out closes
    betting on the first and refuses the second, and pays 500 less; so that export is not
    standalone, and one from the row where the shoe came back is."""
    cfg = config(tmp_path, 100, 1000, 2)
    journal = Journal.open(cfg.state_dir, table="t", game="baccarat", options=cfg.options_dict(), fsync=False)
    live = TableService(cfg, journal)
    live.replay()
    for inp in (I.CreditIn(1, 5000), I.NewShoe(), *rounds([I.PlaceWager(1, "player", 1000)], 1),
                I.DeviceStatus("shoe", False, "unplugged"), I.CreditOut(1, 6000)):
        assert live.submit(inp, "test", at=1.0).refused is None, inp
    cashed, seq = journal.last_id, live.seq
    live.submit(I.CreditIn(1, 5000), "test", at=1.0)
    live.submit(I.OpenBetting(), "test", at=1.0)
    live.submit(I.PlaceWager(1, "player", 500), "test", at=1.0)
    assert live.submit(I.CloseBetting(), "test", at=1.0).refused  # the shoe is offline
    assert live.submit(I.PlaceWager(1, "player", 500), "test", at=1.0).refused is None
    back = journal.last_id + 1
    for inp in (I.DeviceStatus("shoe", True, ""), I.CloseBetting(), *CARDS):
        assert live.submit(inp, "test", at=1.0).refused is None, inp
    published = [e for s, e in live.recent if s > seq]
    journal.close()
    assert settled(published)[0][2] == {"1": 6000}
    alone = export(tmp_path, cashed + 1)
    assert settled(replay(alone))[0][2] == {"1": 5500}  # what a replay from there pays: not the table's
    assert alone[0]["standalone"] is False
    assert export(tmp_path, back)[0]["standalone"] is False  # a round in play, money on it
    assert export(tmp_path, 1)[0]["standalone"] is True

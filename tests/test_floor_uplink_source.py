"""What the uplink replays a journal with: the game its header names, only under this software's rules
version, and the journal it opened, whatever replaces it meanwhile (a helper's review, 2026-12-07: the
table file's game, a table file changed since the daemon's run, settled ties at 9:1 that the daemon paid
at 8:1; a journal of an older rules version was replayed with other events; a journal replaced between
the uplink's open and its stat was never noticed)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_daemon_support import baccarat_play, write_table

import controller.floor.derive as derive
from controller.daemon.config import load_table
from controller.daemon.journal import JOURNAL_NAME, Journal, JournalMismatch
from controller.daemon.service import TableService
from controller.floor.derive import JournalSource, Replay

pytestmark = pytest.mark.timeout(60)


def _dealt(tmp_path: Path, tie_pays: str) -> dict[int, Any]:
    config = load_table(write_table(tmp_path, name="opt", options={"tie_pays": tie_pays}))
    journal = Journal.open(config.state_dir, table=config.table_id, game=config.game_name,
                           options=config.options_dict(), fsync=False)
    service = TableService(config, journal)
    service.replay()
    inputs, _ = baccarat_play(40, seed=7)
    published = {(a := service.submit(inp, "command tester")).row: json.loads(json.dumps(a.payloads))
                 for inp in inputs}
    journal.close()
    return published


def test_the_uplink_replays_the_game_the_journal_names_not_the_table_files(tmp_path: Path) -> None:
    published = _dealt(tmp_path, "8:1")
    changed = load_table(write_table(tmp_path, name="opt", options={"tie_pays": "9:1"}))  # since the run
    source = JournalSource(changed)
    replay, last = Replay(source), source.last_row()
    differ = [e.id for e in source.entries(1, last)
              if json.loads(json.dumps(replay.message(e, last).events)) != published[e.id]]
    source.close()
    assert last == len(published) and differ == []


def test_the_uplink_refuses_a_journal_of_another_rules_version(tmp_path: Path) -> None:
    _dealt(tmp_path, "8:1")
    config = load_table(write_table(tmp_path, name="opt", options={"tie_pays": "8:1"}))
    conn = sqlite3.connect(config.state_dir / JOURNAL_NAME)
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'rules'")
    conn.commit()
    conn.close()
    with pytest.raises(JournalMismatch, match="written under rules version 2"):
        JournalSource(config)


def test_a_journal_replaced_while_the_uplink_opens_it_is_opened_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _dealt(tmp_path, "8:1")
    config = load_table(write_table(tmp_path, name="opt", options={"tie_pays": "8:1"}))
    opened = derive.open_readonly
    moved: list[Path] = []

    def replaced_meanwhile(state: Path) -> Any:  # the table's new journal made right after the open
        found = opened(state)
        if not moved:
            moved.append(state.rename(tmp_path / "old-state"))
            Journal.open(config.state_dir, table=config.table_id, game=config.game_name,
                         options=config.options_dict(), fsync=False).close()
        return found

    monkeypatch.setattr(derive, "open_readonly", replaced_meanwhile)
    source = JournalSource(config)
    new_id = Journal.open(config.state_dir, table=config.table_id, game=config.game_name,
                          options=config.options_dict(), fsync=False)
    try:
        assert source.journal_id == new_id.header["id"] and source.last_row() == 0
        assert not source.replaced()
    finally:
        new_id.close()
        source.close()

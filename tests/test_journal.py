"""The journal: durable inputs, exact replay, and clear refusals to start from a bad journal."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from test_daemon_support import baccarat_play, config_for, write_table

from controller import inputs as I
from controller.cli import main
from controller.daemon.journal import JOURNAL_NAME, MARKER_NAME, Journal, JournalError, JournalMismatch
from controller.daemon.service import TableService
from controller.rules_version import RULES_VERSION, UNRECORDED

pytestmark = pytest.mark.timeout(60)


def _open(tmp: Path, **kw: object) -> TableService:
    config = config_for(tmp, **kw)  # type: ignore[arg-type]
    journal = Journal.open(
        config.state_dir, table=config.table_id, game=config.game_name, options=config.options_dict()
    )
    service = TableService(config, journal)
    service.replay()
    return service


def test_replay_rebuilds_exact_state_and_seq(tmp_path: Path) -> None:
    inputs, engine = baccarat_play(30, seed=3)
    service = _open(tmp_path)
    for inp in inputs[:-3]:  # stop mid-round
        service.submit(inp, "test")
    before = (service.seq, service.table.snapshot(), service.recorder.last(5))
    service.journal.close()
    again = _open(tmp_path)
    assert (again.seq, again.table.snapshot(), again.recorder.last(5)) == before
    assert again.table.phase == "dealing"  # the round cut short continues
    for inp in inputs[-3:]:
        again.submit(inp, "test")
    assert again.table.snapshot() == engine.snapshot()
    again.journal.close()


def test_idempotency_key_applies_once(tmp_path: Path) -> None:
    service = _open(tmp_path)
    first = service.submit(I.CreditIn(1, 500), "test", ref="cash-1")
    again = service.submit(I.CreditIn(1, 500), "test", ref="cash-1")
    assert again.duplicate and again.row == first.row and service.table.credits[1] == 500
    service.journal.close()


def test_game_or_options_change_is_refused_naming_the_difference(tmp_path: Path) -> None:
    _open(tmp_path).journal.close()
    with pytest.raises(JournalMismatch, match=r"options.tie_pays: journal has '9:1', table file has '8:1'"):
        _open(tmp_path, options={"tie_pays": "8:1"})
    with pytest.raises(JournalMismatch, match=r"game: journal has 'baccarat', table file has 'swap_hand'"):
        _open(tmp_path, game="swap_hand")


def test_missing_journal_with_marker_is_refused(tmp_path: Path) -> None:
    service = _open(tmp_path)
    service.submit(I.CreditIn(1, 500), "test")
    service.journal.close()
    state = service.config.state_dir
    (state / JOURNAL_NAME).unlink()
    with pytest.raises(JournalError, match="missing, but .*journal.marker says a journal was created here"):
        _open(tmp_path)


def test_brand_new_state_dir_starts_a_journal(tmp_path: Path) -> None:
    service = _open(tmp_path)
    assert service.seq == 0 and (service.config.state_dir / MARKER_NAME).exists()
    service.journal.close()


def _corrupt_row(state: Path, text: str) -> None:
    conn = sqlite3.connect(state / JOURNAL_NAME)
    conn.execute("UPDATE inputs SET input = ? WHERE id = 2", (text,))
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    "text, reason",
    [
        ("{not json", "input does not parse"),
        (json.dumps({"input": "card", "card": "ZZ"}), "field 'card'"),
        (json.dumps({"input": "teleport"}), "unknown input 'teleport'"),
    ],
)
def test_unparseable_input_names_file_and_row(tmp_path: Path, text: str, reason: str) -> None:
    service = _open(tmp_path)
    for inp in (I.CreditIn(1, 500), I.NewShoe(), I.OpenBetting()):
        service.submit(inp, "test")
    service.journal.close()
    _corrupt_row(service.config.state_dir, text)
    with pytest.raises(JournalError, match=rf"{JOURNAL_NAME}: row 2: .*{reason}") as err:
        _open(tmp_path)
    assert err.value.row == 2


def test_missing_row_is_refused(tmp_path: Path) -> None:
    service = _open(tmp_path)
    for inp in (I.CreditIn(1, 500), I.NewShoe(), I.OpenBetting()):
        service.submit(inp, "test")
    service.journal.close()
    conn = sqlite3.connect(service.config.state_dir / JOURNAL_NAME)
    conn.execute("DELETE FROM inputs WHERE id = 2")
    conn.commit()
    conn.close()
    with pytest.raises(JournalError, match="rows are missing"):
        _open(tmp_path)


def test_bad_header_and_garbage_file_are_refused(tmp_path: Path) -> None:
    service = _open(tmp_path)
    service.journal.close()
    path = service.config.state_dir / JOURNAL_NAME
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = 'something-else' WHERE key = 'format'")
    conn.commit()
    conn.close()
    with pytest.raises(JournalError, match="bad header: format 'something-else'"):
        _open(tmp_path)
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(JournalError, match="not a readable SQLite journal"):
        _open(tmp_path)


def test_damaged_pages_fail_integrity_check_or_parse(tmp_path: Path) -> None:
    service = _open(tmp_path)
    inputs, _ = baccarat_play(40, seed=1)
    for inp in inputs:
        service.submit(inp, "test")
    service.journal.close()
    path = service.config.state_dir / JOURNAL_NAME
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(path.read_bytes())
    page = 4096
    for i in range(3 * page + 100, min(len(data), 6 * page), 7):  # scribble over a few pages
        data[i] = 0xA5
    path.write_bytes(bytes(data))
    with pytest.raises(JournalError) as err:
        _open(tmp_path)
    assert str(path) in str(err.value)


def test_croupier_run_refuses_and_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = write_table(tmp_path)
    _open(tmp_path).journal.close()
    (tmp_path / "t1-state" / JOURNAL_NAME).write_bytes(b"garbage" * 1000)
    assert main(["run", str(table), "--no-shoe"]) == 3
    err = capsys.readouterr().err
    assert "refusing to start" in err and JOURNAL_NAME in err


def test_table_file_errors_name_file_key_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = write_table(tmp_path, options={"tie_pays": "7:1"}, colour="red")
    assert main(["run", str(table)]) == 2
    err = capsys.readouterr().err
    assert f"{table}: key 'colour': unknown key" in err
    table = write_table(tmp_path, name="t2", options={"tie_pays": "7:1"})
    assert main(["run", str(table)]) == 2
    assert f"{table}: key 'options.tie_pays'" in capsys.readouterr().err
    table = write_table(tmp_path, name="t3", shoe="nowhere.yaml")
    assert main(["run", str(table)]) == 2
    assert "key 'shoe.profile': no file 'nowhere.yaml'" in capsys.readouterr().err


def test_a_resent_commands_key_is_found_through_the_partial_index(tmp_path: Path) -> None:
    """Only inputs sent with a key are in ``inputs_ref`` (a card writes no index page), and looking a
    key up still reads the index, not the whole journal."""
    service = _open(tmp_path)
    service.submit(I.CreditIn(1, 500), "test", ref="cash-1")
    conn = service.journal.connection
    query = "EXPLAIN QUERY PLAN SELECT id FROM inputs WHERE ref = ?"
    plan = " ".join(str(row[-1]) for row in conn.execute(query, ("cash-1",)))
    assert "USING COVERING INDEX inputs_ref" in plan
    (index,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'inputs_ref'").fetchone()
    assert str(index).endswith("WHERE ref IS NOT NULL")
    service.journal.close()


def test_a_journal_of_another_rules_version_is_refused_with_the_archive_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    service = _open(tmp_path)
    service.submit(I.CreditIn(1, 500), "test")
    assert service.journal.header["rules"] == str(RULES_VERSION)
    service.journal.close()
    monkeypatch.setattr("controller.daemon.journal_read.RULES_VERSION", RULES_VERSION + 1)
    with pytest.raises(JournalMismatch, match=rf"written under rules version {RULES_VERSION}; this software "
                                              rf"plays rules version {RULES_VERSION + 1}.*croupier journal "
                                              r"archive --state-dir "):
        _open(tmp_path)
    monkeypatch.undo()
    assert _open(tmp_path).table.credits[1] == 500  # refused, not changed: the right software still runs it


def test_a_journal_without_a_rules_version_is_read_as_version_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    service = _open(tmp_path)
    path = service.journal.path
    service.journal.close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DELETE FROM meta WHERE key = 'rules'")  # as code before the rules version wrote it
    conn.close()
    monkeypatch.setattr("controller.daemon.journal_read.RULES_VERSION", UNRECORDED)
    _open(tmp_path).journal.close()  # the software of rules version 1 still runs it
    monkeypatch.undo()
    with pytest.raises(JournalMismatch, match=f"written under rules version {UNRECORDED};"):
        _open(tmp_path)


def test_a_new_journal_refuses_to_start_beside_another_journals_write_ahead_log(tmp_path: Path) -> None:
    """A daemon killed with writes still in its -wal, its journal and marker then removed by hand: SQLite
    would replay the old log into the new journal (the old credits under a new id; a helper's review,
    2026-12-07). The start is refused, naming the log; an empty log and a stale -shm are cleared."""
    service = _open(tmp_path)
    for n in range(5):
        service.submit(I.CreditIn(1, 1000 + n), "test")
    state = service.config.state_dir
    log = state / (JOURNAL_NAME + "-wal")
    kept = log.read_bytes()  # as a SIGKILL leaves it: the frames not yet checkpointed
    assert kept
    service.journal.close()
    (state / JOURNAL_NAME).unlink()
    (state / MARKER_NAME).unlink()
    log.write_bytes(kept)
    with pytest.raises(JournalError, match="holds .* bytes of a journal's writes") as err:
        _open(tmp_path)
    assert str(log) in str(err.value) and not (state / JOURNAL_NAME).exists()
    log.write_bytes(b"")
    (state / (JOURNAL_NAME + "-shm")).write_bytes(b"\0" * 32768)
    fresh = _open(tmp_path)
    assert fresh.journal.last_id == 0 and fresh.table.credits == {}


def test_a_journal_refuses_a_table_file_of_another_name(tmp_path: Path) -> None:
    """The floor keeps a journal's rows under its table's name: a table renamed over its journal would
    have its uplink send the whole journal again under the new name, every round counted twice in the
    history (a helper's review, 2026-12-07: the name was not compared)."""
    state = tmp_path / "state"
    Journal.open(state, table="t1", game="baccarat", options={}).close()
    with pytest.raises(JournalMismatch, match="table: journal has 't1', table file has 't2'"):
        Journal.open(state, table="t2", game="baccarat", options={})
    Journal.open(state, table="t1", game="baccarat", options={}).close()


@pytest.mark.parametrize(("limits", "key"), [({"min_bet": 5.00, "max_bet": 500}, "limits.min_bet"),
                                             ({"max_bet": True}, "limits.max_bet"),
                                             ({"max_credit": "1000"}, "limits.max_credit")])
def test_a_limit_written_as_money_or_a_word_is_refused_naming_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], limits: dict[str, object], key: str) -> None:
    """Limits are whole minor units: ``min_bet: 5.00`` (meant as five euros) was read as 5 cents, ``on`` as
    1 (a helper's review, 2026-12-07)."""
    table = write_table(tmp_path, limits={"unit": 100, "min_bet": 100, "max_bet": 100000, **limits})
    assert main(["run", str(table)]) == 2
    assert f"{table}: key '{key}'" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["alerts", "alive", "Rows"])
def test_a_table_named_as_a_word_of_the_floors_subjects_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    """Table ``alerts``'s rows (croupier.alerts.rows) would be table ``rows``'s alerts; its heartbeat table
    ``alive``'s alerts (a helper's review, 2026-12-07)."""
    table = write_table(tmp_path, name=name)
    assert main(["run", str(table)]) == 2
    assert "is a word of the floor's subjects" in capsys.readouterr().err

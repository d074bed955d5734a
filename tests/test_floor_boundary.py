"""The floor stays outside the table: nothing in the core or the daemon imports it, nor its clients."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from floor_support import Proc, wait_for
from test_daemon_support import write_table
from test_floor_uplink import write_journal

from controller.cli import main as cli_main
from controller.daemon.config import load_table
from controller.floor.local import NatsServer
from controller.inputs import CreditIn
from tests.server_fixtures import FloorDatabase

ROOT = Path(__file__).resolve().parents[1]


def test_the_core_and_the_daemon_never_import_the_floor() -> None:
    """Only the command line registers the floor's commands (controller/cli_parser.py)."""
    offenders = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "controller").rglob("*.py"))
                 if "controller/floor" not in p.as_posix() and p.name != "cli_parser.py"
                 and "controller.floor" in p.read_text(encoding="utf-8")]
    assert offenders == []


def test_the_floor_s_clients_are_loaded_only_by_the_floor_s_commands() -> None:
    """``croupier run`` and every other command start without nats-py or psycopg."""
    code = ("import sys, controller.cli, controller.daemon.server; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('nats', 'psycopg')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_the_floor_s_read_commands_do_not_load_nats_py() -> None:
    """``floor recall``, ``tables`` and ``export`` only read PostgreSQL: nats-py (with aiohttp) is
    most of a second of a recall's start-up (bench/floor_recall.py times the command)."""
    code = ("import sys, controller.floor.queries; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'nats'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_an_uplink_without_a_journal_says_so_in_one_line(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Before it reaches for the network (no server listens on port 9 here)."""
    table = write_table(tmp_path, name="nj")
    assert cli_main(["uplink", str(table), "--nats", "nats://127.0.0.1:9"]) == 1
    err = capsys.readouterr().err
    assert err == f"croupier uplink: {tmp_path / 'nj-state' / 'journal.sqlite3'}: no journal here\n"


def test_an_uplink_refused_for_a_persons_reason_exits_so_its_unit_stays_down(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 1 was restarted every 2 s for ever, also for what needs a person (a review, 2026-12-07): now 2 a
    bad table file, 3 another table's journal (the unit's RestartPreventExitStatus=2 3), 1 a journal not
    there yet (the daemon's first start makes it)."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("table: bad\ngame: nosuchgame\n")
    assert cli_main(["uplink", str(bad), "--nats", "nats://127.0.0.1:9"]) == 2
    config = load_table(write_table(tmp_path, name="mine"))
    write_journal(config, [CreditIn(1, 100)])
    other = write_table(tmp_path, name="other")
    assert cli_main(["uplink", str(other), "--state-dir", str(config.state_dir),
                     "--nats", "nats://127.0.0.1:9"]) == 3
    assert "this journal is table 'mine''s, not 'other''s" in capsys.readouterr().err


def test_a_stop_while_the_floor_is_away_is_a_clean_exit(tmp_path: Path) -> None:
    """SIGTERM while the uplink keeps trying a server that is not there: exit 0, no traceback."""
    config = load_table(write_table(tmp_path, name="away"))
    write_journal(config, [CreditIn(1, 100)])
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", "nats://127.0.0.1:9").start()
    wait_for("a failed connection", lambda: "failed" in uplink.text(), 30, uplink)
    assert uplink.stop() == 0, uplink.text()
    assert "Traceback" not in uplink.text()


def test_a_recorder_stopped_after_its_nats_server_died_exits_cleanly(
    tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase,
) -> None:
    """SIGTERM to a recorder whose server went away under it: it stops at once, exit 0, no traceback
    (closing the lost connection raised "Connection lost" and the stop ended in a traceback, exit 1)."""
    rec = Proc(tmp_path / "rec.log", "floor", "record", "--nats", nats_server.url, "--db", postgres.dsn)
    rec.start()
    try:
        wait_for("the recorder up", lambda: rec.said("floor schema"), 60, rec)
        nats_server.kill()
        wait_for("the recorder lost its server", lambda: rec.said("ConnectionRefusedError"), 30, rec)
        assert rec.stop() == 0, rec.text()
        assert "Traceback" not in rec.text(), rec.text()
    finally:
        rec.stop()

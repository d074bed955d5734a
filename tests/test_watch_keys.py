"""`croupier watch` and keys: a table with plain events (the default) is followed whatever $CROUPIER_KEY says.

Users export CROUPIER_KEY for `ctl` (the demo prints that line) and then run `watch` in the same shell;
watch used the key for the plain PUB and snapshot sockets, whose CURVE handshake then failed for ever
("the CURVE handshake failed ... retrying"). A key is for a table whose file says
security.curve_events: true; there it is still required and used.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_daemon_support import config_for
from test_identity import fast_config, running

from controller.cli import main
from controller.daemon.client import local_key
from controller.daemon.config import TableConfig
from controller.daemon.keys import KeyFolder


def watch(table: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    assert main(["watch", "--table", str(table), "--json", "--idle-exit", "1"]) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_watch_follows_a_plain_table_with_croupier_key_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = fast_config(tmp_path)
    runner = running(config)
    try:
        monkeypatch.setenv("CROUPIER_KEY", str(local_key(config).path))  # the table's own operator key
        out, err = watch(config.path, capsys)
        assert '"table": "t1"' in out and "handshake" not in err
        monkeypatch.setenv("CROUPIER_KEY", str(tmp_path / "missing.key_secret"))  # not even read
        out, err = watch(config.path, capsys)
        assert '"table": "t1"' in out and err == ""
    finally:
        runner.stop()


def curve_table(tmp_path: Path) -> TableConfig:
    """Table c1, whose file says its events need a key (security.curve_events)."""
    (tmp_path / "curve").mkdir()
    zeromq = {"pub": f"ipc://{tmp_path}/c.pub", "snapshot": f"ipc://{tmp_path}/c.snap",
              "command": f"ipc://{tmp_path}/c.cmd", "heartbeat": 0.2}
    return config_for(tmp_path / "curve", name="c1", zeromq=zeromq, security={"curve_events": True})


def test_watch_uses_the_key_where_the_table_says_events_need_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = curve_table(tmp_path)
    runner = running(config)
    try:
        monkeypatch.setenv("CROUPIER_KEY", str(local_key(config).path))
        out, err = watch(config.path, capsys)
        assert '"table": "c1"' in out and "handshake" not in err
        monkeypatch.setenv("CROUPIER_KEY", str(tmp_path / "missing.key_secret"))
        assert main(["watch", "--table", str(config.path), "--json", "--idle-exit", "1"]) != 0
        assert "missing.key_secret" in capsys.readouterr().err
    finally:
        runner.stop()


def test_idle_exit_gives_up_on_a_table_that_refuses_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key the table does not know fails the CURVE handshake, so no event ever arrives: that is
    idle too. --idle-exit used to retry for ever there; a script waiting on it hung."""
    config = curve_table(tmp_path)
    runner = running(config)
    try:
        stranger = KeyFolder(tmp_path / "elsewhere").new_client("mallory", "observer")
        monkeypatch.setenv("CROUPIER_KEY", str(stranger))
        assert main(["watch", "--table", str(config.path), "--json", "--idle-exit", "1"]) == 1
        captured = capsys.readouterr()
        assert captured.out == ""
        assert "retrying" in captured.err and "no events for 1 s (--idle-exit): giving up" in captured.err
    finally:
        runner.stop()


def test_watch_says_a_journal_fault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A table halted by its journal showed as a normal round in the live view, and --plain and --json said
    nothing of it (a helper's review, 2026-12-07)."""
    from restart_support import Croupier

    from controller.tools.live_view import TableView, _banners

    croupier = Croupier(tmp_path)
    croupier.start("journal_write:3:eio")  # the third write fails: the table halts
    try:
        replies = [croupier.call("credit_in", seat=1, amount=100, ref=f"C{n}") for n in range(3)]
        assert replies[-1].get("journal_fault"), replies
        assert main(["watch", "--table", str(croupier.path), "--plain", "--idle-exit", "1"]) == 0
        assert "!! JOURNAL FAULT" in capsys.readouterr().out
    finally:
        croupier.stop()
    view = TableView("t1")
    view.take_snapshot({"state": {}, "journal_fault": {"file": "/x/journal.sqlite3", "error": "disk full"}})
    assert any("JOURNAL FAULT /x/journal.sqlite3: disk full" in str(b) for b in _banners(view, None))

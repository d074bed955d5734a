"""A journal's currency is its header's: the floor labels its amounts so, and a table file of another code
cannot play on under it (a review, 2026-12-07).

The uplink took the code of the table file it started with: a table moved from USD to EUR on a new
journal, its uplink not restarted, had every EUR row labelled USD in the floor's report and pit board;
a table file changed from EUR to JPY on the same journal relabelled the journal's EUR rounds JPY.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_daemon_support import write_table

from controller.cli import main
from controller.daemon.config import load_table
from controller.daemon.journal import Journal, JournalMismatch
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.floor.derive import JournalSource, Replay


def _open(state_dir: Path, currency: str | None) -> Journal:
    return Journal.open(state_dir, table="t1", game="baccarat", options={}, fsync=False, currency=currency)


def test_a_journal_records_its_currency_and_refuses_another(tmp_path: Path) -> None:
    _open(tmp_path / "eur", "EUR").close()
    _open(tmp_path / "eur", "EUR").close()
    with pytest.raises(JournalMismatch, match="currency.code: journal has 'EUR', table file has 'JPY'"):
        _open(tmp_path / "eur", "JPY")
    _open(tmp_path / "none", "").close()
    _open(tmp_path / "none", "EUR").close()  # a code where none was: a label added, not another money
    _open(tmp_path / "old", None).close()  # a journal from before the code was recorded
    _open(tmp_path / "old", "EUR").close()


def test_the_daemon_refuses_a_table_file_of_another_currency_and_the_uplink_labels_by_the_journal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_table(tmp_path, currency={"code": "USD"})
    config = load_table(path)
    with DaemonThread(Daemon(config, use_shoe=False)):
        pass
    write_table(tmp_path, currency={"code": "EUR"})  # the same file, now EUR: on the USD journal
    moved = load_table(path)
    assert main(["run", str(path), "--no-shoe"]) == 3
    assert "currency.code: journal has 'USD', table file has 'EUR'" in capsys.readouterr().err
    source = JournalSource(moved)  # an uplink started under the EUR file reads the USD journal
    try:
        assert Replay(source).currency == {"code": "USD", "minor_units": 2}
    finally:
        source.close()

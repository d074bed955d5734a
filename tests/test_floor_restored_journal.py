"""A journal restored from an older copy keeps its id: its uplink refuses to give the floor a second history.

After the copy's last row the table plays on, and its new rows take row numbers the stream already holds
for the lost ones. The uplink resumed after the stream's last row: rows up to it stayed the lost history,
rows after it were the new one's, and the floor's record mixed the two without a word (a review,
2026-12-07). Now it stops (exit 3: a person decides what the table's history is), naming the journal.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from floor_support import nats_server  # noqa: F401 (fixture)
from test_daemon_support import baccarat_play, config_for
from test_floor_uplink import publish_rows

from controller.cli import main as cli_main
from controller.daemon.config import TableConfig
from controller.daemon.journal import Journal
from controller.floor.local import NatsServer
from controller.inputs import Input

pytestmark = pytest.mark.timeout(60)


def _append(config: TableConfig, inputs: list[Input], first_at: float) -> None:
    journal = Journal.open(config.state_dir, table=config.table_id, game=config.game_name,
                           options=config.options_dict(), fsync=False)
    for n, inp in enumerate(inputs):
        journal.append(inp, "command tester", first_at + n)
    journal.close()


def _uplink(config: TableConfig, url: str) -> int:
    return cli_main(["uplink", str(config.path), "--nats", url])


def test_a_journal_restored_from_an_older_copy_is_refused_by_its_uplink(
        tmp_path: Path, nats_server: NatsServer, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    config = config_for(tmp_path, name="r1")
    inputs, _ = baccarat_play(2, seed=5)
    half = len(inputs) // 2
    _append(config, inputs[:half], 1_700_000_000.0)
    copy = tmp_path / "copy"
    shutil.copytree(config.state_dir, copy)  # last night's copy
    _append(config, inputs[half:], 1_700_000_000.0 + half)
    publish_rows(nats_server.url, config, set(range(1, len(inputs) + 1)))  # all of it on the floor

    shutil.rmtree(config.state_dir)
    shutil.copytree(copy, config.state_dir)  # the disk lost: the copy restored
    capsys.readouterr()
    assert _uplink(config, nats_server.url) == 3
    assert f"the stream holds row {len(inputs)} of journal" in capsys.readouterr().err

    _append(config, inputs[half:] + inputs[:3], 1_700_100_000.0)  # the table played on, other inputs
    assert _uplink(config, nats_server.url) == 3
    err = capsys.readouterr().err
    assert f"row {len(inputs)} of journal" in err and "restored from an older copy" in err, err

"""``croupier floor demo`` as a new user runs it: servers, a dealing table, its uplink and a recorder,
the query commands printed, the floor caught up at the end, and nothing left behind."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_daemon_support import free_port_base

from controller.cli import main as cli_main

pytestmark = pytest.mark.timeout(180)


def test_floor_demo_records_a_dealing_table_and_says_how_to_query_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = cli_main(["floor", "demo", "--games", "baccarat", "--rounds", "1", "--delay", "0", "--seed", "3",
                     "--ports", str(free_port_base(4))])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    db = re.search(r"PostgreSQL (postgresql://\S+),", out)
    assert db is not None, out
    board = re.search(r"The pit board: (http://127\.0\.0\.1:\d+/) \(operator pit_boss, token (\S+)\)", out)
    assert board is not None, out  # the pit board was up (its address printed once it listened)
    for command in ("floor tables", "floor recall baccarat_sim --last 3", "floor export baccarat_sim",
                    "floor verify"):
        assert f"{command} " in out and f"--db {db.group(1)}" in out, out
    # The end: `floor tables` with every row of the table's journal recorded, nothing behind, no gap.
    row = re.search(r"^baccarat_sim\s+baccarat\s+(\d+)\s+(\d+)\s+.*$", out, re.M)
    assert row is not None and int(row.group(1)) > 5 and row.group(2) == "0", out
    assert "GAP" not in row.group(0)
    logs = re.search(r"\(logs in (\S+)\)", out)
    assert logs is not None and not Path(logs.group(1)).exists(), "the demo's folder is deleted"

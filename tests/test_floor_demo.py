"""``croupier floor demo`` as a new user runs it: servers, a dealing table, its uplink and a recorder,
the query commands printed, the floor caught up at the end, and nothing left behind."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from test_daemon_support import free_port_base

from controller.cli import main as cli_main
from controller.floor.demo import _behind, _wait

pytestmark = pytest.mark.timeout(180)


def _kept_logs(err: str) -> str:
    """The tails of the logs a failed demo keeps (it names their folder), then the folder deleted."""
    kept = re.search(r"\(logs: (\S+)\)", err)
    if kept is None:
        return ""
    folder = Path(kept.group(1))
    tails = "".join(f"\n--- {log.name} ---\n{log.read_text(errors='replace')[-3000:]}"
                    for log in sorted(folder.glob("*.log")))
    shutil.rmtree(folder, ignore_errors=True)
    return tails


def test_floor_demo_records_a_dealing_table_and_says_how_to_query_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = cli_main(["floor", "demo", "--games", "baccarat", "--rounds", "1", "--delay", "0", "--seed", "3",
                     "--ports", str(free_port_base(4))])
    out, err = capsys.readouterr()
    assert code == 0, out + err + _kept_logs(err)
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


def test_a_floor_demo_that_fails_keeps_its_logs_and_says_where(capsys: pytest.CaptureFixture[str]) -> None:
    """Its table cannot start (another program holds the port of its daemon's events): the demo stops,
    names the failed process, and the folder it names holds every part's log, the servers' too."""
    base = free_port_base(4)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", base))
        holder.listen()
        code = cli_main(["floor", "demo", "--games", "baccarat", "--rounds", "1", "--delay", "0",
                         "--seed", "3", "--ports", str(base)])
    out, err = capsys.readouterr()
    assert code == 1, out + err
    kept = re.search(r"croupier floor demo: .*a process failed: .*\(logs: (\S+)\)", err)
    assert kept is not None, err
    folder = Path(kept.group(1))
    try:
        assert folder.stat().st_mode & 0o777 == 0o700
        logs = {log.name for log in folder.glob("*.log")}
        assert {"nats.log", "pg.log", "recorder.log", "baccarat_sim.demo.log"} <= logs, logs
        assert "ready to accept connections" in (folder / "pg.log").read_text(errors="replace")
        assert "Server is ready" in (folder / "nats.log").read_text(errors="replace")
        assert str(base) in (folder / "baccarat_sim.demo.log").read_text(errors="replace")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_service_that_ends_even_with_0_stops_the_floor_demo_but_a_finished_table_does_not() -> None:
    """The demo's watch over its parts, on real processes: a recorder (or alert service, pit board,
    uplink) that exits 0 has still stopped recording, so the wait fails naming it; a table's demo or a
    one-shot command that exits 0 has simply finished, and only its failure counts."""
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    failed = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        done.wait(30)
        failed.wait(30)
        assert _wait("the floor", True, 0.0, [done]) is True  # what it waits for is there: no check
        with pytest.raises(RuntimeError, match=r"the floor: a process failed: .*pass"):
            _wait("the floor", False, float("inf"), [running, done])
        assert _wait("the floor", False, float("inf"), [running], [done]) is False
        with pytest.raises(RuntimeError, match=r"a process failed: .*SystemExit\(3\)"):
            _wait("the floor", False, float("inf"), [running], [done, failed])
        with pytest.raises(RuntimeError, match="the floor: timed out"):
            _wait("the floor", False, 0.0, [running], [done])
    finally:
        running.kill()
        running.wait()


def test_the_catch_up_wait_says_what_it_lacks() -> None:
    """Past its deadline the wait for the floor to catch up names what is missing; with PostgreSQL out
    of reach, that it is PostgreSQL (not a bare "timed out")."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    said = _behind(f"postgresql://croupier@127.0.0.1:{port}/postgres", [])
    assert said.startswith("PostgreSQL: ") and str(port) in said, said

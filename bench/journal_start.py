"""Start-up against the journal's age: a daemon ready on an empty journal and on a million-input one.

    .venv/bin/python bench/journal_start.py [--inputs 1000000] [--repeat 5]

Builds a seeded Baccarat journal of ``--inputs`` inputs the way the daemon
writes it (each input through ``TableService.submit``: journal, apply, the
checkpoints of controller.daemon.checkpoint), then times "ready": a
``Daemon`` on a thread from ``open()`` (journal checks, checkpoint, replay of
the tail) until it serves its sockets (ipc:// in a temp dir). The anchor is the
same on a brand-new state dir; the two are run interleaved ``--repeat`` times
and the medians compared (aim: at most 2x). For the before, the same journal
with its checkpoints deleted is started once: a replay of every input, as
before checkpoints. Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from daemon_replay import session  # noqa: E402

from controller.daemon.config import TableConfig, parse_table  # noqa: E402
from controller.daemon.journal import Journal  # noqa: E402
from controller.daemon.runner import DaemonThread  # noqa: E402
from controller.daemon.server import Daemon  # noqa: E402
from controller.daemon.service import TableService  # noqa: E402


def config_for(work: Path, state: Path) -> TableConfig:
    zmq = {k: f"ipc://{work}/{k}" for k in ("pub", "snapshot", "command")}
    return parse_table({"table": "bench", "game": "baccarat", "state_dir": str(state), "zeromq": zmq},
                       work / "bench.yaml")


def build(config: TableConfig, inputs: int) -> float:
    journal = Journal.open(config.state_dir, table="bench", game="baccarat", options=config.options_dict(),
                           fsync=False)
    service = TableService(config, journal)
    service.replay()
    start = time.perf_counter()
    now = time.time()
    for i, inp in enumerate(session(inputs, 1)):
        service.submit(inp, "bench", at=now + i * 0.001)
    journal.close()
    return time.perf_counter() - start


def ready(config: TableConfig) -> tuple[float, int, int]:
    """Seconds from nothing to a daemon serving; the inputs it replayed and the row it started from."""
    start = time.perf_counter()
    thread = DaemonThread(Daemon(config)).start()
    took = time.perf_counter() - start
    service = thread.daemon.service
    assert service is not None
    replayed, row = service.replayed, service.checkpoint_row
    thread.stop()
    return took, replayed, row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    # Its tables have no keys (nobody commands them): that warning, once per start, is not a figure.
    logging.getLogger("croupier.auth").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory(prefix="croupier-start-") as tmp:
        work = Path(tmp)
        old = config_for(work, work / "old")
        built = build(old, args.inputs)
        size = (old.state_dir / "journal.sqlite3").stat().st_size / 2**20
        print(f"journal: {args.inputs:,} Baccarat inputs, {size:.0f} MiB, written in {built:.0f} s")
        empty_s: list[float] = []
        old_s: list[float] = []
        for n in range(args.repeat):
            fresh = config_for(work, work / f"empty{n}")
            empty_s.append(ready(fresh)[0])
            took, replayed, row = ready(old)
            old_s.append(took)
        anchor, aged = statistics.median(empty_s), statistics.median(old_s)
        print(f"  anchor: ready on an empty journal        {anchor:7.3f} s (median of {args.repeat}: "
              f"{', '.join(f'{t:.3f}' for t in empty_s)})")
        print(f"  ready on the {args.inputs:,}-input journal {aged:7.3f} s (median of {args.repeat}: "
              f"{', '.join(f'{t:.3f}' for t in old_s)}); from the checkpoint at row {row:,}, "
              f"{replayed:,} inputs replayed")
        print(f"  ratio {aged / anchor:.2f}x (aim: at most 2x)")
        before = config_for(work, work / "before")
        shutil.copytree(old.state_dir, before.state_dir)
        with sqlite3.connect(before.state_dir / "journal.sqlite3") as conn:
            conn.execute("DELETE FROM checkpoints")
        took, replayed, row = ready(before)
        print(f"  before (no checkpoint: every input replayed, {replayed:,}): {took:.2f} s, "
              f"ratio {took / anchor:.1f}x")
    print(f"command: .venv/bin/python bench/journal_start.py --inputs {args.inputs} --repeat {args.repeat}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: startup replay of a journal of ``--inputs`` inputs (default 100,000).

Builds a seeded Baccarat journal (credits, shoes, wagers, cards: what a
busy table journals), then times what the daemon does at start: open the
journal (``PRAGMA integrity_check`` included) and replay every input
through a fresh table, rebuilding the seq, the round recorder and the ring
of recent events. Not a test: it prints the figures and the command.

    python bench/daemon_replay.py [--inputs 100000]
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

from controller import inputs as I
from controller.daemon.config import parse_table
from controller.daemon.journal import Journal
from controller.daemon.service import TableService
from controller.games.baccarat.rules import Baccarat, BaccaratOptions
from controller.limits import TableLimits
from controller.simulation.shoe_shuffle import ShuffledShoe
from controller.table import Table


def session(count: int, seed: int) -> list[I.Input]:
    rng = random.Random(seed)
    table = Table(Baccarat(BaccaratOptions()), TableLimits(seats=7))
    shoe = ShuffledShoe(8, seed, cut_card=16)
    out: list[I.Input] = []

    def add(inp: I.Input) -> None:
        out.append(inp)
        table.apply(inp)

    for seat in range(1, 8):
        add(I.CreditIn(seat, 10**12))
    add(I.NewShoe())
    while len(out) < count:
        if shoe.needs_shuffle():
            shoe.shuffle()
            add(I.NewShoe())
        add(I.OpenBetting())
        for seat in range(1, 8):
            if rng.random() < 0.5:
                add(I.PlaceWager(seat, rng.choice(("player", "banker", "tie")), 100 * rng.randint(1, 20)))
        add(I.CloseBetting())
        while table.phase == "dealing":
            add(I.CardSeen(shoe.draw()))
    return out[:count]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    args = parser.parse_args()
    print(f"$ python bench/daemon_replay.py --inputs {args.inputs}")
    print(f"python {platform.python_version()} on {platform.machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        config = parse_table(
            {"table": "bench", "game": "baccarat", "state_dir": str(work / "state")}, work / "bench.yaml"
        )
        journal = Journal.open(
            config.state_dir, table="bench", game="baccarat", options=config.options_dict(), fsync=False
        )
        now = time.time()
        for i, inp in enumerate(session(args.inputs, 1)):
            journal.append(inp, "bench", now + i * 0.001)
        journal.close()
        size = (config.state_dir / "journal.sqlite3").stat().st_size / 1e6
        started = time.perf_counter()
        journal = Journal.open(
            config.state_dir, table="bench", game="baccarat", options=config.options_dict()
        )
        opened = time.perf_counter()
        service = TableService(config, journal)
        service.replay()
        done = time.perf_counter()
        print(f"journal: {args.inputs} inputs, {size:.1f} MB (+ WAL)")
        print(
            f"open + integrity_check: {opened - started:.2f} s; replay: {done - opened:.2f} s "
            f"({args.inputs / (done - opened):,.0f} inputs/s); "
            f"seq {service.seq}, round {service.table.round_no}"
        )
        journal.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

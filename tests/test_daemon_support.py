"""Shared set-up for the daemon tests (no tests here): table files, endpoints, generated play.

Nothing is mocked: table files are real files, endpoints real ipc:// or
127.0.0.1 sockets, journals real SQLite files in pytest's tmp_path.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import yaml
import zmq

from controller import inputs as I
from controller.daemon.config import TableConfig, load_table
from controller.daemon.journal import open_readonly, read_entries
from controller.daemon.server import Daemon
from controller.daemon.service import event_payload
from controller.floor.local import free_port_base as free_port_base  # consecutive ports for a daemon
from controller.games import GAMES
from controller.limits import TableLimits
from controller.simulation.shoe_shuffle import ShuffledShoe
from controller.table import Table


def write_table(
    tmp: Path, name: str = "t1", game: str = "baccarat", shoe: str | None = None, **extra: Any
) -> Path:
    """A table file in ``tmp`` with ipc:// endpoints there (no port clashes between tests)."""
    data: dict[str, Any] = {
        "table": name,
        "game": game,
        "seats": 7,
        "limits": {"unit": 100, "min_bet": 100, "max_bet": 1_000_000},
        "zeromq": {
            "pub": f"ipc://{tmp}/{name}.pub",
            "snapshot": f"ipc://{tmp}/{name}.snap",
            "command": f"ipc://{tmp}/{name}.cmd",
        },
        "state_dir": str(tmp / f"{name}-state"),
    }
    if shoe is not None:
        data["shoe"] = {"profile": shoe}
    data.update(extra)
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def journal_inputs(state_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    """A state dir's journaled inputs as (source, input dict), read as a tool reads them (read-only)."""
    conn, path, last = open_readonly(state_dir)
    try:
        return [(e.source, e.input.to_dict()) for e in read_entries(conn, path, 1, last)]
    finally:
        conn.close()


def config_for(tmp: Path, **kwargs: Any) -> TableConfig:
    return load_table(write_table(tmp, **kwargs))


def daemon_for(config: TableConfig, **kwargs: Any) -> Daemon:
    return Daemon(config, **kwargs)


def wait_subscribed(sub: zmq.Socket[bytes], timeout: float = 30.0) -> None:
    """Until ``sub``'s subscription has reached the daemon's PUB (ZeroMQ's slow joiner): its first
    heartbeat (one a second, docs/zeromq.md) is read; what came before it is dropped. Subscribed to
    ``<table>.`` before it connects. A fixed sleep instead missed the first events on a loaded machine."""
    deadline = time.monotonic() + timeout  # bounds a daemon that never publishes; measures nothing
    while time.monotonic() < deadline:
        if sub.poll(100) and sub.recv_multipart()[0].endswith(b".heartbeat"):
            return
    raise AssertionError(f"no heartbeat on the PUB socket within {timeout} s")


def baccarat_play(rounds: int, seed: int) -> tuple[list[I.Input], Table]:
    """A seeded Baccarat session as inputs (credits, shoes, bets, cards), checked on an engine table."""
    rng = random.Random(seed)
    table = Table(GAMES["baccarat"](GAMES["baccarat"].options_model.model_validate({})), TableLimits(seats=7))
    shoe = ShuffledShoe(8, seed, cut_card=16)
    inputs: list[I.Input] = []

    def add(inp: I.Input) -> None:
        inputs.append(inp)
        table.apply(inp)

    for seat in (1, 2, 3, 4):
        add(I.CreditIn(seat, 1_000_000))
    add(I.NewShoe())
    for _ in range(rounds):
        if shoe.needs_shuffle():
            shoe.shuffle()
            add(I.NewShoe())
        add(I.OpenBetting())
        for seat in (1, 2, 3, 4):
            if rng.random() < 0.3:
                continue
            add(I.PlaceWager(seat, rng.choice(("player", "banker")), rng.choice((100, 500, 1000))))
            if rng.random() < 0.1:
                add(I.PlaceWager(seat, "tie", 100))
        if rng.random() < 0.05:
            add(I.OpenBetting())  # refused: betting is open (a refusal is journaled and numbered too)
        add(I.CloseBetting())
        while table.phase == "dealing":
            add(I.CardSeen(shoe.draw()))
    return inputs, table


def expected_payloads(table_id: str, inputs: list[I.Input]) -> list[dict[str, Any]]:
    """Every event the daemon must publish for ``inputs``, numbered from seq 1."""
    table = Table(GAMES["baccarat"](GAMES["baccarat"].options_model.model_validate({})), TableLimits(seats=7))
    out: list[dict[str, Any]] = []
    for inp in inputs:
        for event in table.apply(inp):
            out.append(json.loads(json.dumps(event_payload(table_id, len(out) + 1, event))))
    return out

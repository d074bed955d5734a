"""Recall from the floor equals the table's own, round for round, for every game (not only Baccarat).

Each game's worked examples (tests/scenarios/<game>.yaml: bets, cards, decisions, designated
players) are dealt through a real daemon; its journal is turned into floor messages by the uplink's
own code (read-only, replayed: controller.floor.derive) and written into PostgreSQL by the
recorder's (controller.floor.store), and ``croupier floor recall`` must give the very records
``ctl recall`` gives on the table: every card, wager, decision and settlement line, and the house's
result. The transport between them (uplink, nats-server, recorder as processes) adds nothing to a
record; it is tested end to end, recall included, in test_floor_record.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from floor_support import postgres  # noqa: F401 (fixture)
from test_daemon_support import config_for
from test_zmq_snapshot import send_all

from controller import inputs as I
from controller.cli import main as cli_main
from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import TableConfig
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.floor import store
from controller.floor.derive import JournalSource, Replay
from controller.floor.local import Postgres
from controller.floor.schema import migrate
from controller.floor.wire import RowMessage
from controller.scenario import load_scenario, round_inputs

pytestmark = pytest.mark.timeout(60)

SCENARIOS = Path(__file__).parent / "scenarios"
#: Baccarat's recall through the floor is tested with a live uplink in test_floor_record.py.
GAMES = ("one_card_poker", "swap_hand", "two_way_winner")


def dealt(tmp_path: Path, game: str) -> tuple[TableConfig, dict[str, Any]]:
    """The game's worked examples dealt through a daemon: its table and ``ctl recall``s (the last 10
    rounds, and round 2 alone)."""
    scenario = load_scenario(SCENARIOS / f"{game}.yaml")
    config = config_for(tmp_path, name=game.replace("_", ""), game=game, seats=scenario.limits.seats,
                        options=dict(scenario.spec.options))
    mirror = scenario.new_table()  # chooses each card or decision as the round asks for it
    credits = sorted(scenario.spec.credits.items())
    inputs: list[I.Input] = [I.CreditIn(seat, amount) for seat, amount in credits]
    for n, spec in enumerate(scenario.spec.rounds, start=1):
        for inp in round_inputs(mirror, spec, n, first=n == 1):
            mirror.apply(inp)
            inputs.append(inp)
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
        try:
            send_all(client, inputs)
            recalls = {"last": client.call("recall", n=10)["rounds"],
                       "round": client.call("recall", round=2)["rounds"]}
        finally:
            client.close()
    assert len(recalls["last"]) == min(10, len(scenario.spec.rounds)) >= 2
    assert {r["status"] for r in recalls["last"]} == {"settled"}
    return config, recalls


def uplink_messages(config: TableConfig) -> list[RowMessage]:
    """Every row of the table's journal as its uplink sends it."""
    source = JournalSource(config)
    try:
        replay, last = Replay(source), source.last_row()
        return [replay.message(entry, last) for entry in source.entries(1, last)]
    finally:
        source.close()


def to_the_floor(config: TableConfig, dsn: str) -> list[RowMessage]:
    """Every row of the table's journal as its uplink sends it, recorded as a recorder records it; the
    messages."""
    messages = uplink_messages(config)
    with psycopg.connect(dsn) as conn:
        migrate(conn)
        store.write_batch(conn, messages)
    return messages


def test_floor_recall_equals_the_table_s_own_for_every_game(
        tmp_path: Path, postgres: Postgres, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    for game in GAMES:
        config, recalls = dealt(tmp_path, game)
        to_the_floor(config, postgres.dsn)
        db = ["--db", postgres.dsn]
        assert cli_main(["floor", "recall", config.table_id, "--last", "10", "--json", *db]) == 0
        assert json.loads(capsys.readouterr().out)["rounds"] == recalls["last"], game
        assert cli_main(["floor", "recall", config.table_id, "--round", "2", "--json", *db]) == 0
        assert json.loads(capsys.readouterr().out)["rounds"] == recalls["round"], game
        assert cli_main(["floor", "recall", config.table_id, "--last", "1", *db]) == 0
        newest = recalls["last"][-1]
        assert capsys.readouterr().out.startswith(f"Round {newest['round']} ({game}, settled)"), game

"""The machine-readable contract: docs/schema/ is what the code generates, and every message of a real
session of each game (events, side topics, snapshot and command exchanges) validates against it."""

from __future__ import annotations

import json
import time
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from shipped_support import shipped_table

from controller.daemon.client import CommandClient, local_key, request_snapshot
from controller.daemon.config import TableConfig, load_table
from controller.daemon.contract import (
    BUNDLE_NAME,
    SCHEMA_DIR,
    SIDE_TOPICS,
    build_schema,
    rendered,
)
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.daemon.vectors import Published as Capture
from controller.scenario import load_scenario, round_inputs
from drivers.shoe.sim import SimulatedShoe

ROOT = Path(__file__).resolve().parents[1]
GAMES = ["baccarat", "one_card_poker", "swap_hand", "two_way_winner"]

pytestmark = pytest.mark.timeout(180)


def test_the_committed_schema_is_the_generated_one() -> None:
    for name, text in rendered().items():
        committed = (SCHEMA_DIR / name).read_text(encoding="utf-8")
        assert committed == text, f"docs/schema/{name} is stale: run python -m controller.daemon.contract"
    jsonschema.Draft202012Validator.check_schema(build_schema())
    asyncapi = json.loads(rendered()["asyncapi.json"])
    assert asyncapi["asyncapi"].startswith("3.")
    for message in asyncapi["components"]["messages"].values():
        ref = message["payload"]["$ref"]
        assert ref.split("#/$defs/")[1] in build_schema()["$defs"], ref


@cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    defs = json.loads((SCHEMA_DIR / BUNDLE_NAME).read_text(encoding="utf-8"))["$defs"]
    assert name in defs, f"no schema for {name}"
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": defs})


def check(name: str, message: dict[str, Any]) -> None:
    errors = sorted(validator(name).iter_errors(message), key=str)
    assert not errors, f"{name}: {errors[0].message} at {list(errors[0].absolute_path)} in {message}"


def session_table(tmp: Path, game: str) -> tuple[TableConfig, dict[str, Any]]:
    """The shipped simulated table of ``game`` (panels, shoe) with the scenario's options and limits."""
    scenario = yaml.safe_load((ROOT / f"tests/scenarios/{game}.yaml").read_text())
    table = scenario.get("table", {})
    overrides: dict[str, Any] = {"options": scenario.get("options", {})}
    limits = {k: table[k] for k in ("unit", "min_bet", "max_bet") if k in table}
    if limits:
        overrides["limits"] = limits
    if "seats" in table:
        overrides["seats"] = table["seats"]
    return load_table(shipped_table(tmp, game, **overrides)), scenario


def play_session(config: TableConfig, scenario_path: Path, capture: Capture) -> list[tuple[str, Any, Any]]:
    """The scenario's rounds as input commands; every (schema, request, reply) exchanged."""
    z = config.spec.zeromq
    client = CommandClient(z.command, timeout=10, key=local_key(config))
    exchanges: list[tuple[str, Any, Any]] = []

    def call(request: dict[str, Any], valid: bool = True) -> dict[str, Any]:
        reply = client.send_raw(json.dumps(request).encode())
        exchanges.append((f"request.{request['cmd']}" if valid else "invalid", request, reply))
        return reply

    scenario = load_scenario(scenario_path)
    mirror = scenario.new_table()
    for seat, amount in sorted(scenario.spec.credits.items()):
        call({"cmd": "credit_in", "seat": seat, "amount": amount, "by": "cashier"})
    for n, spec in enumerate(scenario.spec.rounds, start=1):
        for inp in round_inputs(mirror, spec, n, first=n == 1):
            mirror.apply(inp)
            reply = call({"cmd": "input", "input": inp.to_dict(), "table": config.table_id})
            assert reply["ok"], reply
    for request in ({"cmd": "status"}, {"cmd": "meters"}, {"cmd": "meters", "seat": 1}, {"cmd": "recall"},
                    {"cmd": "snapshot"}, {"cmd": "ping"}, {"cmd": "close"},
                    {"cmd": "ping", "table": "another"}, {"cmd": "void", "ref": "v-1"},
                    {"cmd": "void", "ref": "v-1"}):
        call(request)
    call({"cmd": "bet", "seat": 1}, valid=False)  # answered with an error naming the missing field
    for since in (None, 0, 3):
        request = {} if since is None else {"since": since}
        exchanges.append(("SnapshotRequest", request, request_snapshot(z.snapshot, since)))
    client.close()
    deadline = time.monotonic() + 30
    while not any(t.endswith(".heartbeat") and p["last_seq"] == mirror_seq(exchanges)
                  for t, p in capture.messages):
        assert time.monotonic() < deadline, "no heartbeat at the last seq"
        time.sleep(0.05)
    return exchanges


def mirror_seq(exchanges: list[tuple[str, Any, Any]]) -> int:
    return max(reply.get("seq", 0) for _, _, reply in exchanges)


def reply_schema(name: str, reply: dict[str, Any]) -> str:
    if not reply["ok"]:
        return "ErrorReply"
    if name == "SnapshotRequest":
        return "SnapshotReply"
    cmd = name.removeprefix("request.")
    return f"reply.{cmd}" if f"reply.{cmd}" in validator_names() else "InputReply"


@cache
def validator_names() -> frozenset[str]:
    return frozenset(build_schema()["$defs"])


@pytest.mark.parametrize("game", GAMES)
def test_every_message_of_a_session_validates(game: str, tmp_path: Path) -> None:
    config, _ = session_table(tmp_path, game)
    shoe = SimulatedShoe("v1", seed=1)
    link = shoe.open_pty(tmp_path / "shoe")
    capture = Capture(config.spec.zeromq.pub)
    try:
        with DaemonThread(Daemon(config, shoe_port=link, fsync=False)):
            capture.start()
            deadline = time.monotonic() + 30
            while not any(t.endswith(".heartbeat") for t, _ in capture.messages):  # connected
                assert time.monotonic() < deadline, "no heartbeat"
                time.sleep(0.02)
            shoe.lid(True)  # a shoe status (and a device event) between rounds
            shoe.lid(False)
            while not any(p.get("event") == "shoe_lid_closed" for _, p in capture.messages):
                assert time.monotonic() < deadline + 30, "no lid_closed status"
                time.sleep(0.02)
            probe = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
            while probe.call("status")["offline"]:
                time.sleep(0.02)
            probe.close()
            exchanges = play_session(config, ROOT / f"tests/scenarios/{game}.yaml", capture)
    finally:
        capture.stop.set()
        if capture.is_alive():
            capture.join()
        shoe.close()
    for name, request, reply in exchanges:
        if name != "invalid":
            check(name, request)
        check(reply_schema(name, reply), reply)
        assert reply["table"] == config.table_id and "journal_id" in reply
    topics = set()
    side = {topic: definition for definition, topic in SIDE_TOPICS.items()}
    for topic, payload in capture.messages:
        table, _, name = topic.partition(".")
        assert table == config.table_id, (topic, payload)
        assert payload["event"] == name or name == "shoe_status", (topic, payload)
        if name in side:  # filed by the topic: a side topic with a seq fails here, whatever else it has
            check(side[name], payload)
            check("side_topic", payload)
        else:
            check(f"event.{name}", payload)
            check("event", payload)
        topics.add(name)
    assert {"round_settled", "card_dealt", "wager_placed", "lamps", "heartbeat", "shoe_status"} <= topics


def test_no_side_topic_may_carry_a_seq() -> None:
    """Readers tell a side topic from an event by the missing ``seq`` (docs/zeromq.md): the schema of
    every side topic refuses one, even the shoe statuses whose detail is otherwise open."""
    samples = {"Lamps": {"event": "lamps", "table": "t", "n": 1, "fault": False, "seats": {}, "dealer": {},
                         "tower": {}},
               "ShoeStatusMessage": {"event": "shoe_protocol_error", "table": "t", "at": 1.0, "frame_seq": 8},
               "JournalFaultMessage": {"event": "journal_fault", "table": "t", "at": 1.0, "file": "f",
                                       "error": "e"}}
    defs = json.loads((SCHEMA_DIR / BUNDLE_NAME).read_text(encoding="utf-8"))["$defs"]
    for name in SIDE_TOPICS:
        assert defs[name]["not"]["required"] == ["seq"], name
    for name, sample in samples.items():
        check(name, sample)
        assert not validator(name).is_valid({**sample, "seq": 8}), name
        assert not validator("side_topic").is_valid({**sample, "seq": 8}), name


def test_a_table_without_a_currency_code_says_so_with_an_empty_code() -> None:
    """Issue 24 item 14: ``"code": ""`` is the documented answer of a table file without ``currency:``
    (never a guessed code); the schema says what a code may be."""
    check("Currency", {"code": "", "minor_units": 2})
    check("Currency", {"code": "EUR", "minor_units": 2})
    for wrong in ({"code": "eur", "minor_units": 2}, {"code": "EURO", "minor_units": 2},
                  {"code": "EUR", "minor_units": 5}):
        assert not validator("Currency").is_valid(wrong), wrong


@pytest.mark.parametrize(("definition", "message"), [
    ("event.wager_placed", {"event": "wager_placed", "table": "t", "seq": 1, "round": 1, "seat": 1,
                            "spot": "player", "amount": -500, "credits": 100}),
    ("event.card_dealt", {"event": "card_dealt", "table": "t", "seq": 1, "round": 1, "card": "ZZ",
                          "hand": "player"}),
    ("event.round_settled", {"event": "round_settled", "table": "t", "seq": 1, "round": 1, "game": "baccarat",
                             "settlements": [{"seat": 1, "spot": "player", "net": 100}], "house_net": -100,
                             "credits": {"1": 100}}),
    ("request.status", {"cmd": "status", "ref": ""}),
])
def test_the_schema_refuses_money_and_cards_no_daemon_sends(definition: str, message: dict[str, Any]) -> None:
    """A third party's validator took a negative wager, a card that is none, a settlement line without its
    stake and a query's empty ref (a review, 2026-12-07); the daemon never sends or takes them."""
    bundle = build_schema()
    validator = jsonschema.Draft202012Validator({"$defs": bundle["$defs"], "$ref": f"#/$defs/{definition}"})
    assert list(validator.iter_errors(message)), f"{definition} took {message}"


@pytest.mark.parametrize("request_", [
    {"cmd": "credit_in", "seat": 1, "amount": 100, "by": "b" * 65},
    {"cmd": "bet", "seat": 1, "spot": "s" * 33, "amount": 100},
    {"cmd": "decide", "seat": 1, "action": "a" * 33},
    {"cmd": "card", "card": "AS" * 5},
    {"cmd": "credit_in", "seat": 1, "amount": 0},
    {"cmd": "credit_in", "seat": 1, "amount": 100, "ref": "R\x01"},
])
def test_a_request_the_daemon_refuses_before_anything_the_schema_refuses(request_: dict[str, Any]) -> None:
    """docs/security.md's limits on what a client may write are the schema's (a third-party client written
    from the docs, 2026-12-07: these four passed the schema, and the daemon refused them)."""
    from controller.daemon.commands import CommandError, parse_command
    from controller.limits import TableLimits

    with pytest.raises(CommandError):
        parse_command(json.dumps(request_).encode(), 7, limits=TableLimits())
    bundle = build_schema()
    name = f"request.{request_['cmd']}"
    validator = jsonschema.Draft202012Validator({"$defs": bundle["$defs"], "$ref": f"#/$defs/{name}"})
    assert list(validator.iter_errors(request_)), f"{name} took {request_}"
    good = {**request_, **{k: v[:8] for k, v in request_.items() if isinstance(v, str) and k != "cmd"}}
    good = {**good, "amount": 100} if "amount" in good else good
    good = {**good, "card": "AS"} if "card" in good else good
    good = {**good, "ref": "R1"} if "ref" in good else good
    assert not list(validator.iter_errors(good)), good

"""Operator commands over the real command socket: replies, refusals that change nothing, recall, restart."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_daemon_support import config_for

from controller.daemon.client import CommandClient, local_key
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def table(tmp_path: Path) -> Iterator[tuple[DaemonThread, CommandClient]]:
    config = config_for(tmp_path)
    runner = DaemonThread(Daemon(config, use_shoe=False)).start()
    client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
    yield runner, client
    client.close()
    runner.stop()


def ok(client: CommandClient, cmd: str, **fields: Any) -> dict[str, Any]:
    reply = client.call(cmd, **fields)
    assert reply["ok"], reply
    return reply


def state(client: CommandClient) -> dict[str, Any]:
    snap: dict[str, Any] = ok(client, "snapshot")["state"]
    return snap


def play_round(client: CommandClient, cards: list[str], bets: list[tuple[int, str, int]]) -> None:
    ok(client, "open")
    for seat, spot, amount in bets:
        ok(client, "bet", seat=seat, spot=spot, amount=amount)
    ok(client, "close")
    for card in cards:
        ok(client, "card", card=card)


def test_bad_commands_get_clear_errors_and_change_nothing(table: tuple[DaemonThread, CommandClient]) -> None:
    _, client = table
    ok(client, "credit_in", seat=1, amount=1000)
    ok(client, "new_shoe")
    before = state(client)
    rows = ok(client, "status")["journal"]["rows"]
    cases: list[tuple[bytes, str]] = [
        (b"{not json", "malformed JSON"),
        (b"[1, 2]", "a command is a JSON object"),
        (b'{"seat": 1}', "missing 'cmd'"),
        (json.dumps({"cmd": "dance"}).encode(), "unknown command 'dance'"),
        (json.dumps({"cmd": "bet", "seat": 1, "spot": "player"}).encode(), "bet: missing field 'amount'"),
        (
            json.dumps({"cmd": "bet", "seat": "1", "spot": "player", "amount": 1}).encode(),
            "bet: field 'seat' must be int",
        ),
        (
            json.dumps({"cmd": "bet", "seat": 9, "spot": "player", "amount": 100}).encode(),
            "bet: no seat 9: this table has seats 1..7",
        ),
        (json.dumps({"cmd": "open", "colour": "red"}).encode(), "open: unknown field 'colour'"),
        (json.dumps({"cmd": "card", "card": "1X"}).encode(), "field 'card'"),
        (json.dumps({"cmd": "recall", "n": 0}).encode(), "at least 1"),
    ]
    for raw, message in cases:
        reply = client.send_raw(raw)
        assert reply["ok"] is False and message in reply["error"], (raw, reply)
    assert ok(client, "status")["journal"]["rows"] == rows  # none of those reached the journal
    # What only the table can judge: refused by it, journaled, and nothing changes.
    refusals = [
        ({"cmd": "close"}, "betting is not open"),  # wrong phase
        ({"cmd": "decide", "seat": 1, "action": "hit"}, "no round is in play"),
        ({"cmd": "bet", "seat": 1, "spot": "player", "amount": 100}, "betting is not open"),
        ({"cmd": "credit_out", "seat": 1, "amount": 5000}, "seat 1 has 10.00 credits, cannot pay out 50.00"),
        ({"cmd": "clear_tilt"}, "the table is not tilted"),
    ]
    for request, message in refusals:
        reply = client.call(**request)
        assert reply["ok"] is False and reply["refused"] and message in reply["error"], reply
    assert state(client) == before
    ok(client, "open")
    during = state(client)
    for request, message in [
        (
            {"cmd": "bet", "seat": 1, "spot": "player", "amount": 5000},
            "seat 1 has 10.00 credits",
        ),  # over credits
        ({"cmd": "bet", "seat": 2, "spot": "player", "amount": 100}, "seat 2 is not seated"),  # wrong seat
        ({"cmd": "bet", "seat": 1, "spot": "dragon", "amount": 100}, "baccarat has no spot 'dragon'"),
        ({"cmd": "bet", "seat": 1, "spot": "player", "amount": 150}, "not a multiple of the unit 1.00"),
        ({"cmd": "cancel", "seat": 1, "spot": "player"}, "seat 1 has no wager on 'player'"),
        ({"cmd": "open"}, "betting cannot open: the table is betting"),
    ]:
        reply = client.call(**request)
        assert reply["ok"] is False and reply["refused"] and message in reply["error"], reply
    assert state(client) == during


def test_round_recall_meters_and_status(table: tuple[DaemonThread, CommandClient]) -> None:
    _, client = table
    ok(client, "credit_in", seat=1, amount=100_000)
    ok(client, "credit_in", seat=3, amount=100_000)
    ok(client, "new_shoe")
    play_round(client, ["5C", "3D", "2H", "AS"], [(1, "player", 1000), (3, "banker", 500)])
    ok(client, "open")
    ok(client, "bet", seat=1, spot="banker", amount=200)
    ok(client, "cancel", seat=1, spot="banker")
    ok(client, "bet", seat=1, spot="tie", amount=100)
    ok(client, "close")
    ok(client, "burn", by="dealer")
    for card in ["QS", "JH", "8D", "7C", "AH"]:
        ok(client, "card", card=card)
    ok(client, "open")
    ok(client, "bet", seat=3, spot="player", amount=300)
    ok(client, "close")
    ok(client, "void", by="dealer")
    rounds = ok(client, "recall", n=10)["rounds"]
    assert [(r["round"], r["status"]) for r in rounds] == [(1, "settled"), (2, "settled"), (3, "voided")]
    r1, r2, r3 = rounds
    assert r1["credits_before"] == {"1": 100_000, "3": 100_000}
    assert r1["credits_after"] == {"1": 101_000, "3": 99_500}
    assert [c["card"] for c in r1["cards"]] == ["5C", "3D", "2H", "AS"]
    assert r1["settlements"] == [
        {"seat": 1, "spot": "player", "stake": 1000, "net": 1000},
        {"seat": 3, "spot": "banker", "stake": 500, "net": -500},
    ]
    assert [(w["event"], w["spot"]) for w in r2["wagers"]] == [
        ("wager_placed", "banker"),
        ("wager_returned", "banker"),
        ("wager_placed", "tie"),
    ]
    assert r2["cards"][0]["event"] == "burn_declared" and r2["cards"][1] == {
        "event": "card_burned",
        "round": 2,
        "card": "QS",
        "why": "dealer",
    }
    assert r2["settlements"] == [{"seat": 1, "spot": "tie", "stake": 100, "net": 900}]  # 8+8 tie, 9:1
    assert r3["settlements"] == [{"seat": 3, "spot": "player", "stake": 300, "net": 0}]
    assert ok(client, "recall", round=2)["rounds"] == [r2]
    assert "round 9 has not been played" in client.call("recall", round=9)["error"]
    meters = ok(client, "meters")
    assert meters["totals"] == {"rounds_settled": 2, "rounds_voided": 1, "house_net": -1400}
    assert ok(client, "meters", seat=1)["seats"]["1"]["won"] == 1900
    status = ok(client, "status")
    assert (status["round"], status["phase"], status["credits"]) == (3, "idle", {"1": 101_900, "3": 99_500})


def test_restart_restores_state_recall_and_seq(tmp_path: Path) -> None:
    config = config_for(tmp_path)
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        ok(client, "credit_in", seat=2, amount=10_000)
        ok(client, "new_shoe")
        play_round(client, ["3C", "AD", "9H", "KS"], [(2, "banker", 1000)])
        shuffled = ok(client, "new_shoe")["events"][0]  # the second shoe: the table counts them
        assert (shuffled["event"], shuffled["shoe_number"]) == ("new_shoe", 2)
        ok(client, "open")
        ok(client, "bet", seat=2, spot="player", amount=500)
        ok(client, "close")
        ok(client, "card", card="4S")
        before = (ok(client, "snapshot"), ok(client, "recall")["rounds"])
        assert before[0]["state"]["shoe_number"] == 2
        client.close()
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        after = (ok(client, "snapshot"), ok(client, "recall")["rounds"])
        assert after[0].pop("run") != before[0].pop("run")  # a new start's own (docs/zeromq.md)
        assert after == before  # the shoe number too: replayed from the journal's new_shoe inputs
        assert after[0]["state"]["shoe_number"] == 2
        seq = after[0]["seq"]
        reply = ok(client, "card", card="5H")
        assert reply["events"][0]["seq"] == seq + 1  # numbering goes on, never reused
        for card in ["6C", "2D"]:
            ok(client, "card", card=card)
        assert ok(client, "status")["credits"] == {"2": 11_450}  # +950 (banker), then 9 vs 8: player +500
        assert ok(client, "status")["journal"]["replayed_at_start"] == 14
        client.close()


def test_recall_of_rounds_older_than_memory_replays_the_journal(tmp_path: Path) -> None:
    config = config_for(tmp_path)
    daemon = Daemon(config, use_shoe=False)
    daemon.open()
    assert daemon.service is not None
    daemon.service.recorder.finished = type(daemon.service.recorder.finished)(maxlen=2)
    with DaemonThread(daemon):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        ok(client, "credit_in", seat=1, amount=10_000)
        ok(client, "new_shoe")
        for _ in range(5):
            play_round(client, ["3C", "AD", "9H", "KS"], [(1, "banker", 100)])
        rounds = ok(client, "recall", n=5)["rounds"]
        assert [r["round"] for r in rounds] == [1, 2, 3, 4, 5]
        assert ok(client, "recall", round=1)["rounds"][0]["credits_after"] == {"1": 10_095}
        client.close()

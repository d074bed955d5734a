"""ZeroMQ: framing, the clone pattern's late joiner, catch-up after a gap, and a dead subscriber."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import zmq
from test_daemon_support import baccarat_play, config_for

from controller.daemon.client import CommandClient, Subscriber, local_key, request_snapshot
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.inputs import Input

pytestmark = pytest.mark.timeout(120)


def send_all(client: CommandClient, inputs: list[Input]) -> None:
    for inp in inputs:
        reply = client.call("input", input=inp.to_dict())
        assert reply["ok"] or reply["refused"], reply


def test_framing_topic_and_key_order(tmp_path: Path) -> None:
    config = config_for(tmp_path)
    z = config.spec.zeromq
    with DaemonThread(Daemon(config, use_shoe=False)):
        ctx = zmq.Context.instance()
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"t1.round_settled")
        sub.setsockopt(zmq.RCVTIMEO, 10_000)
        sub.connect(z.pub)
        client = CommandClient(z.command, key=local_key(config))
        while True:  # the slow-joiner: wait until the subscription is live
            client.call("credit_in", seat=1, amount=100)
            sub.setsockopt(zmq.SUBSCRIBE, b"t1.credit")
            try:
                sub.recv_multipart(flags=zmq.NOBLOCK)
                break
            except zmq.Again:
                import time

                time.sleep(0.05)
        sub.setsockopt(zmq.UNSUBSCRIBE, b"t1.credit")
        for cmd in (
            {"cmd": "new_shoe"},
            {"cmd": "open"},
            {"cmd": "bet", "seat": 1, "spot": "player", "amount": 100},
            {"cmd": "close"},
            {"cmd": "card", "card": "5C"},
            {"cmd": "card", "card": "3D"},
            {"cmd": "card", "card": "2H"},
        ):
            assert client.call(**cmd)["ok"]
        last = client.call("card", card="AS")
        topic, data = sub.recv_multipart()
        while topic != b"t1.round_settled":
            topic, data = sub.recv_multipart()
        text = data.decode()
        payload = json.loads(text)
        assert list(payload)[:3] == ["event", "table", "seq"]
        assert payload["seq"] == last["seq"]
        stripped = {k: v for k, v in payload.items() if k not in ("table", "seq")}
        assert list(stripped) == ["event", "round", "game", "settlements", "house_net", "credits"]
        sub.close(linger=0)
        client.close()


def test_late_joiner_snapshot_plus_events_is_consistent(tmp_path: Path) -> None:
    inputs, engine = baccarat_play(30, seed=11)
    config = config_for(tmp_path)
    z = config.spec.zeromq
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(z.command, key=local_key(config))
        send_all(client, inputs[: len(inputs) // 2])
        late = Subscriber(z.pub, z.snapshot, "t1")
        stream = late.events(timeout=5)
        kind, snap = next(stream)
        assert kind == "snapshot" and snap["seq"] > 0
        send_all(client, inputs[len(inputs) // 2 :])
        final_seq = client.call("ping")["seq"]
        got: list[dict[str, Any]] = []
        for kind, payload in stream:
            assert kind == "event"
            got.append(payload)
            if payload["seq"] == final_seq:
                break
        assert [p["seq"] for p in got] == list(range(snap["seq"] + 1, final_seq + 1))
        # The snapshot's credits, moved by the later events, are the final credits.
        credits = dict(snap["state"]["credits"])
        for p in got:
            if "credits" in p and isinstance(p["credits"], dict):
                credits = p["credits"]
            elif p["event"] in ("wager_placed", "wager_returned", "credit"):
                credits[str(p["seat"])] = p["credits"]
        assert credits == {str(s): c for s, c in sorted(engine.credits.items())}
        assert client.call("snapshot")["state"] == engine.snapshot()
        # Catch-up: a subscriber at an older seq gets exactly the events it missed.
        reply = request_snapshot(z.snapshot, since=final_seq - 5)
        assert [e["seq"] for e in reply["events"]] == list(range(final_seq - 4, final_seq + 1))
        assert "error" in request_snapshot(z.snapshot, since=-1)
        late.close()
        client.close()


def test_a_subscriber_that_never_reads_does_not_stall_the_table(tmp_path: Path) -> None:
    inputs, engine = baccarat_play(60, seed=5)
    config = config_for(
        tmp_path,
        zeromq={
            "pub": f"ipc://{tmp_path}/p",
            "snapshot": f"ipc://{tmp_path}/s",
            "command": f"ipc://{tmp_path}/c",
            "pub_hwm": 5,
        },
    )
    z = config.spec.zeromq
    with DaemonThread(Daemon(config, use_shoe=False, fsync=False)):
        ctx = zmq.Context.instance()
        dead = ctx.socket(zmq.SUB)
        dead.setsockopt(zmq.RCVHWM, 1)
        dead.setsockopt(zmq.SUBSCRIBE, b"")
        dead.connect(z.pub)  # and never reads
        client = CommandClient(z.command, timeout=10, key=local_key(config))
        send_all(client, inputs)
        assert client.call("status")["credits"] == {str(s): c for s, c in sorted(engine.credits.items())}
        dead.close(linger=0)
        client.close()


def test_a_snapshot_client_that_never_reads_is_not_queued_for(tmp_path: Path) -> None:
    """Issue 24 item 13: each snapshot reply may be the state and 2,000 events (hundreds of KB); a
    client that asks again and again and never reads had up to 1,000 of them queued by the daemon
    (its RSS grew by tens of MB and kept it). Now the daemon holds at most a couple per client and
    drops the rest, as ZeroMQ drops what a slow subscriber cannot take (bench/slow_consumers_memory.py
    has the RSS figures)."""
    config = config_for(tmp_path)
    with DaemonThread(Daemon(config, fsync=False)):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        for n in range(2100):  # the 2,000 events a snapshot reply may carry
            assert client.call("credit_in", seat=1 + n % 7, amount=100)["ok"]
        ctx = zmq.Context.instance()
        asker = ctx.socket(zmq.DEALER)
        asker.setsockopt(zmq.LINGER, 0)
        asker.setsockopt(zmq.RCVHWM, 1)
        asker.setsockopt(zmq.RCVBUF, 4096)
        asker.connect(config.spec.zeromq.snapshot)
        # Connected before it asks: ZeroMQ connects in the background, and its requests waited on its side
        # while the probes below were served; answered while it read, 18 of 40 reached it (a loaded run).
        asker.send_multipart([b"", b"{}"])
        assert asker.poll(10_000)
        asker.recv_multipart()
        asked, since = 40, client.call("status")["seq"] - 1990  # ~1,990 events a reply: about 220 KB
        for _ in range(asked):
            asker.send_multipart([b"", json.dumps({"since": since}).encode()])
        probe = zmq.Context.instance()
        for _ in range(asked + 5):  # requests are served in turn: by now every one of the asker's was
            assert request_snapshot(config.spec.zeromq.snapshot, ctx=probe)["ok"]
        got = 0
        while asker.poll(1000):
            asker.recv_multipart()
            got += 1
        assert got <= 8, f"{got} of {asked} replies were held for a client that did not read"
        asker.send_multipart([b"", b"{}"])  # and the client is not cut off: it is answered again
        assert asker.poll(10_000)
        assert json.loads(asker.recv_multipart()[-1])["ok"]
        asker.close()
        client.close()

"""The command and snapshot sockets cannot be broken from outside: deep JSON, huge frames, floods.

A real daemon on its own thread, real ZeroMQ sockets over ipc://, real clients.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import test_daemon_commands
import zmq
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.daemon.client import CommandClient
from controller.daemon.requests import MAX_DEPTH, MAX_FRAME, RequestError, loads_request, nesting, quote
from controller.daemon.runner import DaemonThread

pytestmark = pytest.mark.timeout(120)


#: The fixture of tests/test_daemon_commands.py: a daemon on a thread and its command client.
table = test_daemon_commands.table
Served = tuple[DaemonThread, CommandClient]


@pytest.fixture
def ctx() -> Iterator[zmq.Context[Any]]:
    context: zmq.Context[Any] = zmq.Context()
    yield context
    context.destroy(linger=0)


def snapshot_request(ctx: zmq.Context[Any], endpoint: str, payload: bytes, timeout_ms: int = 10_000) -> Any:
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, timeout_ms)
    sock.connect(endpoint)
    try:
        sock.send(payload)
        return json.loads(sock.recv())
    finally:
        sock.close()


DEEP = b"[" * 1000 + b"]" * 1000


def test_deep_json_gets_an_error_and_both_sockets_keep_answering(
    table: Served, ctx: zmq.Context[Any],
) -> None:
    runner, client = table
    config = runner.daemon.config
    snap = config.spec.zeromq.snapshot
    for _ in range(2):
        reply = snapshot_request(ctx, snap, DEEP)
        assert not reply["ok"] and f"limit is {MAX_DEPTH}" in reply["error"], reply
    assert snapshot_request(ctx, snap, b"{}")["ok"]
    deep_cmd = b'{"cmd": "input", "input": ' + b"[" * 990 + b"]" * 990 + b"}"
    for payload in (DEEP, deep_cmd):
        reply = client.send_raw(payload)
        assert not reply["ok"] and "nested" in reply["error"] and "internal error" not in reply["error"]
    assert client.call("ping")["ok"]


def test_a_huge_frame_is_dropped_and_the_sockets_keep_answering(
    table: Served, ctx: zmq.Context[Any],
) -> None:
    runner, client = table
    config = runner.daemon.config
    big = b'{"since": "' + b"x" * (50 * 1024 * 1024) + b'"}'
    snap = config.spec.zeromq.snapshot
    sender = ctx.socket(zmq.DEALER)
    sender.setsockopt(zmq.LINGER, 0)
    sender.connect(snap)
    sender.send_multipart([b"", big])
    assert sender.poll(1000) == 0  # no reply: ZeroMQ dropped the frame and the peer
    sender.close()
    assert snapshot_request(ctx, snap, b"{}")["ok"]
    assert client.call("ping")["ok"]
    # Under the frame limit but over the request limit: an error that does not echo it.
    reply = client.send_raw(b'{"cmd": "' + b"y" * (MAX_FRAME - 100) + b'"}')
    assert not reply["ok"] and len(json.dumps(reply)) < 400, len(json.dumps(reply))


def test_error_replies_quote_a_short_escaped_prefix(table: Served, ctx: zmq.Context[Any]) -> None:
    runner, client = table
    config = runner.daemon.config
    reply = client.send_raw(json.dumps({"cmd": "z\u0001" * 1000}).encode())
    assert not reply["ok"] and len(reply["error"]) < 300 and "characters)" in reply["error"], reply
    assert "\\x01" in reply["error"]  # escaped, never the raw control character
    bet = {"cmd": "bet", "seat": 1, "spot": "player", "amount": "9" * 5000}
    reply = client.send_raw(json.dumps(bet).encode())
    assert not reply["ok"] and len(reply["error"]) < 300, reply
    reply = snapshot_request(ctx, config.spec.zeromq.snapshot, json.dumps({"since": "s" * 9000}).encode())
    assert not reply["ok"] and len(reply["error"]) < 200, reply


def test_a_twenty_peer_snapshot_flood_does_not_stop_the_table(
    table: Served, ctx: zmq.Context[Any],
) -> None:
    """Every flood request is answered and every input meanwhile applied (timing: bench/flood_latency.py)."""
    runner, client = table
    config = runner.daemon.config
    peers, per_peer = 20, 300
    answered = [0] * peers

    def flood(i: int) -> None:
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.RCVTIMEO, 30_000)
        sock.connect(config.spec.zeromq.snapshot)
        for _ in range(per_peer):
            sock.send_multipart([b"", b"{}"])
        for _ in range(per_peer):
            sock.recv_multipart()
            answered[i] += 1
        sock.close()

    threads = [threading.Thread(target=flood, args=(i,)) for i in range(peers)]
    for t in threads:
        t.start()
    assert client.call("credit_in", seat=1, amount=10_000)["ok"]
    for _ in range(20):
        assert client.call("credit_in", seat=2, amount=100)["ok"]
    for t in threads:
        t.join(60)
    assert answered == [per_peer] * peers
    assert client.call("status")["credits"]["2"] == 2000


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                                 max_size=3),
                    max_leaves=30))
def test_nesting_counts_what_json_nests(value: Any) -> None:
    def depth(v: Any) -> int:
        if isinstance(v, list):
            return 1 + max(map(depth, v), default=0)
        if isinstance(v, dict):
            return 1 + max(map(depth, v.values()), default=0)
        return 0

    payload = json.dumps(value).encode()
    assert nesting(payload) == depth(value)
    if depth(value) <= MAX_DEPTH:
        assert loads_request(payload) == value


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_parse_or_give_a_request_error(data: bytes) -> None:
    try:
        loads_request(data)
    except RequestError as exc:
        assert len(str(exc)) < 300


def test_quote_cuts_and_escapes() -> None:
    assert quote("ok") == "'ok'"
    long = quote("a\nb" * 100)
    assert long.startswith("'a\\nb") and long.endswith("(300 characters)") and "\n" not in long

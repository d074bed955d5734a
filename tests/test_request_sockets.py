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
from controller.daemon.commands import CommandError, parse_command
from controller.daemon.requests import (
    MAX_DEPTH,
    MAX_FRAME,
    MAX_INT,
    RequestError,
    loads_request,
    nesting,
    parse_snapshot_request,
    quote,
)
from controller.daemon.runner import DaemonThread
from controller.daemon.sockets import SNAPSHOT_HWM
from controller.limits import TableLimits

pytestmark = pytest.mark.timeout(120)
LIMITS = TableLimits(seats=7, unit=100, min_bet=100, max_bet=1_000_000)


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
    """Every flood request is answered and every input meanwhile applied (timing: bench/flood_latency.py).

    Each peer keeps SNAPSHOT_HWM requests in flight, the most a client may have and be sure of every
    answer (docs/zeromq.md: past it, replies a client has not read are dropped; on a loaded machine a
    peer that sent all 300 at once lost one)."""
    runner, client = table
    config = runner.daemon.config
    peers, per_peer = 20, 300
    answered = [0] * peers

    def flood(i: int) -> None:
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.RCVTIMEO, 60_000)
        sock.connect(config.spec.zeromq.snapshot)
        sent = 0
        while answered[i] < per_peer:
            while sent < per_peer and sent - answered[i] < SNAPSHOT_HWM:
                sock.send_multipart([b"", b"{}"])
                sent += 1
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
@given(st.recursive(st.none() | st.booleans() | st.integers(-MAX_INT, MAX_INT) | st.text(max_size=5),
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


#: Words a client must never be answered with: Python's internals, not what was wrong with the request.
PROGRAMMER_WORDS = ("codec", "sys.", "int_max_str_digits", "Traceback", "Error:", "Exception")


@pytest.mark.parametrize(("payload", "said"), [
    ('{"cmd": "status"}'.encode("utf-16"), "byte order mark"),
    ('{"cmd": "status"}'.encode("utf-16-le"), "NUL bytes (UTF-16 or UTF-32 text?)"),
    ('{"cmd": "status"}'.encode("utf-32"), "byte order mark"),
    ('{"cmd": "status"}'.encode("utf-32-be"), "NUL bytes"),
    (b"\xef\xbb\xbf" + b'{"cmd": "status"}', "byte order mark"),
    (b'{"cmd": "st\xe9tus"}', "not UTF-8 text (byte 0xe9 at position 11)"),
    (b'{"since": ' + b"1" * 401 + b"}", "is too large: the limit is 9223372036854775807"),
    (b'{"since": 9223372036854775808}', "is too large"),
    (b'{"since": NaN}', "NaN is not a JSON value"),
    (b'{"x": 1e999}', "is out of range"),
    (b'{"amount": 700, "amount": 900000}', "field 'amount' is given twice"),
    (b'{"cmd": ', "malformed JSON: Expecting value at character 8"),
])
def test_requests_that_are_not_quite_json_text_are_refused_in_words_for_the_client(
        payload: bytes, said: str) -> None:
    with pytest.raises(RequestError) as refused:
        loads_request(payload)
    assert said in str(refused.value)
    assert not any(word in str(refused.value) for word in PROGRAMMER_WORDS), refused.value


@pytest.mark.parametrize(("payload", "said"), [
    (b"", "snapshot: an empty request: send {}"),
    (b"  ", "snapshot: an empty request"),
    (b'{"since": ' + b"9" * 400 + b"}", "snapshot: the number '9999"),
    (b'{"since": 0, "journal_id": 5}', "snapshot: 'journal_id' must be the journal's id (a string of 1..64"),
    (b'{"since": -1}', "snapshot: 'since' must be a seq (an integer, 0 or more), not -1"),
    (b'{"since": true}', "snapshot: 'since' must be a seq"),
    ('{"since": 0}'.encode("utf-16"), "snapshot: the request starts with a byte order mark"),
])
def test_the_snapshot_socket_refuses_what_is_not_a_snapshot_request(
        table: Served, ctx: zmq.Context[Any], payload: bytes, said: str) -> None:
    runner, _ = table
    reply = snapshot_request(ctx, runner.daemon.config.spec.zeromq.snapshot, payload)
    assert reply["ok"] is False and reply["error"].startswith(said), reply
    assert snapshot_request(ctx, runner.daemon.config.spec.zeromq.snapshot, b"{}")["ok"]


def test_the_command_socket_refuses_utf16_and_a_table_that_is_not_a_string(table: Served) -> None:
    _, client = table
    reply = client.send_raw('{"cmd": "status"}'.encode("utf-16"))
    assert not reply["ok"] and "byte order mark" in reply["error"]
    reply = client.send_raw(b'{"cmd": "status", "table": 5}')
    assert not reply["ok"] and "'table' must be the table's id" in reply["error"]
    assert "wrong_table" not in reply


_JSONISH = st.one_of(
    st.binary(max_size=200),
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                 lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                     st.sampled_from(["cmd", "since", "journal_id", "seat", "amount", "ref", "table", "x"]),
                     inner, max_size=4),
                 max_leaves=12).map(lambda v: json.dumps(v).encode()),
    st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-be", "utf-32", "utf-32-le"]).flatmap(
        lambda codec: st.text(max_size=30).map(lambda t: json.dumps({"cmd": t}).encode(codec))),
)


@settings(max_examples=400, deadline=None)
@given(_JSONISH)
def test_the_request_parsers_answer_any_bytes_with_their_error_or_a_request(data: bytes) -> None:
    """Whatever arrives: a value, or the documented error (a RequestError or CommandError, worded for
    the client); never another exception."""
    for parse in (loads_request, parse_snapshot_request, lambda d: parse_command(d, 7, "t1", LIMITS)):
        try:
            parse(data)
        except (RequestError, CommandError) as exc:
            assert len(str(exc)) < 300 and not any(w in str(exc) for w in PROGRAMMER_WORDS), exc


@pytest.mark.parametrize("ref", ["", 7])
def test_a_query_s_ref_is_held_to_what_a_command_s_is(ref: Any) -> None:
    """docs/commands.md: a ``ref`` is a string of 1..200 characters; a query took any (a third party's
    reading of the documents found ``"ref": ""`` answered, 2026-12-07)."""
    for cmd in ("status", "credit_in"):
        with pytest.raises(CommandError, match="'ref' must be a string of 1..200 characters"):
            body = {"cmd": cmd, "seat": 1, "amount": 100, "ref": ref} if cmd == "credit_in" else {"cmd": cmd,
                                                                                               "ref": ref}
            parse_command(json.dumps(body).encode(), 7, "t1", LIMITS)

"""Fuzzing what a client of the daemon reads off ZeroMQ (controller/daemon/client.py): a command reply and
a snapshot reply, from a real REP socket answering whatever bytes the test gives it. A reply that is not a
Croupier reply is refused by name (:class:`BadReply`, or the RuntimeError a Subscriber raises for a snapshot
it cannot use), never another exception (docs/testing.md; the standard: "fuzzing for every parser of
outside bytes")."""

from __future__ import annotations

import json
import queue
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq
from hypothesis import example, given, settings
from hypothesis import strategies as st

from controller.daemon.client import BadReply, CommandClient, Subscriber

pytestmark = pytest.mark.timeout(120)

FUZZ = settings(max_examples=120, deadline=None, derandomize=True)

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**65), 2**65), st.floats(), st.text(max_size=6))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=10)


class Answerer:
    """A REP socket (ipc:// in a temporary folder) answering each request with the next queued reply."""

    def __init__(self, folder: Path) -> None:
        self.ctx = zmq.Context()
        self.endpoint = f"ipc://{folder}/rep"
        self.replies: queue.Queue[bytes] = queue.Queue()
        self.sock = self.ctx.socket(zmq.REP)
        self.sock.bind(self.endpoint)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, name="fuzz-answerer", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            if self.sock.poll(50):
                self.sock.recv()
                self.sock.send(self.replies.get(timeout=10))

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.sock.close(linger=0)
        self.ctx.term()


@pytest.fixture(scope="module")
def answerer() -> Iterator[Answerer]:
    with tempfile.TemporaryDirectory() as tmp:
        a = Answerer(Path(tmp))
        yield a
        a.close()


@FUZZ
@given(st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode()))
@example(b"[" * 100_000)
@example(b'{"ok": true, "n": ' + b"1" * 5000 + b"}")
def test_a_command_reply_is_a_dict_or_a_bad_reply(answerer: Answerer, data: bytes) -> None:
    client = CommandClient(answerer.endpoint, timeout=10)
    try:
        answerer.replies.put(data)
        try:
            reply = client.send_raw(b'{"cmd": "status"}')
        except BadReply as exc:
            assert answerer.endpoint in str(exc)
        else:
            assert isinstance(reply, dict)
    finally:
        client.close()


snapshots = st.fixed_dictionaries(
    {"ok": st.just(True)},
    optional={"table": st.just("t1") | scalars, "seq": st.integers(0, 5) | scalars,
              "journal_id": st.just("j1") | scalars, "run": scalars, "state": json_values,
              "events": st.lists(st.fixed_dictionaries({}, optional={"seq": st.integers(0, 6) | scalars}),
                                 max_size=3) | scalars,
              "lamps": st.dictionaries(st.text(max_size=4), scalars, max_size=2) | scalars})


@FUZZ
@given(snapshots.map(lambda s: json.dumps(s).encode()) | st.binary(max_size=60))
@example(b'{"ok": true, "table": "t1"}')
@example(b'{"ok": true, "table": "t1", "seq": 1, "lamps": 7}')
def test_a_snapshot_reply_is_drawn_or_refused_by_name(answerer: Answerer, data: bytes) -> None:
    """Subscriber: a snapshot it can draw from, or a RuntimeError (BadReply, "snapshot refused", another
    table's), never a KeyError or TypeError out of its clone loop."""
    with tempfile.TemporaryDirectory() as tmp:
        sub = Subscriber(f"ipc://{tmp}/pub", answerer.endpoint, table="t1", timeout=10)
        try:
            answerer.replies.put(data)
            try:
                got: list[tuple[str, dict[str, Any]]] = list(sub.events(timeout=0.01))
            except RuntimeError as exc:
                assert str(exc)
            else:
                assert got and got[0][0] == "snapshot"
        finally:
            sub.close()


SNAPSHOT = json.dumps({"ok": True, "table": "t1", "seq": 5, "journal_id": "J", "run": "R",
                       "state": {}}).encode()
messages = st.one_of(
    st.binary(max_size=60),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"event": st.sampled_from(["heartbeat", "card", "lamps"])},
                          optional={"seq": json_values, "last_seq": json_values, "journal_id": json_values,
                                    "run": json_values, "table": json_values, "lamps": json_values}
                          ).map(lambda m: json.dumps(m).encode()),
)


@FUZZ
@given(st.sampled_from([b"t1.card", b"t1.heartbeat", b"t1.lamps"]), messages)
@example(b"t1.card", b'{"event": "card", "seq": "6"}')
@example(b"t1.heartbeat", b'{"event": "heartbeat", "journal_id": "J", "table": "t1", "lamps": 7}')
@example(b"t1.card", b"[" * 5000)
def test_a_published_message_is_followed_or_refused_by_name(answerer: Answerer, topic: bytes,
                                                            data: bytes) -> None:
    """Subscriber: a message off the events socket is applied, or refused with BadReply naming the socket,
    never a KeyError, TypeError, AttributeError or RecursionError out of its clone loop (a review,
    2026-12-07: json.loads took any bytes, and a heartbeat's lamps or seq were used as they came)."""
    with tempfile.TemporaryDirectory() as tmp:
        pub = answerer.ctx.socket(zmq.PUB)
        pub.bind(f"ipc://{tmp}/pub")
        sub = Subscriber(f"ipc://{tmp}/pub", answerer.endpoint, table="t1", timeout=10, side=True)
        try:
            answerer.replies.put(SNAPSHOT)
            follow = sub.events(timeout=2)
            assert next(follow)[0] == "snapshot"
            try:
                for _ in range(40):  # until the subscription has reached the PUB (ZeroMQ's slow joiner)
                    pub.send_multipart([topic, data])
                    if sub.sub.poll(50):
                        break
                answerer.replies.put(SNAPSHOT)  # a message taken for a gap asks again
                next(follow, None)
            except BadReply as exc:
                assert f"ipc://{tmp}/pub published" in str(exc)
        finally:
            sub.close()
            pub.close(linger=0)
            while not answerer.replies.empty():  # a snapshot not asked for is no other test's answer
                answerer.replies.get_nowait()

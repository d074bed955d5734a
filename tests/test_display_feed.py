"""The display's handling of what arrives on the PUB socket: outside bytes, fuzzed.

Whatever a publisher sends, :meth:`TableFeed.take_frame` either takes it
(``ok``, ``side``, ``old``, ``gap``, ``journal``) or raises :class:`FrameError`
naming the table; nothing else escapes to stop the feed.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import zmq.asyncio
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import example, given, settings
from hypothesis import strategies as st

from signage.feed import FrameError, TableFeed
from signage.limits import WebLimits, host_names
from signage.server import make_app

OUTCOMES = {"ok", "side", "old", "gap", "journal"}


def new_feed(game: str = "baccarat") -> TableFeed:
    ctx = zmq.asyncio.Context.instance()
    feed = TableFeed("t1", game, "ipc:///nonexistent/pub", "ipc:///nonexistent/snap", {}, ctx)
    feed.view.load_snapshot({"seq": 10, "journal_id": "j1", "state": {"game": game, "phase": "idle"}})
    return feed


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
EVENTS = [
    "new_shoe",
    "betting_opened",
    "betting_closed",
    "card_dealt",
    "round_result",
    "round_settled",
    "round_voided",
    "tilt",
    "tilt_cleared",
    "card_held",
    "dp_set",
    "device",
    "heartbeat",
    "lamps",
]
events = st.fixed_dictionaries(
    {"event": st.sampled_from(EVENTS), "seq": st.integers(9, 12) | json_values},
    optional={
        k: json_values
        for k in (
            "round",
            "card",
            "hand",
            "result",
            "settlements",
            "seat",
            "device",
            "online",
            "journal_id",
            "last_seq",
            "reason",
            "detail",
            "held",
        )
    },
)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
@example(b"[" * 100_000)  # nested past the stack: RecursionError escaped the feed (the Subscriber's twin bug)
def test_any_bytes_are_taken_or_refused_by_name(data: bytes) -> None:
    feed = new_feed()
    try:
        assert feed.take_frame(data) in OUTCOMES
    except FrameError as exc:
        assert str(exc).startswith("t1: ")


@settings(max_examples=400, deadline=None)
@given(events, st.sampled_from(["baccarat", "swap_hand", "one_card_poker"]))
def test_event_shaped_messages_are_taken_or_refused_by_name(payload: dict[str, Any], game: str) -> None:
    feed = new_feed(game)
    try:
        assert feed.take_frame(json.dumps(payload).encode()) in OUTCOMES
    except FrameError as exc:
        assert str(exc).startswith("t1: ")
    feed.view.to_dict()  # whatever was taken still draws


def test_the_tilt_shows_the_cards_it_holds() -> None:
    feed = new_feed()
    frame = lambda **kw: json.dumps(kw).encode()  # noqa: E731
    assert feed.take_frame(frame(event="betting_opened", seq=11, round=1)) == "ok"
    assert feed.take_frame(frame(event="tilt", seq=12, round=1, reason="device_offline", card="",
                                 detail="shoe lid offline", held=[])) == "ok"
    assert feed.take_frame(frame(event="card_held", seq=13, round=1, card="5C", held=["5C"])) == "ok"
    assert feed.view.to_dict()["tilt"] == {"reason": "device_offline", "card": "",
                                           "detail": "shoe lid offline", "held": ["5C"]}
    assert feed.take_frame(frame(event="tilt_cleared", seq=14, round=1, how="device_back")) == "ok"
    assert feed.view.to_dict()["tilt"] is None


def test_sequence_rules() -> None:
    feed = new_feed()
    frame = lambda **kw: json.dumps(kw).encode()  # noqa: E731
    assert feed.take_frame(frame(event="betting_opened", seq=10, round=1)) == "old"
    assert feed.take_frame(frame(event="betting_opened", seq=12, round=1)) == "gap"
    assert feed.take_frame(frame(event="betting_opened", seq=11, round=1)) == "ok"
    assert feed.view.phase == "betting"
    assert feed.take_frame(frame(event="heartbeat", journal_id="j1", last_seq=11)) == "side"
    assert feed.take_frame(frame(event="heartbeat", journal_id="j1", last_seq=15)) == "gap"
    assert feed.take_frame(frame(event="heartbeat", journal_id="j2", last_seq=1)) == "journal"
    # The same journal, its seq behind ours, of the run drawn from: sent before the snapshot, ignored;
    # of another run: the daemon restarted onto an older copy of its journal (its seqs come again with
    # other events): redraw (a review, 2026-12-07); another run ahead of ours: a plain gap.
    feed.daemon_run = "r1"
    assert feed.take_frame(frame(event="heartbeat", journal_id="j1", run="r1", last_seq=3)) == "side"
    assert feed.take_frame(frame(event="heartbeat", journal_id="j1", run="r2", last_seq=3)) == "journal"
    assert feed.take_frame(frame(event="heartbeat", journal_id="j1", run="r2", last_seq=30)) == "gap"
    assert feed.take_frame(frame(event="lamps", n=3)) == "side"
    with pytest.raises(FrameError, match="t1: event seq 12 \\(card_dealt\\) does not fit"):
        feed.take_frame(frame(event="card_dealt", seq=12, round=1))  # no card, no hand
    with pytest.raises(FrameError, match="not JSON"):
        feed.take_frame(b"\xff{")



def test_a_side_topic_is_filed_by_its_topic_even_with_a_seq() -> None:
    """Issue 24 item 5: a shoe status carrying ``seq`` was applied as the next event (the display then
    showed that seq with nothing offline and dropped the real event of that seq as old)."""
    feed = new_feed()
    stray = {"event": "shoe_protocol_error", "table": "t1", "at": 1.0, "seq": 11, "reason": "not a card"}
    assert feed.take_frame(json.dumps(stray).encode(), b"t1.shoe_status") == "side"
    assert feed.view.seq == 10


def test_the_sign_shows_the_limits_in_force_and_a_heartbeat_that_changes_them() -> None:
    """The sign's Min / Max were the display's own table file's, whatever the daemon played, and a start
    under other limits (no event says so) never reached it (a helper's review, 2026-12-07)."""
    ctx = zmq.asyncio.Context.instance()
    file_says = {"min_bet": "EUR 50.00", "max_bet": "EUR 5,000.00"}
    feed = TableFeed("t1", "baccarat", "ipc:///nonexistent/pub", "ipc:///nonexistent/snap",
                     {"symbol": "EUR ", "limits_text": file_says}, ctx)
    assert feed.view.to_dict()["display"]["limits_text"] == file_says  # until the table says
    limits = {"seats": 7, "unit": 100, "min_bet": 100, "max_bet": 100000, "max_credit": 10**8,
              "minor_units": 2}
    feed.view.load_snapshot({"seq": 10, "journal_id": "j1",
                             "state": {"game": "baccarat", "phase": "idle", "limits": limits}})
    assert feed.view.to_dict()["display"]["limits_text"] == {"min_bet": "EUR 1.00", "max_bet": "EUR 1,000.00"}
    beat = {"event": "heartbeat", "journal_id": "j1", "last_seq": 10, "limits": {**limits, "minor_units": 0}}
    assert feed.take_frame(json.dumps(beat).encode(), b"t1.heartbeat") == "ok"
    assert feed.view.to_dict()["display"]["limits_text"] == {"min_bet": "EUR 100", "max_bet": "EUR 100,000"}
    assert feed.take_frame(json.dumps(beat).encode(), b"t1.heartbeat") == "side"  # the same: nothing to draw


def test_health_and_tables_say_which_journal_the_seq_is_of() -> None:
    """A review (2026-12-07): ``/health`` gave each table's seq without its journal, and a new journal starts
    at seq 1 again: a monitor could not tell which journal answered (every reply says who answers)."""

    async def ask() -> tuple[Any, Any]:
        async with TestClient(TestServer(make_app({"t1": new_feed()}))) as client:
            health = await (await client.get("/health")).json()
            tables = await (await client.get("/tables")).json()
            return health, tables

    health, tables = asyncio.run(ask())
    assert health["t1"]["journal_id"] == "j1" and health["t1"]["seq"] == 10
    assert tables[0]["table"] == "t1" and tables[0]["journal_id"] == "j1"


@pytest.mark.parametrize(("host", "status"), [("localhost:8080", 200), ("127.0.0.1:8080", 200),
                                              ("[::1]:8080", 200), ("rebind.attacker.example:8080", 421)])
def test_a_server_on_loopback_answers_only_requests_naming_it(host: str, status: int) -> None:
    """A review (2026-12-07): a page whose host name resolves to 127.0.0.1 (DNS rebinding) could read the
    display and the pit board from a browser on their machine; on loopback they answer only to its names."""
    async def ask() -> int:
        app = make_app({"t1": new_feed()}, WebLimits(hosts=host_names("127.0.0.1")))
        async with TestClient(TestServer(app)) as client:
            return (await client.get("/health", headers={"Host": host})).status

    assert asyncio.run(ask()) == status

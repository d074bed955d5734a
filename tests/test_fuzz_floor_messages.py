"""Fuzzing what the floor reads from NATS and from a pit boss's browser: journal row messages (the recorder's
and the pit board's), heartbeats and alerts on the board, message ids, and the ``from``/``to`` times of
``/report`` and ``croupier floor export``. Each is taken, or refused with its documented error (a
ValueError whose words say what was wrong; on the board, a logged line), never another exception, and a
row message reads back as it was written (docs/testing.md; the standard: "fuzzing for every parser of
outside bytes")."""

from __future__ import annotations

import json
import math
from typing import Any

import psycopg
import pytest
from floor_support import postgres  # noqa: F401 (fixture)
from hypothesis import example, given, settings
from hypothesis import strategies as st

from controller.floor import store
from controller.floor.alerting.rules import Pit
from controller.floor.alive import Heartbeat
from controller.floor.gaming_day import MIDNIGHT
from controller.floor.queries import parse_when
from controller.floor.schema import migrate
from controller.floor.wire import RowMessage, UnknownFormat, msg_id, parse_msg_id, subject
from pitboard.board import Board
from pitboard.history import load_tiles
from tests.server_fixtures import FloorDatabase

pytestmark = pytest.mark.timeout(120)

FUZZ = settings(max_examples=200, deadline=None, derandomize=True)
DEEP = b"[" * 100_000
HUGE = "1" * 5000

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(),
                    st.text(max_size=8), st.sampled_from([2**63, -(2**63) - 1, 1e308, "", "\x00"]))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=10)
EVENT_KINDS = ["betting_opened", "wager", "wager_placed", "betting_closed", "decision_due", "round_result",
               "round_settled", "round_voided", "tilt", "tilt_cleared", "device", "credits", "limits"]
EVENT_KEYS = ["round", "seat", "spot", "amount", "seats", "house_net", "result", "online",
              "device", "detail", "reason", "minor_units", "credits"]
events = st.fixed_dictionaries(
    {"seq": st.integers(1, 50) | scalars, "event": st.sampled_from(EVENT_KINDS) | st.text(max_size=6)},
    optional={k: scalars | json_values for k in EVENT_KEYS})
currencies = st.fixed_dictionaries({}, optional={"code": st.sampled_from(["EUR", "", "JPY"]) | scalars,
                                                 "minor_units": st.integers(-2, 6) | scalars}) | json_values


def row(**changes: Any) -> dict[str, Any]:
    body = {"format": 1, "table": "t1", "journal": "j1", "row": 1, "at": 1.0e9, "source": "shoe", "ref": None,
            "input": {"type": "open_betting"}, "first_seq": 1, "events": [], "game": "baccarat",
            "options": {}, "journal_rows": 1, "round": None, "currency": {"code": "EUR", "minor_units": 2}}
    body.update(changes)
    return body


rows = st.builds(lambda ev, cur, r, jr: row(events=ev, currency=cur, row=r, journal_rows=jr),
                 st.lists(events, max_size=4), st.just({"code": "EUR", "minor_units": 2}) | currencies,
                 st.integers(1, 5), st.integers(0, 5))


@FUZZ
@given(st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode())
       | rows.map(lambda r: json.dumps(r).encode()))
@example(DEEP)
@example(json.dumps(row(events=[{"seq": 1, "event": "x", "k": "\ud800"}])).encode())
def test_a_row_message_is_read_or_a_value_error(data: bytes) -> None:
    try:
        msg = RowMessage.parse(data)
    except UnknownFormat as exc:
        assert str(exc).startswith("format ")
    except ValueError as exc:
        assert str(exc)
    else:
        assert RowMessage.parse(msg.body()) == msg


@FUZZ
@given(st.text(max_size=10).filter(lambda t: "." not in t), st.uuids().map(str), st.integers(0, 2**62))
def test_a_row_message_id_reads_back(table: str, journal: str, number: int) -> None:
    assert parse_msg_id(msg_id(table, journal, number)) == (table, journal, number)


@FUZZ
@given(st.text(max_size=30))
@example("t:j:" + HUGE)
def test_any_message_id_is_one_or_a_value_error(text: str) -> None:
    try:
        table, journal, number = parse_msg_id(text)
    except ValueError:
        pass
    else:
        assert msg_id(table, journal, number).endswith(str(number))


@FUZZ
@given(st.one_of(st.text(max_size=30), st.floats().map(str), st.datetimes().map(lambda d: d.isoformat()),
                 st.sampled_from(["nan", "inf", "-inf", "1e999", HUGE, "0001-01-01T00:00+01:00"])))
@example("nan")
@example("1e999")
def test_a_report_time_is_a_finite_epoch_or_a_value_error(text: str) -> None:
    """``/report?from=`` and ``croupier floor export --from``: a time, or the ValueError the page answers
    400 with; never a NaN or an infinity taken as a time, never another exception (a 500)."""
    try:
        when = parse_when(text)
    except ValueError:
        return
    assert math.isfinite(when), (text, when)


def _board() -> Board:
    return Board("postgresql://nowhere.invalid/none", MIDNIGHT)


def _refuse(name: str) -> Any:
    raise AssertionError(f"the board's payload holds {name}: a browser's JSON.parse refuses it")


def _drawn(board: Board) -> dict[str, Any]:
    """The board's payload as a browser reads it (``JSON.parse``: no NaN, no Infinity)."""
    drawn: dict[str, Any] = json.loads(board.payload, parse_constant=_refuse)
    return drawn


@FUZZ
@given(rows.map(lambda r: json.dumps(r).encode()) | json_values.map(lambda v: json.dumps(v).encode()))
@example(json.dumps(row(journal="j2", currency={"minor_units": 9})).encode())
@example(json.dumps(row(row=2, events=[{"seq": 2, "event": "betting_closed"}])).encode())
@example(json.dumps(row(row=2, currency={"minor_units": 9})).encode())
@example(json.dumps(row(row=2, currency={"minor_units": True})).encode())
@example(b'{"format": 1, "table": "t1", "journal": "j1", "row": 2, "at": 1e9, "source": "shoe", "ref": null, '
         b'"input": {}, "first_seq": 2, "events": [{"seq": 2, "event": "tilt", "detail": 1e999}], '
         b'"game": "baccarat", "options": {}, "journal_rows": 2, "round": null, "currency": {}}')
def test_the_board_takes_or_logs_any_row(data: bytes) -> None:
    """Board.take_row: "a row the board cannot read" is logged; the board still draws."""
    board = _board()
    board.take_row(json.dumps(row()).encode(), subject("t1", "j1"))
    board.take_row(data, subject("t1", "j1"))
    _drawn(board)


heartbeats = st.fixed_dictionaries(
    {"table": st.just("t1") | scalars},
    optional={"journal": st.just("j1") | scalars, "journal_rows": st.integers(0, 9) | scalars,
              "acked": st.integers(0, 9) | scalars, "sent_at": scalars})


@FUZZ
@given(heartbeats.map(lambda h: json.dumps(h).encode()) | st.binary(max_size=100))
@example(b'{"table": "t1", "journal": "j1", "journal_rows": 1e999}')
@example(b'{"table": "t1", "journal": "j2", "journal_rows": 1, "acked": 1e999}')
@example(DEEP)
def test_the_board_takes_or_logs_any_heartbeat(data: bytes) -> None:
    board = _board()
    board.take_row(json.dumps(row()).encode(), subject("t1", "j1"))
    board.take_heartbeat(data, "croupier.t1.alive")
    _drawn(board)


@FUZZ
@given(heartbeats.map(lambda h: json.dumps(h).encode()) | st.binary(max_size=100))
@example(b'{"table": "t1", "journal": "j1", "journal_rows": 1, "acked": 1, "sent_at": 1e999}')
@example(DEEP)
def test_the_alert_service_judges_or_refuses_any_heartbeat(data: bytes) -> None:
    """A review (2026-12-07): the alert service read heartbeats with json.loads, so ``sent_at: 1e999``
    raised OverflowError out of its rules on the second sample, and a deeply nested one RecursionError
    out of the NATS callback. It reads them as the recorder and the board do (``Heartbeat.body``)."""
    pit = Pit()
    try:
        body = Heartbeat.body(data, "croupier.t1.alive")
    except ValueError:
        return
    for at in (1000.0, 1001.0):  # the clock's rule looks from the second sample on
        pit.alive(body, at)


alerts = st.fixed_dictionaries(
    {"table": st.just("t1") | scalars},
    optional={"alert": st.integers(0, 9) | scalars, "state": st.sampled_from(["open", "cleared", "acked"])
              | scalars, "severity": st.sampled_from(["critical", "warning"]) | scalars})


@FUZZ
@given(alerts.map(lambda a: json.dumps(a).encode()) | st.binary(max_size=100))
@example(b'{"table": "t1", "alert": 1e999, "state": "open"}')
@example(b'{"table": "t1", "alert": 1, "state": "open", "detail": 1e999}')
@example(DEEP)
def test_the_board_takes_or_logs_any_alert(data: bytes) -> None:
    board = _board()
    board.take_alert(data)
    _drawn(board)


def test_a_row_the_board_cannot_read_leaves_its_tile_as_it_was_and_the_other_tables_drawn() -> None:
    """A bad currency skips the whole row (nothing of it folded); an event the tile cannot fold is left
    out and the rest of its row folded, as a load from PostgreSQL does (docs/floor.md, "What it cannot
    read"); the other table is drawn throughout."""
    board = _board()
    board.take_row(json.dumps(row()).encode(), subject("t1", "j1"))
    board.take_row(json.dumps(row(table="t2")).encode(), subject("t2", "j1"))
    opened = {"seq": 1, "event": "betting_opened", "round": 1}
    board.take_row(json.dumps(row(row=2, events=[opened])).encode(), subject("t1", "j1"))
    before = board.tiles["t1"].view(1.0)
    wager = {"seq": 2, "event": "wager_placed", "round": 1, "seat": 3, "spot": "player", "amount": 500}
    board.take_row(json.dumps(row(row=3, events=[wager], currency={"minor_units": 9})).encode(),
                   subject("t1", "j1"))
    assert board.tiles["t1"].view(1.0) == before
    closed = {"seq": 3, "event": "betting_closed"}  # no seats
    board.take_row(json.dumps(row(row=3, events=[wager, closed])).encode(), subject("t1", "j1"))
    tile = board.tiles["t1"].view(1.0)
    assert (tile["phase"], tile["seats"], tile["in_play"], tile["last_row"]) == ("betting", [3], 500, 3)
    assert [t["table"] for t in _drawn(board)["tables"]] == ["t1", "t2"]


def test_a_recorded_row_the_board_cannot_fold_does_not_stop_its_start(postgres: FloorDatabase) -> None:  # noqa: F811
    """The recorder stores what the wire reads (a ``betting_closed`` without seats, a currency of 9
    decimals): the board's load from PostgreSQL leaves out that event, and that table, as live, and
    loads the others (it raised, and ``follow`` tried the whole load again, for good)."""
    opened = {"seq": 1, "event": "betting_opened", "round": 1}
    wager = {"seq": 2, "event": "wager_placed", "round": 1, "seat": 3, "spot": "player", "amount": 500}
    bodies = [row(events=[opened]), row(row=2, first_seq=2, journal_rows=2, events=[wager, {"seq": 3, "event":
              "betting_closed"}]), row(table="t2", currency={"minor_units": 9}), row(table="t3")]
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_batch(conn, [RowMessage.parse(json.dumps(b).encode()) for b in bodies])
    tiles = load_tiles(postgres.dsn)
    assert sorted(tiles) == ["t1", "t3"]
    tile = tiles["t1"].view(1.0)
    assert (tile["phase"], tile["seats"], tile["in_play"], tile["last_row"]) == ("betting", [3], 500, 2)


class _Msg:
    def __init__(self, data: bytes, subject: str) -> None:
        self.data, self.subject = data, subject


class _Subscriptions:
    """Where ``Board.listen`` subscribes: keeps its callback, which the test calls as nats-py would."""

    def __init__(self) -> None:
        self.cb: Any = None

    async def subscribe(self, subject: str, cb: Any) -> None:
        self.cb = cb


@FUZZ
@given(heartbeats.map(lambda h: json.dumps(h).encode()) | st.binary(max_size=100))
@example(b'{"table": "t1", "journal": "j1", "journal_rows": 1e999}')
@example(DEEP)
def test_the_recorder_takes_or_logs_any_heartbeat(data: bytes) -> None:
    """controller.floor.alive.Board: "a heartbeat on ... that does not parse" is logged, never raised into
    nats-py's callback (which would only print it, with the heartbeat lost unexplained)."""
    import asyncio

    from controller.floor.alive import Board as Heartbeats

    async def hear() -> dict[tuple[str, str], int]:
        board, nc = Heartbeats(), _Subscriptions()
        await board.listen(nc)  # type: ignore[arg-type]
        await nc.cb(_Msg(data, "croupier.t1.alive"))
        return board.take()

    heard = asyncio.run(hear())
    assert all(isinstance(n, int) for n in heard.values())


def test_an_alert_is_believed_only_on_its_tables_subject() -> None:
    """A review (2026-12-07): an alert on ``croupier.alerts.t1`` whose body named another table made a tile
    for it (a made-up table on the board); rows and heartbeats were held to their subject already."""
    board = _board()
    alert = {"table": "made_up", "alert": 1, "state": "open", "kind": "tilt", "severity": "critical"}
    board.take_alert(json.dumps(alert).encode(), "croupier.alerts.t1")
    assert "made_up" not in board.tiles
    board.take_alert(json.dumps({**alert, "table": "t1"}).encode(), "croupier.alerts.t1")
    assert 1 in board.tiles["t1"].alerts

"""The pit board's parts without a browser: a tile from PostgreSQL equals the tile folded live from the same
rows, a missing row is noticed, and operators' tokens are private and stored hashed (docs/floor.md)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import psycopg
import pytest
from floor_support import postgres  # noqa: F401 (fixture)
from test_daemon_support import baccarat_play, config_for
from test_floor_recall_games import to_the_floor, uplink_messages
from test_journal_export import session, two_limits
from test_zmq_snapshot import send_all

from controller import inputs as I
from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import TableConfig
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.floor import store
from controller.floor.gaming_day import MIDNIGHT
from controller.floor.schema import migrate
from controller.floor.wire import RowMessage
from controller.money import Currency
from pitboard import operators
from pitboard.board import TICK, Board
from pitboard.history import load_tiles
from pitboard.tile import Tile
from signage.roads import Result, big_road
from tests.server_fixtures import FloorDatabase

pytestmark = pytest.mark.timeout(60)


def played(config: TableConfig, inputs: list[I.Input]) -> None:
    """``inputs`` sent to the table's daemon, started for them and stopped after (its journal stays)."""
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
        try:
            send_all(client, inputs)
        finally:
            client.close()


def test_a_tile_loaded_from_postgresql_equals_the_tile_folded_from_the_live_rows(
        tmp_path: Path, postgres: FloorDatabase) -> None:  # noqa: F811
    """Rounds, seats, wagers in play, the house today, the big road, tilt and device state: the board's
    start (PostgreSQL) and its live feed (the rows' events) give the same tile."""
    config = config_for(tmp_path, name="pit3")
    inputs, _ = baccarat_play(9, seed=5)
    cut = max(i for i, inp in enumerate(inputs) if isinstance(inp, I.CloseBetting))  # wagers on the layout
    dealt = [*inputs[:cut], I.DeviceStatus("shoe lid", False, "lid open")]
    played(config, dealt)
    messages = to_the_floor(config, postgres.dsn)
    live = Tile("pit3")
    assert all(live.take_row(RowMessage.parse(m.body())) for m in messages)
    loaded = load_tiles(postgres.dsn)["pit3"]
    now = time.time()
    view = loaded.view(now)
    assert {**view, "silent": None} == {**live.view(now), "silent": None}
    rounds = [m.round for m in messages if m.round is not None]
    assert view["round"] == len(rounds) + 1 and view["phase"] == "betting"
    assert view["rounds_per_hour"] == len(rounds)
    assert view["house_today"] == sum(r["house_net"] for r in rounds)
    opened = max(i for i, m in enumerate(messages) if any(e["event"] == "betting_opened" for e in m.events))
    stakes = {(e["seat"], e["spot"]): e["amount"] for m in messages[opened:] for e in m.events
              if e["event"] == "wager_placed"}
    assert view["in_play"] == sum(stakes.values()) > 0 and view["seats"] == sorted({s for s, _ in stakes})
    shoe = [m for m in messages if any(e["event"] == "new_shoe" for e in m.events)][-1].row
    results = [Result.from_record(r["result"]) for m in messages if m.row >= shoe and (r := m.round)]
    assert view["road"] == [c.to_dict() for c in big_road(results)]
    assert view["offline"] == {"shoe lid": "lid open"} and "offline" in view["states"]
    assert view["behind"] == 0 and view["last_row"] == len(dealt)
    # A row that finds rows missing before it is folded, and says so (the board reloads the table).
    again = Tile("pit3")
    assert again.take_row(RowMessage.parse(messages[0].body()))
    assert not again.take_row(RowMessage.parse(messages[2].body()))


def test_an_operator_s_token_is_shown_once_and_stored_only_hashed_in_a_private_file(tmp_path: Path) -> None:
    path = tmp_path / "operators.json"
    token = operators.add(path, "Ann")
    assert path.stat().st_mode & 0o777 == 0o600
    assert token not in path.read_text() and set(json.loads(path.read_text())["operators"]) == {"Ann"}
    assert operators.who(path, token) == "Ann"
    assert operators.who(path, token + "x") is None and operators.who(path, "") is None
    bob = operators.add(path, "Bob")
    fresh = operators.add(path, "Ann")  # a new token replaces the old one
    assert operators.who(path, token) is None and operators.who(path, fresh) == "Ann"
    assert operators.who(path, bob) == "Bob"
    with pytest.raises(operators.OperatorError, match="letters"):
        operators.add(path, "Ann\nroot")
    path.chmod(0o644)
    with pytest.raises(operators.OperatorError, match="readable by others"):
        operators.who(path, fresh)


def test_a_tile_loaded_after_a_change_of_decimals_shows_the_newest_row_s(
        tmp_path: Path, postgres: FloorDatabase) -> None:  # noqa: F811
    """docs/floor.md: a tile's amounts are in the decimals of the newest row. The floor heard the table
    first under 2 decimals, then (a ``limits`` row) under 0: a board started from PostgreSQL shows the
    2000 in play as 2,000, as its live feed does, not as 20.00."""
    _, after, _, _, change = two_limits(tmp_path)
    session(after, [I.OpenBetting(), I.PlaceWager(1, "player", 2000)])
    messages = uplink_messages(after)
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_batch(conn, messages[:change - 1])  # heard before the change, then after it
        store.write_batch(conn, messages[change - 1:])
    live = Tile("t")
    assert all(live.take_row(RowMessage.parse(m.body())) for m in messages)
    assert live.view(1.0)["in_play_text"] == "2,000"
    assert load_tiles(postgres.dsn)["t"].view(1.0)["in_play_text"] == "2,000"


def test_the_house_today_is_never_one_sum_of_two_decimals(tmp_path: Path, postgres: FloorDatabase) -> None:  # noqa: F811
    """Two rounds settled under 2 decimals, the decimals changed to 0, two more today: the tile's house
    today is the newest scale's alone (-3,600), the earlier scale's apart in its own decimals (-18.00),
    never -5,400 or -54.00; the last rounds' nets each in the decimals it was played under; the same
    from PostgreSQL (each round's record says its decimals) as live."""
    now = time.time()
    _, after, _, _, _ = two_limits(tmp_path, at=now)
    messages = to_the_floor(after, postgres.dsn)
    live = Tile("t")
    assert all(live.take_row(RowMessage.parse(m.body())) for m in messages)
    for tile in (live, load_tiles(postgres.dsn)["t"]):
        view = tile.view(now)
        assert (view["house_today"], view["house_today_text"]) == (-3600, "-3,600"), view
        [earlier] = view["house_today_earlier"]
        assert (earlier["minor_units"], earlier["house_today"], earlier["text"]) == (2, -1800, "-18.00")
        assert earlier["currency"] == view["currency"]
    nets = [(r["house_net"], m.currency["minor_units"]) for m in messages if (r := m.round)]
    assert nets == [(-900, 2), (-900, 2), (-1800, 0), (-1800, 0)]
    assert nets == [(n, m.minor_units) for n, m in live.nets]
    live.game = "one_card_poker"  # a game whose tile shows its last nets (Baccarat's shows its road)
    assert live.view(now)["nets"] == ["-9.00", "-9.00", "-1,800", "-1,800"]


def test_the_earlier_scales_are_in_one_order_whatever_order_their_rounds_came_in() -> None:
    """Three scales in a day, two journals (rounds of both ended at one instant): ``house_today_earlier``
    is the same list whether the rounds came newest first (live) or in PostgreSQL's order."""
    now = MIDNIGHT.start(time.time()) + 3600  # every round today, whenever the test runs
    eur = lambda scale: Currency("EUR", scale)  # noqa: E731
    rounds = {("j1", 1): (now - 60, -900, eur(2)), ("j2", 1): (now - 30, 500, eur(3)),
              ("j1", 2): (now - 30, 7, eur(0)), ("j2", 2): (now - 10, -1, eur(4))}
    views = []
    for order in (list(rounds), list(rounds)[::-1]):
        tile = Tile("t")
        tile.new_journal("j2", "one_card_poker", {"code": "EUR", "minor_units": 4})
        tile.settled = {key: rounds[key] for key in order}
        views.append(tile.view(now))
    assert views[0]["house_today_earlier"] == views[1]["house_today_earlier"] == [
        {"currency": "EUR", "minor_units": 0, "house_today": 7, "text": "+7"},
        {"currency": "EUR", "minor_units": 3, "house_today": 500, "text": "+0.500"},
        {"currency": "EUR", "minor_units": 2, "house_today": -900, "text": "-9.00"}]
    assert views[0]["house_today"] == -1


def test_the_house_today_is_never_one_sum_of_two_currencies() -> None:
    """A table played a USD journal, then (cashed out, a new state dir) an EUR one, both today: two sums,
    each in its own code (they were one, -975.09 EUR, a review found: -1,712.53 EUR and +737.44 USD)."""
    now = MIDNIGHT.start(time.time()) + 3600
    tile = Tile("t")
    tile.new_journal("eur", "one_card_poker", {"code": "EUR", "minor_units": 2})
    tile.settled = {("usd", 1): (now - 60, 73_744, Currency("USD", 2)),
                    ("eur", 1): (now - 30, -171_253, Currency("EUR", 2))}
    view = tile.view(now)
    assert (view["house_today"], view["house_today_text"], view["currency"]) == (-171_253, "-1,712.53", "EUR")
    assert view["house_today_earlier"] == [
        {"currency": "USD", "minor_units": 2, "house_today": 73_744, "text": "+737.44"}]


def test_a_tile_with_rows_missing_is_reloaded_until_postgresql_has_them(
        tmp_path: Path, postgres: FloorDatabase) -> None:  # noqa: F811
    """The board subscribed while the uplink was publishing: the first row it hears is not the table's
    first, and the recorder is behind the live rows when the board reloads. The tile was kept as folded,
    without the rounds of the gap (an empty road, one round last hour) and never reloaded again, since
    every later row was contiguous (the browser test's failure on 2026-12-04). Now it is loaded again at
    every tick until PostgreSQL holds its rows, and is then the whole table's."""
    config = config_for(tmp_path, name="pit9")
    inputs, _ = baccarat_play(6, seed=11)
    played(config, inputs)
    messages = uplink_messages(config)
    heard = len(messages) // 2  # the first row the board hears
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_batch(conn, messages[:3])  # the recorder, behind
    board = Board(postgres.dsn)
    for m in messages[heard:]:
        board.take_row(m.body())

    async def ticks(n: int) -> None:
        stop = asyncio.Event()
        keeping = asyncio.ensure_future(board.keep_up(stop))
        await asyncio.sleep(n * TICK + TICK / 2)
        stop.set()
        await keeping

    asyncio.run(ticks(2))  # PostgreSQL still behind: the tile stays as folded, its gap remembered
    assert board.tiles["pit9"].last_row == len(messages)
    with psycopg.connect(postgres.dsn) as conn:
        store.write_batch(conn, messages[3:])  # the recorder catches up
    asyncio.run(ticks(2))
    whole = Tile("pit9")
    assert all(whole.take_row(RowMessage.parse(m.body())) for m in messages)
    now = time.time()
    assert {**board.tiles["pit9"].view(now), "silent": None} == {**whole.view(now), "silent": None}
    assert board.tiles["pit9"].view(now)["road"]

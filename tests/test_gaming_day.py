"""The floor's one "today", the gaming day (controller/floor/gaming_day.py, docs/floor.md "The gaming day").

The pit board had two: a tile's house today counted from the board server's local midnight, ``/report``'s
default range from UTC midnight, so off UTC one table showed two different "today" figures. Now both (and
``croupier floor report --gaming-day``) start at one cut-off (``--gaming-day-starts HH:MM``, wall clock in
the server's time zone), across DST changes too. No PostgreSQL: ``/report`` is asked through the board's
own app with the floor's query replaced by one that notes the range it was asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from datetime import time as clock
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from controller.cli import build_parser
from controller.floor import report_format
from controller.floor.gaming_day import MIDNIGHT, GamingDay
from controller.money import Currency
from pitboard import report_route
from pitboard.board import Board
from pitboard.server import make_app
from pitboard.tile import Tile

NEW_YORK, LONDON = ZoneInfo("America/New_York"), ZoneInfo("Europe/London")


@pytest.fixture
def server_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The board server's local time zone is New York's (TZ), then again this machine's."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def at(zone: ZoneInfo, year: int, month: int, day: int, hour: int, minute: int, fold: int = 0) -> float:
    """The instant the clock in ``zone`` reads this (``fold=1``: the second time, an autumn hour)."""
    return datetime(year, month, day, hour, minute, tzinfo=zone, fold=fold).timestamp()


def test_a_cut_off_at_six_puts_5_59_in_yesterday_and_6_01_in_today() -> None:
    day = GamingDay(clock(6, 0), LONDON)
    six = at(LONDON, 2026, 12, 1, 6, 0)
    assert day.start(six - 60) == at(LONDON, 2026, 11, 30, 6, 0)
    assert day.day_of(six - 60) == date(2026, 11, 30)
    assert day.start(six + 60) == six == day.start(six) and day.day_of(six + 60) == date(2026, 12, 1)
    assert day.describe(six + 60) == "gaming day 2026-12-01 (from 06:00 GMT)"


def test_across_dst_the_cut_off_is_a_wall_clock_time() -> None:
    """06:00 every day, whatever the offset: the gaming days holding a DST change last 23 and 25 hours."""
    day = GamingDay(clock(6, 0), NEW_YORK)
    spring, autumn = date(2026, 3, 8), date(2026, 11, 1)  # 02:00 -> 03:00; 02:00 -> 01:00
    for d in (spring, autumn):
        start = day.start_on(d)
        assert datetime.fromtimestamp(start, NEW_YORK).strftime("%Y-%m-%d %H:%M") == f"{d} 06:00"
        assert day.start(start - 1) == day.start_on(d - timedelta(days=1))
    assert day.start_on(spring) - day.start_on(spring - timedelta(days=1)) == 23 * 3600
    assert day.start_on(autumn) - day.start_on(autumn - timedelta(days=1)) == 25 * 3600


def test_a_cut_off_the_clock_skips_or_repeats() -> None:
    """02:30 on the spring day never shows: the day starts at the jump (03:00 EDT). 01:30 on the autumn
    day shows twice: the first (EDT) starts it, and the second 01:15 (EST) is already in it."""
    skipped = GamingDay(clock(2, 30), NEW_YORK)
    assert skipped.start_on(date(2026, 3, 8)) == at(NEW_YORK, 2026, 3, 8, 3, 0)
    assert skipped.start(at(NEW_YORK, 2026, 3, 8, 1, 59)) == at(NEW_YORK, 2026, 3, 7, 2, 30)
    repeated = GamingDay(clock(1, 30), NEW_YORK)
    first = at(NEW_YORK, 2026, 11, 1, 1, 30)
    assert repeated.start_on(date(2026, 11, 1)) == first
    assert repeated.day_of(at(NEW_YORK, 2026, 11, 1, 1, 15)) == date(2026, 10, 31)  # EDT, before it
    assert repeated.start(at(NEW_YORK, 2026, 11, 1, 1, 15, fold=1)) == first  # EST, the hour again


def test_the_server_s_zone_is_its_tz_and_midnight_is_the_default(server_zone: None) -> None:
    now = at(NEW_YORK, 2026, 3, 8, 12, 0)
    assert GamingDay(clock(2, 30)).start(now) == GamingDay(clock(2, 30), NEW_YORK).start(now)
    assert MIDNIGHT.start(now) == at(NEW_YORK, 2026, 3, 8, 0, 0)
    serve = build_parser().parse_args(["floor", "serve", "--nats", "n", "--db", "x", "--operators", "o"])
    assert serve.gaming_day_starts == clock(0, 0)


@pytest.mark.parametrize("command", [["floor", "serve", "--nats", "n", "--db", "x", "--operators", "o"],
                                     ["floor", "report", "--db", "x", "--gaming-day", "today"]])
@pytest.mark.parametrize("bad", ["6", "24:00", "06:60", "6am", ""])
def test_a_bad_cut_off_exits_naming_the_option(command: list[str], bad: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([*command, "--gaming-day-starts", bad])
    assert exited.value.code == 2 and "error: argument --gaming-day-starts: HH:MM" in capsys.readouterr().err


def test_the_report_command_s_gaming_day_is_the_board_s(server_zone: None) -> None:
    args = build_parser().parse_args(["floor", "report", "--db", "x", "--gaming-day", "2026-03-08",
                                      "--gaming-day-starts", "06:00"])
    assert report_format._range(args) == (at(NEW_YORK, 2026, 3, 8, 6, 0), at(NEW_YORK, 2026, 3, 9, 6, 0))
    for both in (["--from", "2026-03-08"], ["--to", "2026-03-09"]):
        with pytest.raises(ValueError, match="not both"):
            report_format._range(build_parser().parse_args([*args_of(args), *both]))
    with pytest.raises(ValueError, match="--from and --to, or --gaming-day"):
        report_format._range(build_parser().parse_args(["floor", "report", "--db", "x", "--from", "0"]))
    # The calendar's edges and a day to come (a review, 2026-12-07: 9999-12-31 raised OverflowError, a day
    # to come gave a range that ends before it starts).
    for day, why in (("9999-12-31", "years 1 to 9998"), ("0001-01-01", "years 1 to 9998"),
                     ("2999-01-01", "has not begun")):
        with pytest.raises(ValueError, match=why):
            report_format._range(build_parser().parse_args([*args_of(args)[:-1], day]))


def args_of(args: Any) -> list[str]:
    return ["floor", "report", "--db", "x", "--gaming-day", args.gaming_day]


def board_and_report(board: Board, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                     rounds_at: Any) -> tuple[tuple[float, float], dict[str, Any], str]:
    """``/report`` with no range (the range it asked the floor for, the page), then ``/board`` with a tile
    whose rounds ``rounds_at(report_start)`` gives."""
    from aiohttp.test_utils import TestClient, TestServer

    asked: list[tuple[float, float]] = []

    def from_floor(conn: object, start: float, end: float, table: str | None) -> list[Any]:
        asked.append((start, end))
        return []

    monkeypatch.setattr(report_route, "from_floor", from_floor)
    monkeypatch.setattr("psycopg.connect", lambda *a, **k: contextlib.nullcontext(object()))

    async def ask() -> tuple[str, dict[str, Any]]:
        async with TestClient(TestServer(make_app(board, tmp_path / "operators.json"))) as http:
            page = await (await http.get("/report")).text()
            tile = Tile("t1")
            tile.new_journal("j1", "one_card_poker", {"code": "EUR", "minor_units": 2})
            tile.settled = rounds_at(asked[0][0])
            board.tiles["t1"] = tile
            board.changed()
            return page, json.loads(await (await http.get("/board")).text())

    page, body = asyncio.run(ask())
    return asked[0], body["tables"][0], page


def test_the_tile_s_today_is_report_s_default_today_off_utc(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, server_zone: None) -> None:
    """New York: its midnight is not UTC's. A round ending as /report's default range starts counts in
    the tile's house today, one a second before does not (it counted from local midnight, /report from
    UTC midnight: two figures for one table)."""
    eur = Currency("EUR", 2)
    (start, end), tile, _ = board_and_report(
        Board("postgresql:///nowhere"), monkeypatch, tmp_path,
        lambda s: {("j1", 1): (s - 1, 1_000, eur), ("j1", 2): (s, 25, eur), ("j1", 3): (s + 60, 100, eur)})
    assert end > start and tile["house_today"] == 125, (start, tile)


def test_the_cut_off_is_the_tiles_and_report_s_and_both_say_which_day(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, server_zone: None) -> None:
    day = GamingDay(clock(6, 0))
    eur = Currency("EUR", 2)
    (start, _), tile, page = board_and_report(
        Board("postgresql:///nowhere", day), monkeypatch, tmp_path,
        lambda s: {("j1", 1): (s - 1, 1_000, eur), ("j1", 2): (s, 25, eur)})
    assert start == day.start(time.time()) == tile["gaming_day_from"]
    assert datetime.fromtimestamp(start, NEW_YORK).strftime("%H:%M") == "06:00"
    assert tile["house_today"] == 25 and tile["gaming_day"] == day.day_of(start).isoformat()
    assert f"{day.describe(start)} so far" in page

"""The pit board in headless Chromium on a day the table's decimals changed: two sums, never one.

The table played two rounds under 2 decimals, changed them to 0 (a ``limits`` row) and played two
more, today. The board (its own code: :class:`pitboard.board.Board` folding the uplink's rows of that
journal, served by :func:`pitboard.server.make_app` on 127.0.0.1) shows the house today at the newest
scale and the earlier rounds' result apart, in their own decimals (docs/floor.md, "A tile"). No
PostgreSQL or NATS: tests/test_pitboard_browser.py runs the whole floor; this is the page's text.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web
from display_support import CHROMIUM
from test_floor_recall_games import uplink_messages
from test_journal_export import two_limits
from test_pitboard_browser import layout

from pitboard.board import Board
from pitboard.server import make_app

if not CHROMIUM.exists():  # loud on purpose, as the display's browser tests
    pytest.skip(f"NO BROWSER: {CHROMIUM} is missing, so the pit board is NOT tested (make test installs it)",
                allow_module_level=True)

from pitboard_browser_support import chromium_page  # noqa: E402 (Playwright)

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """The board of the table whose decimals changed today, served on 127.0.0.1: its address."""
    _, after, _, _, _ = two_limits(tmp_path, at=time.time())
    board = Board("")
    for message in uplink_messages(after):
        board.take_row(message.body())
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(make_app(board, tmp_path / "operators.json"), shutdown_timeout=0.1)

    async def start() -> str:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return f"http://127.0.0.1:{runner.addresses[0][1]}/"

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    async def stop() -> None:  # the page's stream too, which waits for the next change
        await runner.cleanup()
        rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in rest:
            task.cancel()
        await asyncio.gather(*rest, return_exceptions=True)

    try:
        yield asyncio.run_coroutine_threadsafe(start(), loop).result(10)
    finally:
        asyncio.run_coroutine_threadsafe(stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def test_the_tile_shows_the_house_today_at_each_scale_apart(served: str) -> None:
    with chromium_page(1366, 768) as (page, errors):
        page.goto(served)
        tile = page.locator('.tile[data-table="t"]')
        tile.wait_for(timeout=10_000)
        facts = dict(zip(tile.locator(".fact span").all_inner_texts(),
                         tile.locator(".fact b").all_inner_texts(), strict=True))
        assert facts["house today"] == "-3,600", facts
        assert facts["earlier, 2 decimals"] == "-18.00", facts
        assert "-5,400" not in tile.inner_text() and "-54.00" not in tile.inner_text()
        assert layout(page, "pitboard_decimals") == {}  # the extra line fits at both sizes
        assert errors == []

"""Regenerate docs/img/display_*.png: every game at every listed screen size and in every language.

Run by ``make display-screenshots`` (``python tests/display_screenshots.py [GAME...]``: only
those games), in headless Debian Chromium like the browser tests, against the real daemon on
a simulated shoe and the real display. Each picture is the
page at its CSS size, saved at about 960 pixels on its long side so the committed files
stay small: what the pictures are for is the layout, the tests measure the sizes.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from display_support import CHROMIUM, CHROMIUM_ARGS, ROOT, SCREENS, LiveTable
from playwright.sync_api import Browser, sync_playwright

IMG = ROOT / "docs" / "img"
#: Rounds played before the pictures, per game: Baccarat late in a shoe with a dragon (seed 26).
GAMES = {"baccarat": (26, 68), "swap_hand": (3, 6), "two_way_winner": (3, 6), "one_card_poker": (3, 6)}
LANGUAGES = ("en", "fr", "es", "zh-Hans", "zh-Hant", "vi", "th", "ko")
LONG_SIDE = 960


def picture(browser: Browser, table: LiveTable, size: tuple[int, int], name: str, ready: str = "") -> None:
    """One picture once the page shows the table's latest event (or ``ready``, a JS condition, holds)."""
    ready = ready or f"+document.body.dataset.seq >= {table.seq()}"
    width, height = size
    page = browser.new_page(viewport={"width": width, "height": height},
                            device_scale_factor=LONG_SIDE / max(width, height))
    try:
        page.goto(table.url)
        page.wait_for_function(ready, timeout=10_000)
        page.wait_for_timeout(500)  # the last card's animation
        page.screenshot(path=str(IMG / f"display_{name}.png"))
    finally:
        page.close()


def main(argv: list[str]) -> int:
    """Every game, or only the games named on the command line."""
    if not CHROMIUM.exists():
        print(f"display_screenshots: {CHROMIUM} is missing (apt-get install chromium)", file=sys.stderr)
        return 2
    with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for game, (seed, rounds) in GAMES.items():
            if argv and game not in argv:
                continue
            (Path(tmp) / game).mkdir()
            table = LiveTable(Path(tmp) / game, game, seed, symbol="€")
            try:
                table.play(rounds)
                for size_name, size in SCREENS.items():
                    picture(browser, table, size, f"{game}_{size_name}")
                for code in LANGUAGES[1:]:
                    table.set_language(code)
                    picture(browser, table, SCREENS["1920x1080"], f"{game}_{code}")
                if game == "baccarat":  # and what a stopped table looks like: stale, dimmed
                    assert table.daemon is not None
                    table.daemon.terminate()
                    table.daemon.wait(10)
                    stale = "document.body.dataset.stale === 'true' && +document.body.dataset.seq > 0"
                    picture(browser, table, SCREENS["1920x1080"], "baccarat_stale", stale)
            finally:
                table.close()
        browser.close()
    print(f"display_screenshots: wrote {IMG}/display_*.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""A table's troubles timed from their cause to the pit board in Chromium (no tests here: rig and one trial).

Shared by tests/test_pitboard_browser_alerts.py (one trial: each alert appears and clears) and
bench/pit_board_latency.py (N trials: p50 and max). Every part is real and its own process, as on a
floor: ``croupier run`` reading a :class:`SimulatedShoe` over a pty, its ``croupier uplink``, ``croupier
floor record``, ``croupier floor alerts`` and ``croupier floor serve``, through a real nats-server
into a real PostgreSQL. The board is read where a pit boss reads it: the tile's alert badge and colour
(its ``data-states``) and the opened table's open alerts, each timed in the page (``Date.now()``, the
same machine's clock as the cause's ``time.time()``).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Final

from alerting_support import shoe_table
from display_support import CHROMIUM, CHROMIUM_ARGS
from floor_support import Proc, recorded_row, wait_for
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import sync_playwright

from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import load_table
from drivers.shoe.sim import SimulatedShoe

if TYPE_CHECKING:
    from playwright.sync_api import Page

TABLE: Final = "t1"

#: In the page: ``Date.now()`` once the alert (kind, key) is on the board as ``want`` says (true: its
#: badge on the tile, the tile coloured by ``state``, and listed in the opened table's open alerts;
#: false: none of the three), else false (Playwright polls it every animation frame).
SHOWN_JS: Final = """([table, kind, key, state, want]) => {
  const tile = document.querySelector(`.tile[data-table="${table}"]`);
  if (!tile) return false;
  const which = `[data-kind="${kind}"][data-key="${key}"]`;
  const seen = [tile.querySelector(`.badge${which}`) !== null,
                (tile.dataset.states || '').split(' ').includes(state),
                document.querySelector(`#open-alerts li${which}`) !== null];
  return seen.every(s => s === want) ? Date.now() : false;
}"""


@contextmanager
def chromium_page(width: int, height: int) -> Iterator[tuple[Page, list[str]]]:
    """A page of headless Chromium (Debian's) at this size, and the script errors it has had so far."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            yield page, errors
        finally:
            browser.close()


def open_table(page: Page, url: str, table: str) -> None:
    """The board at ``url`` in ``page``, ``table``'s tile clicked open (its recall and open alerts shown)."""
    page.goto(url)
    tile = page.locator(f'.tile[data-table="{table}"]')
    tile.wait_for(timeout=30_000)
    tile.click()
    page.wait_for_function(f"document.body.dataset.detail === '{table}'", timeout=30_000)


def shown_at(page: Page, table: str, kind: str, key: str, state: str, want: bool) -> float:
    """When (epoch seconds, the page's clock) the alert was seen to reach ``want`` on the board
    (:data:`SHOWN_JS`); AssertionError after 30 s, naming the alert and what the board showed."""
    try:
        handle = page.wait_for_function(SHOWN_JS, arg=[table, kind, key, state, want], timeout=30_000)
    except PlaywrightTimeout:
        shown = page.evaluate(f"() => [document.querySelector('.tile[data-table={table}]')?.outerHTML,"
                              "document.getElementById('open-alerts').outerHTML]")
        raise AssertionError(f"{kind} {key!r} {'on' if want else 'off'} the board within 30 s; the board "
                             f"showed {shown}") from None
    return float(handle.json_value()) / 1000


class PitFloor:
    """The parts (started by :meth:`start`, stopped by :meth:`stop`) on a given nats-server and PostgreSQL."""

    def __init__(self, work: Path, nats_url: str, dsn: str) -> None:
        self.work, self.dsn = work, dsn
        self.shoe = SimulatedShoe("v1", seed=1)
        table = shoe_table(work, self.shoe)
        self.config = load_table(table)
        self.key = local_key(self.config)  # before the daemon starts, so it is authorised
        nats, db = ("--nats", nats_url), ("--db", dsn)
        self.daemon = Proc(work / "daemon.log", "run", str(table))
        self.uplink = Proc(work / "uplink.log", "uplink", str(table), *nats, "--heartbeat", "1")
        self.recorder = Proc(work / "recorder.log", "floor", "record", *nats, *db)
        self.service = Proc(work / "alerts.log", "floor", "alerts", *nats, *db)
        self.board = Proc(work / "board.log", "floor", "serve", "--listen", "127.0.0.1:0", *nats, *db,
                          "--operators", str(work / "operators.json"))
        self.url = ""

    @property
    def procs(self) -> tuple[Proc, ...]:
        return self.daemon, self.uplink, self.recorder, self.service, self.board

    def start(self) -> PitFloor:
        """Everything up: the daemon's first rows recorded, the service watching, the board listening."""
        for p in (self.daemon, self.recorder, self.service, self.board):
            p.start()
        wait_for("the daemon ready", lambda: self.daemon.said(f"table {TABLE} ready"), 60, self.daemon)
        self.uplink.start()
        client = CommandClient(self.config.spec.zeromq.command, timeout=10, key=self.key)
        try:  # a first row: the floor has the table's journal, so the board can open the table
            assert client.call("credit_in", seat=1, amount=10_000)["ok"]
        finally:
            client.close()
        wait_for("the uplink hears its daemon", lambda: self.uplink.said("the daemon is alive"), 60,
                 *self.procs)
        wait_for("the alert service up", lambda: self.service.said("tables watched"), 60, *self.procs)
        wait_for("the table's first rows recorded", lambda: recorded_row(self.dsn, TABLE) > 0, 60,
                 *self.procs)
        wait_for("the board listening", lambda: self.board.said("pit board: http"), 60, *self.procs)
        self.url = self.board.text().split("pit board: ", 1)[1].split()[0]
        return self

    def stop(self) -> None:
        for p in (self.board, self.uplink, self.service, self.recorder, self.daemon):
            p.stop()
        self.shoe.close()

    def open_table(self, page: Page) -> None:
        """The board in ``page``, the table's tile clicked open (its recall and open alerts shown)."""
        open_table(page, self.url, TABLE)

    def _board(self, page: Page, kind: str, key: str, state: str, want: bool) -> float:
        """:func:`shown_at` for the table, a failure with the processes' logs too."""
        try:
            return shown_at(page, TABLE, kind, key, state, want)
        except AssertionError as exc:
            wait_for(str(exc), lambda: False, 0, *self.procs)
            raise

    def trial(self, page: Page, unplug: float = 1.0) -> dict[str, float]:
        """Each cause once, the board's latency from it (seconds) by what happened; the board open
        on the table (:meth:`open_table`) and no alert of these kinds open."""
        took: dict[str, float] = {}

        def timed(what: str, cause: float, kind: str, key: str, state: str, want: bool) -> None:
            took[what] = self._board(page, kind, key, state, want) - cause

        t0 = time.time()
        self.shoe.inject("disconnect", unplug)
        timed("shoe unplugged: shown", t0, "device_offline", "shoe", "offline", True)
        timed(f"shoe back ({unplug:g} s later): cleared", t0 + unplug, "device_offline", "shoe", "offline",
              False)
        t0 = time.time()
        self.shoe.lid(True)
        timed("lid opened: shown", t0, "device_offline", "shoe lid", "offline", True)
        t0 = time.time()
        self.shoe.lid(False)
        timed("lid closed: cleared", t0, "device_offline", "shoe lid", "offline", False)
        assert self.daemon.proc is not None
        t0 = time.time()
        self.daemon.proc.send_signal(signal.SIGTERM)  # the page watched at once, not after the exit
        timed("daemon stopped (SIGTERM): shown", t0, "daemon_stopped", "", "fault", True)
        self.daemon.stop()  # its exit awaited
        t0 = time.time()
        self.daemon.start()
        timed("daemon started: cleared (its own start included)", t0, "daemon_stopped", "", "fault", False)
        return took

"""The pit board in headless Chromium, fed by a real table through the real floor (docs/floor.md, pit board).

A Baccarat daemon deals; its uplink and a recorder carry its rows through a real nats-server into a real
PostgreSQL; ``croupier floor serve`` (its own process) starts from PostgreSQL and follows JetStream.
The page shows the table's tile, a live row moves it on, an alert published on ``croupier.alerts.<t>``
appears on it, the tile opens the table's recall (equal to ``croupier floor recall``) and alerts, and an
alert is acknowledged: refused without a token, done with one, the same answer when repeated.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from display_support import CHROMIUM, CHROMIUM_ARGS, OUTPUT
from floor_support import Proc, nats_server, postgres, recorded_row, wait_for  # noqa: F401 (fixtures)
from test_daemon_support import baccarat_play, config_for
from test_zmq_snapshot import send_all

from controller.cli import main as cli_main
from controller.daemon.client import CommandClient, local_key
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.floor import alerts
from controller.floor.local import NatsServer
from controller.inputs import CloseBetting, OpenBetting
from pitboard import operators
from tests.server_fixtures import FloorDatabase

if not CHROMIUM.exists():  # loud on purpose, as the display's browser tests
    pytest.skip(f"NO BROWSER: {CHROMIUM} is missing, so the pit board is NOT tested (make test installs it)",
                allow_module_level=True)

from playwright.sync_api import Page, sync_playwright  # noqa: E402

pytestmark = pytest.mark.timeout(120)
SIZES = {"1920x1080": (1920, 1080), "1366x768": (1366, 768)}

#: What is clipped on the board at the current size, as sentences (empty: nothing): the header, each
#: tile and the table's panel inside the screen; everything in them inside them (a scrolling panel:
#: across only); a text wider or taller than its own clipping box; two tiles over each other.
LAYOUT_JS = """() => {
  const out = [], eps = 1, shown = e => { const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 ? r : null; };
  const name = e => e.id ? '#' + e.id
    : `${e.tagName.toLowerCase()}.${e.className} "${e.textContent.slice(0, 20)}"`;
  const panels = [document.getElementById('top'), document.getElementById('detail'),
                  ...document.querySelectorAll('.tile')].filter(shown);
  for (const p of panels) {
    const pr = shown(p), scrolls = getComputedStyle(p).overflowY !== 'visible' && p.id === 'detail';
    if (pr.left < -eps || pr.top < -eps || pr.right > innerWidth + eps || pr.bottom > innerHeight + eps)
      out.push(`${name(p)} leaves the screen`);
    for (const e of p.querySelectorAll('*')) {
      if (e.closest('svg') && e.tagName !== 'svg') continue;
      const r = shown(e);
      if (!r) continue;
      if (r.left < pr.left - eps || r.right > pr.right + eps
          || (!scrolls && (r.top < pr.top - eps || r.bottom > pr.bottom + eps)))
        out.push(`${name(e)} overflows ${name(p)}`);
      const text = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
      if (text && getComputedStyle(e).overflow !== 'visible'
          && (e.scrollWidth > e.clientWidth + eps || e.scrollHeight > e.clientHeight + eps))
        out.push(`${name(e)} is cut by its own box`);
    }
  }
  const tiles = [...document.querySelectorAll('.tile')].map(shown);
  for (let i = 0; i < tiles.length; i++) for (let j = i + 1; j < tiles.length; j++) {
    const a = tiles[i], b = tiles[j];
    if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > eps
        && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > eps)
      out.push(`tiles ${i} and ${j} overlap`);
  }
  return out;
}"""


class Nats:
    """A NATS client on its own loop and thread: publish from the test, and every alert heard."""

    def __init__(self, url: str) -> None:
        import nats

        self.heard: list[dict[str, Any]] = []
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

        async def start() -> Any:
            nc = await nats.connect(url)

            async def alert(msg: Any) -> None:
                self.heard.append(json.loads(msg.data))

            await nc.subscribe(alerts.SUBJECTS, cb=alert)
            return nc

        self.nc = self.run(start())

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def publish(self, subject: str, body: dict[str, Any]) -> None:
        self.run(self.nc.publish(subject, json.dumps(body).encode()))
        self.run(self.nc.flush())

    def close(self) -> None:
        self.run(self.nc.close())
        self.loop.call_soon_threadsafe(self.loop.stop)


def ack(url: str, alert_id: int, token: str | None) -> tuple[int, dict[str, Any] | str]:
    """POST an acknowledgement as a program would: (status, the answer)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(f"{url}alerts/{alert_id}/ack", method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def layout(page: Page, name: str) -> dict[str, list[str]]:
    """Layout problems at each size, with a screenshot of each in tests/output/ (docs/img/ has copies)."""
    problems = {}
    OUTPUT.mkdir(parents=True, exist_ok=True)
    for size, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
        problems[size] = page.evaluate(LAYOUT_JS)
        page.screenshot(path=str(OUTPUT / f"{name}_{size}.png"))
    return {size: found for size, found in problems.items() if found}


def until_row(page: Page, row: int) -> None:
    """Until the table's tile has folded every row up to ``row``."""
    page.wait_for_function(
        f"document.querySelector('.tile[data-table=pit7]')?.dataset.lastRow === '{row}'", timeout=15_000)


@pytest.fixture
def floor(tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase) -> Iterator[dict[str, Any]]:  # noqa: F811
    """A Baccarat table dealing through its uplink and a recorder into the floor, and the board on it."""
    config = config_for(tmp_path, name="pit7")
    inputs, _ = baccarat_play(14, seed=27)
    opened = max(i for i, inp in enumerate(inputs) if isinstance(inp, OpenBetting))
    closed = next(i for i in range(opened, len(inputs)) if isinstance(inputs[i], CloseBetting))
    first, live = inputs[:opened - 8], inputs[opened - 8:closed]  # the live part ends with wagers in play
    token_file = tmp_path / "operators.json"
    nats, dsn = ("--nats", nats_server.url), ("--db", postgres.dsn)
    procs = [Proc(tmp_path / "uplink.log", "uplink", str(config.path), *nats, "--heartbeat", "1"),
             Proc(tmp_path / "recorder.log", "floor", "record", *nats, *dsn)]
    board = Proc(tmp_path / "board.log", "floor", "serve", "--listen", "127.0.0.1:0", *nats, *dsn,
                 "--operators", str(token_file))
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
        try:
            send_all(client, first)
            for p in (*procs, board):  # at once: the board may start before the rows are recorded
                p.start()
            wait_for("the first rows recorded", lambda: recorded_row(postgres.dsn, "pit7") == len(first), 60,
                     *procs)
            wait_for("the board listening", lambda: board.said("pit board: http"), 30, board)
            url = board.text().split("pit board: ", 1)[1].split()[0]
            yield {"url": url, "dsn": postgres.dsn, "nats": nats_server.url, "rows": len(first),
                   "live": lambda: send_all(client, live), "all_rows": len(first) + len(live),
                   "token": operators.add(token_file, "Ann"), "board": board}
        finally:
            client.close()
            for p in (board, *procs):
                p.stop()


def test_the_board_shows_a_live_table_its_alert_its_recall_and_an_authenticated_acknowledgement(
        floor: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    url, dsn = floor["url"], floor["dsn"]
    bus = Nats(floor["nats"])
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(url)
            tile = page.locator('.tile[data-table="pit7"]')
            # From PostgreSQL: the rows the table dealt before the board subscribed (a heartbeat says the
            # stream holds more than the board has, so it reloads the table once they are recorded).
            until_row(page, floor["rows"])
            assert "baccarat" in tile.inner_text()
            floor["live"]()  # the table deals on: rows reach the board from JetStream
            until_row(page, floor["all_rows"])
            # A tile that heard a row past missing ones is whole once PostgreSQL holds them (reloaded every
            # second until then): the road's cells may come a tick after the last row.
            page.wait_for_function(
                "document.querySelectorAll('.tile[data-table=pit7] svg.road [data-cell]').length > 0",
                timeout=15_000)
            assert "betting open" in tile.inner_text() and tile.locator("svg.road [data-cell]").count() > 0
            with psycopg.connect(dsn) as conn:
                raised = alerts.raise_alert(conn, table_id="pit7", kind="device_offline", severity="critical",
                                            detail="shoe lid: open", key="shoe lid")
            assert raised is not None
            bus.publish(alerts.subject("pit7"), raised.message())
            tile.locator(f'.badge[data-alert="{raised.id}"]').wait_for(timeout=5_000)
            assert "fault" in (tile.get_attribute("data-states") or "")

            # The tile follows JetStream; the recall (the board's and the command's) reads PostgreSQL, which
            # the recorders may still be filling: both read once every row is recorded (a CI run read the
            # board's before the last round was, the command's after).
            wait_for("every row recorded", lambda: recorded_row(dsn, "pit7") == floor["all_rows"], 30)
            tile.click()  # the table: recall and alerts
            page.locator("#recall pre").nth(9).wait_for(timeout=10_000)
            assert cli_main(["floor", "recall", "pit7", "--last", "10", "--db", dsn]) == 0
            recalled = capsys.readouterr().out.strip()
            shown = page.locator("#recall pre").all_inner_texts()
            assert "\n".join(reversed(shown)).strip() == recalled  # newest first on the board
            assert layout(page, "pitboard") == {}

            button = page.locator(f'#open-alerts li[data-alert="{raised.id}"] button.ack')
            button.click()  # no token: refused, nothing changes
            page.wait_for_function("document.getElementById('ack-error').textContent.startsWith('401')")
            assert ack(url, raised.id, "not-a-token")[0] == 401
            with psycopg.connect(dsn) as conn:
                assert alerts.open_alerts(conn, "pit7")[0].acked_at is None
            page.fill("#token", floor["token"])
            button.click()
            done_li = f'#open-alerts li[data-alert="{raised.id}"]:has-text("acknowledged by Ann")'
            page.locator(done_li).wait_for(timeout=5_000)
            page.click("#reports")  # the board's Reports: `croupier floor report`'s page, today so far
            page.wait_for_url("**/report")
            body = page.locator("body").inner_text()
            assert "Report by table" in body and "pit7" in body, body
            assert errors == []
        finally:
            browser.close()
    with psycopg.connect(dsn) as conn:
        done = alerts.open_alerts(conn, "pit7")[0]
    assert done.acked_by == "Ann" and done.acked_at is not None
    status, again = ack(url, raised.id, floor["token"])  # a resend: the original acknowledgement
    assert status == 200 and again == done.message()
    published = {"alert": raised.id, "state": "acknowledged", "acked_by": "Ann"}
    wait_for("the acknowledgement published", lambda: any(
        published.items() <= m.items() for m in bus.heard), 5, floor["board"])
    bus.close()
    print(f"screenshots: {OUTPUT}/pitboard_*.png", file=sys.stderr)

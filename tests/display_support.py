"""A live table for the display's browser tests: the real daemon on a simulated shoe, the real display.

Everything is a real part: ``croupier run`` (a subprocess) reads a
:class:`SimulatedShoe` over a pty, the demo's simulated dealer and players
drive it through the command socket, and ``croupier display`` (a subprocess)
follows it over ZeroMQ on ipc:// endpoints in a temp dir and serves the page
on a free 127.0.0.1 port. Headless Chromium is Debian's, driven by Playwright.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import yaml

from controller.daemon.client import CommandClient, DaemonUnavailable, local_key, request_snapshot
from controller.daemon.config import FIRMWARE_CONFIGS, load_table
from controller.tools.demo_dealer import Dealer
from drivers.shoe.sim import SimulatedShoe

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Screenshots for people to look at (gitignored); docs/img/ has its own: `make display-screenshots`.
OUTPUT = ROOT / "tests" / "output"

#: Reads every road drawn in the page as the cells croupier roads --json prints.
READ_ROADS_JS = """() => Object.fromEntries(
  [...document.querySelectorAll('svg.road')].map(s => [s.dataset.road,
   [...s.querySelectorAll('[data-cell]')].map(g => ({row: +g.dataset.row, col: +g.dataset.col,
   streak: g.dataset.streak === '' ? null : +g.dataset.streak, colour: g.dataset.colour,
   ties: +g.dataset.ties, player_pair: g.dataset.playerPair === 'true',
   banker_pair: g.dataset.bankerPair === 'true'}))]))"""

#: What is wrong with the page's layout at the current size, as sentences (empty: nothing):
#: an element outside its panel (or a panel outside the screen), a text cut by its own clipping box, and
#: two boxes that overlap (texts, cards, roads; an element and one inside it do not count).
#: A road counts as its scrolling box (its SVG is as long as the shoe, older columns scrolled off).
#: Finite animations (a card dealt) end first.
LAYOUT_PROBLEMS_JS = """async () => {
  await Promise.all(document.getAnimations()  // a card being dealt is measured where it lands
    .filter(a => a.effect.getTiming().iterations !== Infinity).map(a => a.finished.catch(() => null)));
  const out = [], eps = 1;
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0
    && getComputedStyle(e).visibility !== 'hidden' ? r : null; };
  const name = e => e.id ? '#' + e.id : e.tagName.toLowerCase() + '.'
    + String(e.className.baseVal ?? e.className).trim().replace(/ +/g, '.')
    + (e.textContent ? ` "${e.textContent.trim().slice(0, 24)}"` : '');
  const inside = (r, o) => r.left >= o.left - eps && r.top >= o.top - eps && r.right <= o.right + eps
    && r.bottom <= o.bottom + eps;
  const screen = {left: 0, top: 0, right: innerWidth, bottom: innerHeight};
  const panels = [document.getElementById('top'), ...document.querySelectorAll('.panel, .banner')];
  const boxes = [];
  for (const panel of panels) {
    const pr = shown(panel);
    if (!pr) continue;
    if (!inside(pr, screen)) out.push(`${name(panel)} leaves the screen`);
    for (const e of panel.querySelectorAll('*')) {
      if (e.closest('svg')) continue;
      const r = shown(e);
      if (!r) continue;
      if (!inside(r, pr)) out.push(`${name(e)} overflows ${name(panel)}`);
      const text = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
      const clips = getComputedStyle(e).overflow !== 'visible';
      if (text && clips && (e.scrollWidth > e.clientWidth + eps || e.scrollHeight > e.clientHeight + eps))
        out.push(`${name(e)} is cut by its own box`);
      if (text || e.matches('.card, .roadscroll, .askmark')) boxes.push([e, r]);
    }
  }
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, ra] = boxes[i], [b, rb] = boxes[j];
    if (a.contains(b) || b.contains(a)) continue;
    const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
    const h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
    if (w > eps && h > eps) out.push(`${name(a)} and ${name(b)} overlap`);
  }
  return out;
}"""
#: The smallest things on the board at 1920x1080, in mm on a 55-inch 16:9 screen (1218 mm wide):
#: each HTML text's font size, each road text's rendered font size, each pair dot's diameter; and
#: how much of the board panel's height the roads fill; the roads whose newest column is out of sight.
MEASURE_JS = """() => {
  const mm = 55 * 25.4 * 16 / Math.hypot(16, 9) / innerWidth;
  const texts = [], marks = [];
  for (const e of document.querySelectorAll('#main *, #top *')) {
    if (!e.getClientRects().length) continue;
    const own = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    const size = parseFloat(getComputedStyle(e).fontSize) * (e.getScreenCTM ? e.getScreenCTM().a : 1);
    texts.push([e.textContent.trim().slice(0, 20), +(size * mm).toFixed(1)]);
  }
  for (const dot of document.querySelectorAll('.pair-dot'))
    marks.push(+(dot.getBoundingClientRect().width * mm).toFixed(1));
  const board = document.getElementById('board'), pad = parseFloat(getComputedStyle(board).paddingTop) * 2;
  const roads = [...board.querySelectorAll('.roadbox')].map(b => b.getBoundingClientRect());
  const filled = (Math.max(...roads.map(r => r.bottom)) - Math.min(...roads.map(r => r.top)))
    / (board.clientHeight - pad);
  const hidden = [...board.querySelectorAll('.roadscroll')].filter(box => {
    const cells = box.querySelectorAll('[data-cell]'), b = box.getBoundingClientRect();
    const newest = [...cells].filter(g => +g.dataset.col === +box.firstElementChild.dataset.newest);
    return newest.some(g => {
      const r = g.getBoundingClientRect();
      return r.left < b.left || r.right > b.right;
    });
  }).map(box => box.firstElementChild.dataset.road);
  return {smallest_text: texts.sort((a, b) => a[1] - b[1])[0], smallest_pair_dot: Math.min(...marks),
          roads_fill: +filled.toFixed(3), newest_hidden: hidden};
}"""
#: The sizes the page is laid out for (docs/display.md), width x height in CSS pixels.
SCREENS = {
    "1920x1080": (1920, 1080),
    "3840x2160": (3840, 2160),
    "1366x768": (1366, 768),
    "1080x1920": (1080, 1920),
}


def table_file(tmp: Path, game: str, seed: int, **display: Any) -> Path:
    """The game's demo table, rewired for a test: ipc endpoints and state in ``tmp``, no panels."""
    raw = yaml.safe_load((FIRMWARE_CONFIGS / "tables" / f"{game}_sim.yaml").read_text(encoding="utf-8"))
    for key in ("panels", "gpio"):
        raw.pop(key, None)
    raw["shoe"] = {"profile": str(FIRMWARE_CONFIGS / "shoes" / "sim_v1.yaml")}
    raw["zeromq"] = {k: f"ipc://{tmp}/{k}" for k in ("pub", "snapshot", "command")}
    raw["state_dir"] = str(tmp / "state")
    raw["simulation"].update(seed=seed, card_interval=0.0, betting_time=0.0)
    raw["display"] = {**raw.get("display", {}), "stale_after": 1.0, **display}
    path = tmp / f"{game}.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


class LiveTable:
    """Daemon + simulated shoe + display for one table file; :meth:`close` stops all of it."""

    def __init__(self, tmp: Path, game: str, seed: int, **display: Any) -> None:
        self.tmp = tmp
        self.path = table_file(tmp, game, seed, **display)
        self.config = load_table(self.path)
        self.seed = seed
        self.shoe = SimulatedShoe("v1", seed=seed, decks=self.config.new_game().decks)
        self.daemon: subprocess.Popen[bytes] | None = None
        self.display: subprocess.Popen[str] | None = None
        self.url = ""
        z = self.config.spec.zeromq
        self.endpoints = {"pub": z.pub, "snapshot": z.snapshot, "command": z.command}
        self.key = local_key(self.config)
        self.client = CommandClient(z.command, timeout=10.0, key=self.key)
        self.dealer: Dealer | None = None
        try:
            self.start_daemon()
            self.start_display()
        except BaseException:
            self.close()
            raise

    def start_daemon(self) -> None:
        port = self.shoe.open_pty(self.tmp / "shoe")
        log = open(self.tmp / "daemon.log", "ab")  # noqa: SIM115 (the process keeps it)
        self.daemon = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "controller.cli",
                "run",
                str(self.path),
                "--shoe-port",
                port,
                "--log-level",
                "WARNING",
            ],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while True:
            if self.daemon.poll() is not None:
                raise RuntimeError((self.tmp / "daemon.log").read_text())
            with contextlib.suppress(DaemonUnavailable):
                probe = CommandClient(self.endpoints["command"], timeout=0.5, key=self.key)
                try:
                    if (probe.call("status").get("shoe_device") or {}).get("connected"):
                        return
                finally:
                    probe.close()
            if time.monotonic() > deadline:
                raise TimeoutError("the daemon did not come up within 30 s")
            time.sleep(0.1)

    def start_display(self, listen: str = "127.0.0.1:0") -> None:
        self.display = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "display", str(self.path), "--listen", listen],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert self.display.stdout is not None
        line = self.display.stdout.readline()
        if not line.startswith("display: http"):
            raise RuntimeError(f"croupier display said {line!r}{self.display.stdout.read()}")
        self.url = line.split()[1]

    def stop_display(self) -> None:
        if self.display is not None and self.display.poll() is None:
            self.display.terminate()
            self.display.wait(10)

    def play(self, rounds: int, delay: float = 0.0) -> None:
        """Let the simulated dealer and players play ``rounds`` rounds (credits and shoe set up once);
        ``delay`` seconds between cards (a real shoe deals a card every second or so)."""
        sim = self.config.spec.simulation
        assert sim is not None
        first = self.dealer is None
        self.dealer = Dealer(self.config, sim, self.shoe, self.client, self.seed, rounds, delay)
        if first:
            self.dealer.setup()
        thread = threading.Thread(target=self._rounds, args=(self.dealer, rounds), daemon=True)
        thread.start()
        thread.join(240)
        if self.dealer.error is not None:
            raise self.dealer.error
        assert self.dealer.played == rounds

    @staticmethod
    def _rounds(dealer: Dealer, rounds: int) -> None:
        try:
            for _ in range(rounds):
                dealer.play_round()
                dealer.played += 1
        except BaseException as exc:
            dealer.error = exc

    def seq(self) -> int:
        return int(self.client.call("ping")["seq"])

    def roads(self) -> dict[str, Any]:
        """``croupier roads STATE_DIR --json --shoe -1``, the command a person would run."""
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "controller.cli",
                "roads",
                str(self.config.state_dir),
                "--json",
                "--shoe",
                "-1",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        shoe: dict[str, Any] = json.loads(out.stdout)["shoes"][0]
        return shoe

    def set_language(self, code: str) -> None:
        """Restart only the display, with the table file's ``display.language`` set to ``code``."""
        raw = yaml.safe_load(self.path.read_text(encoding="utf-8"))
        raw["display"]["language"] = code
        self.path.write_text(yaml.safe_dump(raw), encoding="utf-8")
        port = self.url.rstrip("/").rsplit(":", 1)[1]
        self.stop_display()
        self.start_display(f"127.0.0.1:{port}")  # the same address: open pages reconnect by themselves

    def naturals(self) -> int:
        """Naturals in the current shoe, from the daemon's snapshot (its result records)."""
        reply = request_snapshot(self.endpoints["snapshot"])  # the snapshot port has no keys
        return sum(bool(r["result"].get("natural")) for r in reply["state"]["shoe_results"])

    def close(self) -> None:
        if self.dealer is not None:
            self.dealer.stop.set()
        self.client.close()
        for proc in (self.display, self.daemon):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self.display is not None and self.display.stdout is not None:
            self.display.stdout.close()
        self.shoe.close()

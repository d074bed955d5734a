"""A camera table for the crash tests (no tests here): the real ``croupier run``, the simulated camera's
window, and a simulated dealer who deals Baccarat rounds, keeps the daemon up and answers its tilts.

The dealer knows the truth the table cannot: which physical card lies in the window and whether the
table has already taken it. It places a card only when one is due (and, the table running, once its
camera has read the window empty), takes twins from the shoe, and answers a ``repeat_card``
tilt with ``clear_tilt`` (the card already taken) or ``take`` (a new card), as docs/vision.md says.
The daemon may be killed at any instant; the dealer restarts it and resends each command with its
ref, as a dealer's console would.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from test_daemon_crash import wait_ready
from test_daemon_support import write_table

from controller.cards import Card
from controller.daemon.client import CommandClient, DaemonUnavailable, local_key
from controller.daemon.config import FIRMWARE_CONFIGS, load_table
from controller.daemon.journal import JOURNAL_NAME
from controller.inputs import input_from_dict
from controller.table import Table
from vision.camera_sim import SimulatedCamera, wait_frames_read

ROOT = Path(__file__).resolve().parents[1]
DECK = str(FIRMWARE_CONFIGS / "decks" / "sim_classic.yaml")
FPS = 30
STABLE = 2
#: Each card's photograph, painted once for the whole run (vision.camera_sim).
PHOTOS: dict[Card | None, bytes] = {}


class CameraTable:
    """The daemon as a subprocess on a camera table, its window, and the simulated dealer's record."""

    def __init__(self, tmp: Path, seed: int) -> None:
        camera = {"deck": DECK, "window": "window.png", "fps": FPS, "stable_frames": STABLE,
                  "offline_after": 0.6}
        self.table = write_table(tmp, name="cam", camera=camera)
        self.config = config = load_table(self.table)
        assert config.camera is not None
        window = config.camera.window_path(config.state_dir)
        assert window is not None
        window.parent.mkdir(parents=True, exist_ok=True)
        self.camera = SimulatedCamera(window, decks=8, seed=seed, fps=FPS, stable_frames=STABLE,
                                      photos=PHOTOS)
        self.journal = config.state_dir / JOURNAL_NAME
        self.key = local_key(config)
        #: Every physical card the dealer put in the window, in order.
        self.placed: list[str] = []
        #: The journal's last row when the card now in the window was placed.
        self.placed_row = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.client: CommandClient | None = None
        self.starts = 0
        self.refs = 0
        #: The repeat_card tilts the dealer answered: the card already taken, and a new card.
        self.same = 0
        self.new = 0

    # --- the daemon --------------------------------------------------------------------------------

    def start(self, fault: str = "") -> subprocess.Popen[bytes]:
        assert self.proc is None or self.proc.poll() is not None, "a daemon is still running"
        env = {**os.environ, "CROUPIER_FAULT": fault}
        self.proc = proc = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "run", str(self.table), "--log-level", "ERROR"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.starts += 1
        endpoint = self.config.spec.zeromq.command
        wait_ready(proc, endpoint, self.key)
        # A dealer looks at the table before dealing on: the camera has read what lies in the window
        # (a frame is counted once the one before it is fully handled, its card journaled).
        client = CommandClient(endpoint, timeout=2, key=self.key)
        try:
            while proc.poll() is None:
                with contextlib.suppress(DaemonUnavailable):
                    if (client.call("status").get("camera") or {}).get("frames", 0) >= STABLE + 2:
                        break
                time.sleep(0.01)
        finally:
            client.close()
        return proc

    def alive(self) -> None:
        """Restart the daemon if it is not running (killed, or stopped by its fault point)."""
        if self.proc is not None and self.proc.poll() is None:
            return
        if self.client is not None:
            self.client.close()
            self.client = None
        self.start()

    def stop(self) -> None:
        """A clean stop (SIGTERM), waited for."""
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            assert self.proc.wait(30) == 0
        self.proc = None

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def call(self, cmd: str, **fields: Any) -> dict[str, Any]:
        """A command with a ref, resent (same ref) to a restarted daemon until it is answered."""
        self.refs += 1
        request = json.dumps({"cmd": cmd, "ref": f"r{self.refs}", **fields}).encode()
        while True:
            self.alive()
            if self.client is None:
                # A short wait: a daemon killed under a request is noticed (and restarted) soon; a slow
                # answer is only asked again, with the same ref.
                self.client = CommandClient(self.config.spec.zeromq.command, timeout=0.7, key=self.key)
            try:
                return self.client.send_raw(request)
            except DaemonUnavailable:
                self.client.close()
                self.client = None

    def status(self) -> dict[str, Any]:
        while True:
            reply = self.call("status")
            if reply.get("ok", True) and "phase" in reply:
                return reply

    # --- the journal, read as an auditor would --------------------------------------------------

    def inputs(self, after: int = 0) -> list[tuple[int, dict[str, Any]]]:
        if not self.journal.exists():
            return []
        conn = sqlite3.connect(f"file:{self.journal}?mode=ro", uri=True)
        try:
            rows = conn.execute("SELECT id, input FROM inputs WHERE id > ? ORDER BY id", (after,)).fetchall()
        finally:
            conn.close()
        return [(row, json.loads(text)) for row, text in rows]

    def last_row(self) -> int:
        rows = self.inputs()
        return rows[-1][0] if rows else 0

    def window_taken(self) -> bool:
        """Whether the table has taken the card now in the window: a card row (not a repeat) or a take
        since it was placed (no other tilt holds cards in these sessions)."""
        return any((d["input"] == "card" and not d.get("repeat")) or d["input"] == "take_held"
                   for _, d in self.inputs(self.placed_row))

    def replay(self) -> tuple[Table, list[str]]:
        """The journal replayed through a fresh table, and every card it dealt (or burned), in order."""
        table = Table(self.config.new_game(), self.config.limits)
        out = []
        for _, data in self.inputs():
            for event in table.apply(input_from_dict(data)):
                d = event.to_dict()
                if d["event"] in ("card_dealt", "card_burned"):
                    out.append(d["card"])
        return table, out

    def dealt(self) -> list[str]:
        return self.replay()[1]

    def swap(self) -> bool:
        """While the daemon is down, the next card is an identical one from another deck: the card in
        the window (dealt) makes way for its twin, with no empty window between. Only if the journal says
        a card is due and the window's card was taken; True if swapped."""
        assert self.proc is None or self.proc.poll() is not None, "the daemon is running"
        shown = self.camera.shown
        if shown is None or not self.window_taken() or self.replay()[0].due() is None:
            return False
        if not self.take_twin(shown):
            return False
        self.placed_row = self.last_row()
        self.camera.show(shown)
        self.placed.append(shown.code)
        return True

    def take_twin(self, card: Card) -> bool:
        """Take one of ``card``'s copies (another deck's) out of the shoe, for the dealer to put in; False if
        none is left. Why: the table counts every card against the shoe's decks, so a ninth copy in an
        8-deck shoe is rightly an ``impossible_card`` tilt, not a twin."""
        if card not in self.camera.shoe.cards:
            return False
        self.camera.shoe.cards.remove(card)
        return True

    def repeat_rows(self) -> int:
        return sum(1 for _, d in self.inputs() if d["input"] == "card" and d.get("repeat"))

    # --- the dealer --------------------------------------------------------------------------------

    def resolve(self, status: dict[str, Any]) -> bool:
        """Answer a repeat_card tilt (the only tilt these sessions raise); True if there was one."""
        tilt = status["tilt"]
        if tilt is None:
            return False
        assert tilt["reason"] == "repeat_card", tilt
        shown = self.camera.shown
        assert shown is not None and tilt["card"] == shown.code, (tilt, self.placed[-3:])  # the window's card
        if self.window_taken():
            self.same += 1
            reply = self.call("clear_tilt")
        else:
            self.new += 1
            reply = self.call("take")
        assert reply["ok"] or reply.get("duplicate"), reply
        return True

    def window_seen_empty(self) -> None:
        """Before the next card goes in, the dealer waits until the running table's camera has read the
        window empty K times (its status counts the frames read), as a dealer who slides one card out
        watches the table before sliding the next in. Why: a camera that missed the empty window (its
        daemon starved of CPU) sees an identical next card as the card still lying there and rightly
        never reports it (vision.stable). A daemon that is down (struck) is not waited for: its restart
        judges the window as it finds it."""
        proc = self.proc
        client = CommandClient(self.config.spec.zeromq.command, timeout=0.5, key=self.key)

        def frames() -> int | None:
            try:
                return int((client.call("status").get("camera") or {}).get("frames", 0))
            except DaemonUnavailable:
                return None

        try:
            read = wait_frames_read(frames, STABLE + 1, timeout=60,
                                    stop=lambda: proc is None or proc.poll() is not None)
            assert read or proc is None or proc.poll() is not None, "the camera never read the empty window"
        finally:
            client.close()

    def deal_card(self, timeout: float = 60.0) -> None:
        """Put the next card in the window (after the camera saw it empty), then wait until the table
        took it."""
        self.placed_row = self.last_row()
        card = self.camera.deal(self.window_seen_empty)
        self.placed.append(card.code)
        deadline = time.monotonic() + timeout
        while not self.window_taken():
            assert time.monotonic() < deadline, f"{card.code} never taken ({self.placed[-5:]})"
            self.resolve(self.status())
            time.sleep(0.02)

    def command(self, cmd: str, done: Callable[[dict[str, Any]], bool], **fields: Any) -> None:
        """A dealer's command, until the table shows it ``done``: a restart's tilt may refuse it (answered,
        then sent again), and a resend after a kill is only ``duplicate``, so the table's state says."""
        while not done(status := self.status()):
            if self.resolve(status):
                continue
            reply = self.call(cmd, **fields)
            assert reply["ok"] or "tilted" in reply.get("error", ""), reply

    def seat(self) -> None:
        self.command("credit_in", lambda s: bool(s["credits"]), seat=1, amount=10_000_000)

    def open_round(self) -> None:
        """Open betting, a bet on seat 1, close: the deal starts."""
        self.command("open", lambda s: s["phase"] != "idle")
        self.command("bet", lambda s: s["phase"] != "betting" or bool(s["wagers"]), seat=1, spot="banker",
                     amount=100)
        self.command("close", lambda s: s["phase"] != "betting")

    def play_round(self) -> None:
        if self.camera.remaining < 20:
            self.camera.shuffle()
            self.command("new_shoe", lambda s: s["shoe"]["dealt"] + s["shoe"]["burned"] == 0)
        self.open_round()
        while True:
            status = self.status()
            if self.resolve(status):
                continue
            if status["phase"] != "dealing":
                return
            if status["due"] is not None and "card" in status["due"]:
                self.deal_card()
            else:
                time.sleep(0.02)

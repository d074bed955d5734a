"""Every card the simulated shoe dealt is in the journal exactly once, in order, whatever kills the daemon.

The daemon is the real ``croupier run`` in a subprocess, the shoe the simulator on a real pty,
the journal a real SQLite file. The fault-injection points (controller/daemon/faults.py) end the
daemon at the worst instants: right after a card's commit and before its ACK, right after the
ACK, in the middle of the reader-to-loop hand-over (SIGKILL, and SIGTERM: a clean stop arriving
then), right after any journal commit, and a write failing with EIO. Then SIGKILLs and SIGTERMs at
random instants of a longer deal.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_daemon_crash import wait_ready
from test_daemon_support import write_table

from controller.cards import DECK
from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import load_table
from controller.daemon.journal import JOURNAL_NAME
from drivers.shoe.sim import SimulatedShoe

ROOT = Path(__file__).resolve().parents[1]


class Rig:
    """A simulated shoe on a pty link, a table file using it, and the daemon as a subprocess."""

    def __init__(self, tmp: Path, seed: int) -> None:
        self.shoe = SimulatedShoe("v1", seed=seed, ack_timeout=0.05)
        link = tmp / "shoe-pty"
        self.shoe.open_pty(link)
        profile = tmp / "shoe.yaml"
        profile.write_text(
            f"port: {link}\nprotocol: v1\nbaud: 115200\nheartbeat_timeout: 1.0\n"
            "reconnect: {initial: 0.02, max: 0.1}\n"
        )
        self.table = write_table(tmp, name="once", shoe=str(profile))
        config = load_table(self.table)
        self.command = config.spec.zeromq.command
        self.key = local_key(config)
        self.journal = tmp / "once-state" / JOURNAL_NAME
        self.dealt: list[str] = []
        self.proc: subprocess.Popen[bytes] | None = None

    def deal(self, n: int, rng: random.Random) -> None:
        for _ in range(n):
            card = rng.choice(DECK)
            self.shoe.deal(card)
            self.dealt.append(card.code)

    def start(self, fault: str = "") -> subprocess.Popen[bytes]:
        env = {**os.environ, "CROUPIER_FAULT": fault}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "run", str(self.table), "--log-level", "ERROR"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        return self.proc

    def journal_cards(self) -> list[str]:
        if not self.journal.exists():
            return []
        conn = sqlite3.connect(f"file:{self.journal}?mode=ro", uri=True)
        try:
            rows = conn.execute("SELECT input FROM inputs WHERE source = 'shoe' ORDER BY id").fetchall()
        except sqlite3.OperationalError:  # not created yet
            return []
        finally:
            conn.close()
        return [d["card"] for d in map(json.loads, (r[0] for r in rows)) if d["input"] == "card"]

    def wait_cards(self, n: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.journal_cards()) < n:
            assert self.proc is None or self.proc.poll() is None, self.stderr()
            assert time.monotonic() < deadline, f"only {len(self.journal_cards())} of {n} cards journaled"
            time.sleep(0.02)

    def stderr(self) -> str:
        assert self.proc is not None and self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace") if self.proc.poll() is not None else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(30)
        self.proc = None

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.shoe.close()


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    r = Rig(tmp_path, seed=3)
    yield r
    r.close()


FAULTS = [
    "shoe_committed:{k}:kill",  # the card is committed, its ACK never sent
    "shoe_acked:{k}:kill",  # the ACK went out, nothing after it ran
    "shoe_handover:{k}:kill",  # the card is queued on the loop, not journaled yet
    "shoe_handover:{k}:term",  # a clean stop arriving in the middle of the hand-over
    "journal_commit:{k}:kill",  # after any commit (cards, device statuses, the shoe cursor)
    "journal_write:{k}:eio",  # the storage fails in the middle of a write: a journal fault
]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("fault", FAULTS)
def test_the_worst_instants_lose_or_double_no_card(rig: Rig, fault: str) -> None:
    rng = random.Random(fault)
    rig.deal(12, rng)
    for k in (1, 2, 4):  # the k-th time the point is passed (HELLO and heartbeats count too)
        proc = rig.start(fault.format(k=k))
        deadline = time.monotonic() + 30
        if fault.endswith(":eio"):  # the daemon stays up, halted: stop it as the operator would
            wait_ready(proc, rig.command, rig.key)
            client = CommandClient(rig.command, timeout=5, key=rig.key)
            try:
                while (status := client.call("status"))["journal_fault"] is None:
                    assert time.monotonic() < deadline, "no journal fault"
                    time.sleep(0.05)
                assert "Input/output error (injected at journal_write)" in status["journal_fault"]["error"]
                refused = client.call("credit_in", seat=1, amount=100)
                assert not refused["ok"] and refused["error"].startswith("journal fault: ")
                assert "internal error" not in refused["error"]
            finally:
                client.close()
            rig.stop()
            rig.deal(3, rng)
            continue
        while proc.poll() is None:
            assert time.monotonic() < deadline, f"{fault} with k={k} never fired"
            time.sleep(0.01)
        expected = 0 if fault.endswith(":term") else -signal.SIGKILL
        assert proc.returncode == expected, rig.stderr()
        rig.deal(3, rng)
    rig.start()
    rig.wait_cards(len(rig.dealt))
    time.sleep(0.5)  # a card doubled by a late resend would show up now
    rig.stop()
    assert rig.journal_cards() == rig.dealt


@pytest.mark.timeout(600)
def test_dozens_of_kills_and_stops_at_random_instants_keep_every_card_exactly_once(rig: Rig) -> None:
    rng = random.Random(20261130)
    rig.deal(60, rng)
    kills = terms = 0
    for _ in range(36):
        proc = rig.start()
        if rng.random() < 0.3:  # a clean stop: once it serves (before, SIGTERM is the default kill)
            wait_ready(proc, rig.command, rig.key)
            time.sleep(rng.random() * 0.3)
            proc.send_signal(signal.SIGTERM)
            terms += 1
            assert proc.wait(30) == 0, rig.stderr()
        else:  # at any instant: python's start-up, the replay, the deal
            time.sleep(0.2 + rng.random() * 0.8)
            proc.kill()
            kills += 1
            proc.wait()
        rig.deal(rng.randrange(0, 8), rng)
    rig.start()
    rig.wait_cards(len(rig.dealt), timeout=120)
    time.sleep(0.5)
    rig.stop()
    assert kills >= 20 and terms >= 8
    cards = rig.journal_cards()
    assert len(cards) == len(rig.dealt) and cards == rig.dealt

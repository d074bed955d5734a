"""``croupier demo``: a whole simulated table on loopback, in one command.

It starts the real daemon (``croupier run``, a subprocess with a temporary
state dir), a simulated shoe on a pty that the daemon's shoe reader opens,
and a simulated dealer with simulated players (from the table file's
``simulation`` section) who open and close betting, place wagers and take
decisions through the command socket, dealing each due card out of the
shoe on a timer; ``watch`` runs in the foreground. Any registered game has
a ``<game>_sim.yaml`` table file; Baccarat is the default. Ctrl-C stops
everything: the players, the daemon (SIGTERM, then SIGKILL if it hangs),
the shoe, and the temporary files; nothing is left running.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from controller.daemon.client import CommandClient, DaemonUnavailable, Subscriber
from controller.daemon.config import FIRMWARE_CONFIGS, SimulationSpec, TableConfig, TableFileError, load_table
from controller.tools.watch import watch
from drivers.shoe.sim import SimError, SimulatedShoe


class DemoError(RuntimeError):
    """The demo cannot go on (the daemon died, a command failed); the message says why."""


class Dealer:
    """The simulated dealer and players: drives rounds through the command socket and the shoe."""

    def __init__(
        self,
        config: TableConfig,
        sim: SimulationSpec,
        shoe: SimulatedShoe,
        client: CommandClient,
        seed: int,
        rounds: int,
        delay: float | None,
    ) -> None:
        self.config = config
        self.sim = sim
        self.shoe = shoe
        self.client = client
        self.rng = random.Random(seed)
        self.rounds = rounds
        self.card_interval = sim.card_interval if delay is None else delay
        self.betting_time = sim.betting_time if delay is None else delay * 2
        self.stop = threading.Event()
        self.done = threading.Event()
        self.played = 0
        self.error: BaseException | None = None

    def call(self, cmd: str, **fields: Any) -> dict[str, Any]:
        reply = self.client.call(cmd, **fields)
        if not reply.get("ok") and not reply.get("refused"):
            raise DemoError(f"{cmd} {fields}: {reply.get('error')}")
        return reply

    def run(self) -> None:
        try:
            self.setup()
            while not self.stop.is_set() and (not self.rounds or self.played < self.rounds):
                self.play_round()
                self.played += 1
                self.stop.wait(self.betting_time)
        except BaseException as exc:  # reported by the foreground
            self.error = exc
        finally:
            self.done.set()

    def setup(self) -> None:
        for player in self.sim.players:
            self.call("credit_in", seat=player.seat, amount=player.credits, by="cashier")
        if self.sim.dp is not None:
            self.call("set_dp", seat=self.sim.dp, by="dealer")
        self.call("new_shoe", by="dealer")

    def play_round(self) -> None:
        if self.shoe.remaining < self.sim.cut_card:
            self.shoe.shuffle()
            self.call("new_shoe", by="dealer")
        self.call("open", by="dealer")
        state = self.call("snapshot")["state"]
        dp = state["game_state"].get("dp_seat")
        for player in self.sim.players:
            if player.seat == dp or self.rng.random() < player.sit_out:
                continue
            pick = self.rng.randrange(max(len(a) for a in player.bets.values()))
            for spot, amounts in player.bets.items():
                self.call(
                    "bet",
                    seat=player.seat,
                    spot=spot,
                    amount=amounts[min(pick, len(amounts) - 1)],
                    by=f"seat {player.seat}",
                )
            for spot, chance in player.extras.items():
                if self.rng.random() < chance:
                    self.call(
                        "bet",
                        seat=player.seat,
                        spot=spot,
                        amount=self.config.limits.min_bet,
                        by=f"seat {player.seat}",
                    )
        self.stop.wait(self.betting_time)
        self.call("close", by="dealer")
        while not self.stop.is_set():
            status = self.call("status")
            if status["phase"] != "dealing":
                return
            if status["tilt"] is not None:
                self.call("void", by="dealer")
                continue
            due = status["due"] or {}
            if "card" in due:
                self.stop.wait(self.card_interval)
                try:
                    self.shoe.deal()
                except SimError:  # the shoe ran out mid-round: a real dealer would void and reshuffle
                    self.call("void", by="dealer")
                    continue
                self.wait_past(status["seq"])
            elif "decision" in due:
                self.stop.wait(self.card_interval)
                seat, actions = self.rng.choice(sorted(due["decision"].items()))
                self.call("decide", seat=int(seat), action=self.rng.choice(actions), by=f"seat {seat}")

    def wait_past(self, seq: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while self.call("ping")["seq"] <= seq:
            if time.monotonic() > deadline or self.stop.is_set():
                if self.stop.is_set():
                    return
                raise DemoError(f"the daemon did not take the dealt card within {timeout} s")
            time.sleep(0.01)


def table_file(args: argparse.Namespace) -> Path:
    if args.table:
        return Path(args.table)
    return FIRMWARE_CONFIGS / "tables" / f"{args.game}_sim.yaml"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--game", default="baccarat", help="play GAME's <game>_sim.yaml table (default baccarat)"
    )
    parser.add_argument("--table", help="a table file with a simulation section (overrides --game)")
    parser.add_argument("--rounds", type=int, default=0, help="stop after N rounds (default: until Ctrl-C)")
    parser.add_argument("--seed", type=int, default=None, help="seed for the shoe and the players")
    parser.add_argument(
        "--delay", type=float, default=None, help="seconds between cards (table file default)"
    )
    parser.add_argument(
        "--ports",
        type=int,
        default=None,
        help="use 127.0.0.1 ports N, N+1, N+2 (PUB, snapshot, command) instead of the file's",
    )
    parser.add_argument("--json", action="store_true", help="print the events as JSON lines")


def _start_daemon(
    args: argparse.Namespace, path: Path, work: Path, shoe_port: str, endpoints: dict[str, str]
) -> tuple[subprocess.Popen[bytes], Path]:
    log_path = work / "daemon.log"
    cmd = [
        sys.executable,
        "-m",
        "controller.cli",
        "run",
        str(path),
        "--state-dir",
        str(work / "state"),
        "--shoe-port",
        shoe_port,
        "--pub",
        endpoints["pub"],
        "--snapshot",
        endpoints["snapshot"],
        "--command",
        endpoints["command"],
        "--log-level",
        "WARNING",
    ]
    with open(log_path, "wb") as log:
        # A new session: Ctrl-C reaches the demo only, which then stops the daemon in order.
        proc = subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=Path(__file__).resolve().parents[2],
        )
    return proc, log_path


def _stop_daemon(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run(args: argparse.Namespace) -> int:
    path = table_file(args)
    try:
        config = load_table(path)
    except TableFileError as exc:
        print(f"croupier demo: {exc}", file=sys.stderr)
        return 2
    sim = config.spec.simulation
    if sim is None:
        print(f"croupier demo: {path} has no simulation section", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else sim.seed
    z = config.spec.zeromq
    endpoints = {"pub": z.pub, "snapshot": z.snapshot, "command": z.command}
    if args.ports:
        endpoints = {
            k: f"tcp://127.0.0.1:{args.ports + i}" for i, k in enumerate(("pub", "snapshot", "command"))
        }
    out = sys.stdout
    out.write(
        f"Croupier demo: {config.game_name} table {config.table_id!r} on simulated hardware "
        f"(seed {seed}); Ctrl-C stops it.\n"
    )
    work = Path(tempfile.mkdtemp(prefix="croupier-demo-"))
    shoe = SimulatedShoe("v1", seed=seed, decks=config.new_game().decks)
    proc: subprocess.Popen[bytes] | None = None
    client = CommandClient(endpoints["command"], timeout=10.0)
    sub: Subscriber | None = None
    dealer: Dealer | None = None
    code = 0
    try:
        shoe_port = shoe.open_pty(work / "shoe")
        proc, log_path = _start_daemon(args, path, work, shoe_port, endpoints)
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise DemoError(f"the daemon exited ({proc.returncode}):\n{log_path.read_text()}")
            with contextlib.suppress(DaemonUnavailable):
                if (
                    CommandClient(endpoints["command"], timeout=0.5).call("status").get("shoe_device") or {}
                ).get("connected"):
                    break
            if time.monotonic() > deadline:
                raise DemoError("the daemon did not come up within 30 s")
            time.sleep(0.1)
        sub = Subscriber(endpoints["pub"], endpoints["snapshot"], config.table_id)
        dealer = Dealer(config, sim, shoe, client, seed, args.rounds, args.delay)
        thread = threading.Thread(target=dealer.run, name="demo dealer", daemon=True)
        thread.start()
        while not dealer.done.is_set():
            watch(sub, out, args.json, idle=0.2)
            if proc.poll() is not None:
                raise DemoError(f"the daemon exited ({proc.returncode}):\n{log_path.read_text()}")
        watch(sub, out, args.json, idle=0.3)  # what the last round published
        if dealer.error is not None:
            raise DemoError(f"the simulated dealer stopped: {dealer.error}")
        status = client.call("status")
        credits = ", ".join(f"seat {s}: {c / 100:,.2f}" for s, c in status["credits"].items())
        out.write(f"{dealer.played} rounds played; credits {credits}\n")
    except KeyboardInterrupt:
        out.write("stopping...\n")
    except DemoError as exc:
        print(f"croupier demo: {exc}", file=sys.stderr)
        code = 1
    finally:
        if dealer is not None:
            dealer.stop.set()
        client.close()
        if sub is not None:
            sub.close()
        if proc is not None:
            _stop_daemon(proc)
        shoe.close()
        shutil.rmtree(work, ignore_errors=True)
    out.flush()
    return code

"""``croupier demo``: a whole simulated table on loopback, in one command.

It starts the real daemon (``croupier run``, a subprocess with a temporary
state dir), a simulated shoe on a pty that the daemon's shoe reader opens,
and a simulated dealer with simulated players (from the table file's
``simulation`` section). They act through the table's GPIO panels on mock
pins, over the daemon's panel control socket, exactly as people at a table
would: the dealer presses ``open_betting``/``close_betting``/``void``/
``new_shoe``, each player keys in an amount with the seat's chip keys
(``add_100``, ``add_25``, ``add_5``), ``clear_bet`` and ``bet_up``/``bet_down``,
puts chips on spots (the chip sensors) and presses decision buttons; the
shoe deals each due card on a timer; ``watch`` runs in the foreground and
shows the lamps. What no panel can do goes through the command socket, as a
dealer would key it in: credits, the Designated Player, and a wager whose
amount the seat's buttons cannot select (2WayWinner's reduced map has no
``bet_up``), or any action of a seat that has no panel. Any registered game has
a ``<game>_sim.yaml`` table file; Baccarat is the default. Ctrl-C (or
SIGTERM, or SIGHUP) stops everything: the players, the daemon (SIGTERM, then
SIGKILL if it hangs), the shoe, and the temporary files; nothing is left
running. If the demo itself is killed outright (SIGKILL), its daemon stops by
itself (``croupier run --exit-with-parent``): no orphan holding the ports.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from controller.daemon.client import CommandClient, DaemonUnavailable, Subscriber, local_key
from controller.daemon.config import FIRMWARE_CONFIGS, SimulationSpec, TableConfig, TableFileError, load_table
from controller.daemon.runner import die_with_parent
from controller.tools.children import start_child
from controller.tools.demo_summary import summary
from controller.tools.live_view import TableView, run_live
from controller.tools.watch import watch
from drivers.gpio.betkeys import presses_for
from drivers.gpio.control import ControlClient
from drivers.gpio.pinmap import PinMap
from drivers.shoe.sim import SimError, SimulatedShoe
from signage import demo_display


class CardSource(Protocol):
    """What the dealer deals from: the simulated shoe, or the simulated camera (vision.camera_sim)."""

    @property
    def mode(self) -> str:
        """"reader" (the dealer draws each card), "dealing_shuffler" (it deals on DISPENSE) or "camera"."""

    @property
    def remaining(self) -> int: ...

    def shuffle(self) -> None: ...

    def deal(self) -> Any: ...

    def close(self) -> None: ...


class DemoError(RuntimeError):
    """The demo cannot go on (the daemon died, a command failed); the message says why."""


class Dealer:
    """The simulated dealer and players: drives rounds through the command socket and the shoe."""

    def __init__(
        self,
        config: TableConfig,
        sim: SimulationSpec,
        shoe: CardSource,
        client: CommandClient,
        seed: int,
        rounds: int,
        delay: float | None,
        control: ControlClient | None = None,
    ) -> None:
        self.config = config
        self.control = control
        #: The table's panels: seat -> its map, and the map with the dealer panel (None: no panels).
        self.seat_maps: dict[int, PinMap] = {s: m for _, m in config.panels for s in m.seats}
        self.dealer_map = next((m for _, m in config.panels if m.dealer is not None), None)
        self.covered: set[tuple[int, str]] = set()
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

    def press(self, owner: int | str, word: str) -> bool:
        """Press a panel button if the table has it (True), else leave it to the caller (False)."""
        if self.control is None:
            return False
        if owner == "dealer":
            panel = None if self.dealer_map is None else self.dealer_map.dealer
            if panel is None or word not in panel.buttons:
                return False
        else:
            pin_map = self.seat_maps.get(int(owner))
            if pin_map is None or word not in pin_map.seats[int(owner)].buttons:
                return False
        self.control.call(f"press {owner} {word}")
        return True

    def dealer(self, word: str, cmd: str) -> None:
        """A dealer action: its button on the dealer panel, or the command when there is no button."""
        if not self.press("dealer", word):
            self.call(cmd, by="dealer")

    def setup(self) -> None:
        for player in self.sim.players:
            self.call("credit_in", seat=player.seat, amount=player.credits, by="cashier")
        if self.sim.dp is not None:
            self.call("set_dp", seat=self.sim.dp, by="dealer")
        if self.control is not None:  # the simulated panels are plugged in (presence loops closed)
            for seat, pin_map in sorted(self.seat_maps.items()):
                if pin_map.seats[seat].presence is not None:
                    self.control.call(f"plug {seat}")
            panel = None if self.dealer_map is None else self.dealer_map.dealer
            if panel is not None and panel.presence is not None:
                self.control.call("plug dealer")
        self.dealer("new_shoe", "new_shoe")

    def bet(self, seat: int, spot: str, amount: int) -> None:
        """Chips on a spot's sensor after keying in ``amount`` on the seat's panel; else the command."""
        pin_map = self.seat_maps.get(seat)
        lim = self.config.limits
        if self.control is not None and pin_map is not None and spot in pin_map.seats[seat].spots:
            selected = json.loads(self.control.call(f"selected {seat}"))[spot]
            keys = presses_for(selected, amount, pin_map.seats[seat].buttons, lim.unit, lim.min_bet,
                               pin_map.bet_step)
            if keys is not None and lim.min_bet <= amount <= lim.max_bet:
                for word in keys:
                    if self.stop.is_set():
                        return
                    self.control.call(f"press {seat} {word}")
                self.control.call(f"chips {seat} {spot} on")
                self.covered.add((seat, spot))
                return
        self.call("bet", seat=seat, spot=spot, amount=amount, by=f"seat {seat}")

    def play_round(self) -> None:
        if self.control is not None:  # the last round's chips come off before betting opens again
            for seat, spot in sorted(self.covered):
                self.control.call(f"chips {seat} {spot} off")
            self.covered.clear()
        if self.shoe.remaining < self.sim.cut_card:
            self.shoe.shuffle()
            self.dealer("new_shoe", "new_shoe")
        self.dealer("open_betting", "open")
        state = self.call("snapshot")["state"]
        dp = state["game_state"].get("dp_seat")
        for player in self.sim.players:
            if player.seat == dp or self.rng.random() < player.sit_out:
                continue
            pick = self.rng.randrange(max(len(a) for a in player.bets.values()))
            for spot, amounts in player.bets.items():
                self.bet(player.seat, spot, amounts[min(pick, len(amounts) - 1)])
            for spot, chance in player.extras.items():
                if self.rng.random() < chance:
                    self.bet(player.seat, spot, self.config.limits.min_bet)
        self.stop.wait(self.betting_time)
        self.dealer("close_betting", "close")
        while not self.stop.is_set():
            status = self.call("status")
            if status["phase"] != "dealing":
                return
            if status["tilt"] is not None:
                self.dealer("void", "void")
                continue
            due = status["due"] or {}
            if "card" in due and self.shoe.mode == "dealing_shuffler":
                self.wait_past(status["seq"])  # the daemon sent DISPENSE; the shuffler deals the card
            elif "card" in due:
                self.stop.wait(self.card_interval)
                try:
                    self.shoe.deal()
                except SimError:  # the shoe ran out mid-round: a real dealer would void and reshuffle
                    self.dealer("void", "void")
                    continue
                self.wait_past(status["seq"])
            elif "decision" in due:
                self.stop.wait(self.card_interval)
                seat, actions = self.rng.choice(sorted(due["decision"].items()))
                action = self.rng.choice(actions)
                if not self.press(int(seat), action):
                    self.call("decide", seat=int(seat), action=action, by=f"seat {seat}")

    def wait_past(self, seq: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while self.call("ping")["seq"] <= seq:
            if time.monotonic() > deadline or self.stop.is_set():
                if self.stop.is_set():
                    return
                raise DemoError(f"the daemon did not take the dealt card within {timeout} s")
            time.sleep(0.01)


def demo_endpoints(config: TableConfig, ports: int | None) -> dict[str, str]:
    """The table's sockets as the demo runs them: the file's, or 127.0.0.1 ports N..N+3 (``--ports``)."""
    z = config.spec.zeromq
    endpoints = {"pub": z.pub, "snapshot": z.snapshot, "command": z.command}
    gpio = config.spec.gpio
    if gpio is not None and gpio.control is not None:
        endpoints["control"] = gpio.control
    if ports:
        names = ("pub", "snapshot", "command", "control")
        endpoints = {k: f"tcp://127.0.0.1:{ports + i}" for i, k in enumerate(names) if k in endpoints}
    return endpoints


def table_file(args: argparse.Namespace) -> Path:
    if args.table:
        return Path(args.table)
    kind = "sim_camera" if args.camera_sim else "sim"
    return FIRMWARE_CONFIGS / "tables" / f"{args.game}_{kind}.yaml"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--game", default="baccarat",
        help="play GAME's <game>_sim.yaml table (default baccarat); `all`: every shipped simulated table "
        "at once, each with its simulators and display",
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
        help="use 127.0.0.1 ports N..N+3 (PUB, snapshot, command, panel control) instead of the file's",
    )
    parser.add_argument("--json", action="store_true", help="print the events as JSON lines")
    parser.add_argument("--no-lamps", action="store_true", help="do not print the panels' lamp lines")
    parser.add_argument("--camera-sim", action="store_true",
                        help="deal through the simulated camera (<game>_sim_camera.yaml): each card is "
                             "drawn, photographed and read by the daemon's card recognition (docs/vision.md)")
    parser.add_argument(
        "--plain", action="store_true",
        help="one line per event instead of the live view (automatic when stdout is not a terminal)",
    )
    parser.add_argument("--exit-with-parent", type=int, metavar="PID",
                        help="stop (as on SIGTERM) when process PID ends (croupier demo --game all)")
    demo_display.add_arguments(parser)


def _start_daemon(
    args: argparse.Namespace, path: Path, work: Path, shoe_port: str | None, endpoints: dict[str, str]
) -> tuple[subprocess.Popen[bytes], Path]:
    log_path = work / "daemon.log"
    args_ = [
        "run",
        str(path),
        "--state-dir",
        str(work / "state"),
        *(["--shoe-port", shoe_port] if shoe_port else []),
        "--pub",
        endpoints["pub"],
        "--snapshot",
        endpoints["snapshot"],
        "--command",
        endpoints["command"],
        "--log-level",
        "WARNING",
    ]
    if "control" in endpoints:
        args_ += ["--gpio-control", endpoints["control"]]
    proc = start_child(args_, log_path)
    return proc, log_path


def _stop_daemon(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


#: Signals that stop the demo as Ctrl-C does (the daemon, the shoe and the temporary files with it).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def run(args: argparse.Namespace) -> int:
    if args.game == "all" and not args.table:
        from controller.tools.demo_all import run_all

        return run_all(args)
    if args.exit_with_parent is not None:
        die_with_parent()  # SIGTERM from the kernel when the --game all demo ends: clean up as on Ctrl-C
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
    endpoints = demo_endpoints(config, args.ports)
    out = sys.stdout
    out.write(
        f"Croupier demo: {config.game_name} table {config.table_id!r} on simulated hardware "
        f"(seed {seed}); Ctrl-C stops it.\n"
    )
    work = Path(tempfile.mkdtemp(prefix="croupier-demo-"))
    shoe: CardSource
    if config.camera is not None and config.camera.spec.window is not None:
        from vision.camera_sim import SimulatedCamera  # OpenCV only for a camera table

        window = config.camera.window_path(work / "state")
        assert window is not None
        window.parent.mkdir(parents=True, exist_ok=True)
        spec = config.camera.spec
        shoe = SimulatedCamera(window, decks=config.new_game().decks, seed=seed, fps=spec.fps,
                               stable_frames=spec.stable_frames, size=(spec.width, spec.height))
    else:
        mode = config.shoe_profile.mode if config.shoe_profile is not None else "reader"
        delay = args.delay if args.delay is not None else sim.card_interval
        shoe = SimulatedShoe("v1", seed=seed, decks=config.new_game().decks, mode=mode,
                             feed_delay=delay if mode == "dealing_shuffler" else 0.0)
    proc: subprocess.Popen[bytes] | None = None
    display: subprocess.Popen[bytes] | None = None
    # The command socket takes authorised keys only: the demo makes its operator key on the fly.
    key = local_key(config, "operator", "demo", state_dir=work / "state")
    out.write(f"Commands while it runs: CROUPIER_KEY={key.path} croupier ctl status\n")
    client = CommandClient(endpoints["command"], timeout=10.0, key=key)
    sub: Subscriber | None = None
    dealer: Dealer | None = None
    dealer_thread: threading.Thread | None = None
    control: ControlClient | None = None
    code = 0
    main_thread = threading.current_thread() is threading.main_thread()
    handlers = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS} if main_thread else {}
    try:
        for sig in handlers:  # SIGTERM (kill, systemd) and SIGHUP (terminal closed) stop it as Ctrl-C does
            signal.signal(sig, _interrupt)
        shoe_port = shoe.open_pty(work / "shoe") if isinstance(shoe, SimulatedShoe) else None
        proc, log_path = _start_daemon(args, path, work, shoe_port, endpoints)
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise DemoError(f"the daemon exited ({proc.returncode}):\n{log_path.read_text()}")
            with contextlib.suppress(DaemonUnavailable):
                probe = CommandClient(endpoints["command"], timeout=0.5, key=key)
                try:
                    status = probe.call("status")
                    camera = status.get("camera") or {}
                    if (status.get("shoe_device") or {}).get("connected") or camera.get("online"):
                        break
                finally:
                    probe.close()
            if time.monotonic() > deadline:
                raise DemoError("the daemon did not come up within 30 s")
            time.sleep(0.1)
        if not args.no_display:  # the signage screen, fed by the daemon like any display on the floor
            display, url, note = demo_display.start_display(
                path, endpoints["pub"], endpoints["snapshot"], demo_display.listen_for(args), work
            )
            out.write(f"Signage display: {url}  (open it in a browser){f'; {note}' if note else ''}\n")
            out.flush()
        live = out.isatty() and not (args.json or args.plain)
        if not live:
            sub = Subscriber(endpoints["pub"], endpoints["snapshot"], config.table_id, side=not args.no_lamps)
        if "control" in endpoints:
            control = ControlClient(endpoints["control"])
        dealer = Dealer(config, sim, shoe, client, seed, args.rounds, args.delay, control)
        dealer_thread = threading.Thread(target=dealer.run, name="demo dealer", daemon=True)
        dealer_thread.start()
        if live:  # the same live view as `croupier watch`, until the dealer is done or the daemon dies
            daemon = proc
            view = TableView(config.table_id, endpoints["snapshot"])
            run_live([view], [lambda: Subscriber(endpoints["pub"], endpoints["snapshot"], config.table_id,
                                                 side=True)],
                     until=lambda: dealer.done.is_set() or daemon.poll() is not None)
        while sub is not None and not dealer.done.is_set():
            watch(sub, out, args.json, idle=0.2)
            if proc.poll() is not None:
                break
        if proc.poll() is not None:
            raise DemoError(f"the daemon exited ({proc.returncode}):\n{log_path.read_text()}")
        if sub is not None:
            watch(sub, out, args.json, idle=0.3)  # what the last round published
        if dealer.error is not None:
            raise DemoError(f"the simulated dealer stopped: {dealer.error}")
        out.write(f"{dealer.played} rounds played\n")
        out.write("\n".join(summary(endpoints["command"], dealer.played, key)) + "\n")
        if isinstance(shoe, SimulatedShoe) and shoe.mode == "dealing_shuffler":
            out.write(f"dealing shuffler: {shoe.stats.dispensed} cards dealt on DISPENSE\n")
    except KeyboardInterrupt as exc:
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            out.write(f"stopping{f' ({exc})' if str(exc) else ''}...\n")
            if proc is not None and proc.poll() is None and dealer is not None:
                out.write("\n".join(summary(endpoints["command"], dealer.played, key)) + "\n")
    except (DemoError, demo_display.DisplayStartError) as exc:
        print(f"croupier demo: {exc}", file=sys.stderr)
        code = 1
    finally:
        for sig in handlers:  # a second signal must not cut the clean-up short (it is bounded)
            signal.signal(sig, signal.SIG_IGN)
        if dealer is not None:
            dealer.stop.set()
        if dealer_thread is not None:
            # The dealer's thread uses ``client``: a ZeroMQ socket closed under a thread still in a
            # call aborts the process (libzmq asserts). Its calls end within their timeout.
            dealer_thread.join(timeout=15)
        client.close()
        if control is not None:
            control.close()
        if sub is not None:
            sub.close()
        if display is not None:
            _stop_daemon(display)
        if proc is not None:
            _stop_daemon(proc)
        shoe.close()
        shutil.rmtree(work, ignore_errors=True)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    with contextlib.suppress(OSError):
        out.flush()
    return code

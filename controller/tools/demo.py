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
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from controller.daemon.client import CommandClient, DaemonUnavailable, Subscriber, local_key
from controller.daemon.config import TableConfig, TableFileError, load_table
from controller.daemon.keys import ClientCredentials
from controller.orphans import die_with_parent
from controller.tools.children import croupier_command, start_child
from controller.tools.demo_dealer import CardSource, Dealer, DemoError
from controller.tools.demo_ports import taken, taken_message
from controller.tools.demo_setup import STOP_SIGNALS, _interrupt, ctl_command, demo_endpoints, table_file
from controller.tools.demo_summary import summary
from controller.tools.live_keys import keys_pressed
from controller.tools.live_view import TableView, run_live
from controller.tools.watch import watch
from drivers.gpio.control import ControlClient
from drivers.shoe.sim import SimulatedShoe
from drivers.shoe.simctl import ControlServer
from drivers.shoe.simlink import LinkError
from signage import demo_display


def _start_daemon(
    args: argparse.Namespace, path: Path, work: Path, shoe_port: str | None, endpoints: dict[str, str]
) -> tuple[subprocess.Popen[bytes], Path]:
    log_path = work / "daemon.log"
    args_ = [
        "run",
        str(path),
        "--state-dir",
        str(args.state_dir or work / "state"),
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


def _closer(endpoint: str, key: ClientCredentials) -> Callable[[], None]:
    """``c`` in the live view: the dealer closes betting (a client of its own: the dealer's is in use)."""

    def close() -> None:
        client = CommandClient(endpoint, timeout=5.0, key=key)
        try:
            client.call("close", by="dealer (demo keyboard)")
        except DaemonUnavailable:
            pass  # the view shows the table as it is; a dead daemon ends the demo anyway
        finally:
            client.close()

    return close


def _card_source(config: TableConfig, args: argparse.Namespace, seed: int, work: Path) -> CardSource:
    """What the simulated dealer deals from: the simulated camera for a camera table, else the shoe."""
    sim = config.spec.simulation
    assert sim is not None
    if config.camera is not None and config.camera.spec.window is not None:
        from vision.camera_sim import SimulatedCamera  # OpenCV only for a camera table

        window = config.camera.window_path(args.state_dir or work / "state")
        assert window is not None
        window.parent.mkdir(parents=True, exist_ok=True)
        spec = config.camera.spec
        return SimulatedCamera(window, decks=config.new_game().decks, seed=seed, fps=spec.fps,
                               stable_frames=spec.stable_frames, size=(spec.width, spec.height))
    mode = config.shoe_profile.mode if config.shoe_profile is not None else "reader"
    delay = args.delay if args.delay is not None else sim.card_interval
    return SimulatedShoe("v1", seed=seed, decks=config.new_game().decks, mode=mode,
                         feed_delay=delay if mode == "dealing_shuffler" else 0.0)


def _shoe_control(shoe: CardSource, port: int, daemon: int) -> ControlServer:
    """The simulated shoe's control socket (``--shoe-control``), said with how to pull the shoe, open its
    lid and stop the daemon: a pit's alerts tried by hand (docs/floor.md, "Alerts")."""
    if not isinstance(shoe, SimulatedShoe):
        raise DemoError("--shoe-control: this table deals through the simulated camera, not a shoe")
    try:
        server = ControlServer(shoe, port)
    except LinkError as exc:
        raise DemoError(f"--shoe-control: {exc}") from None
    where = f"127.0.0.1:{server.port}"
    sim = f"{croupier_command()} shoe sim-control {where}"
    sys.stdout.write(f"Shoe control: {where} (pull the shoe for 5 s: {sim} disconnect 5; open its lid: {sim} "
                     f"lid open, and lid closed); the daemon: pid {daemon} (kill {daemon} stops it)\n")
    sys.stdout.flush()
    return server


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
    held = taken(endpoints)
    if held:  # said before anything starts: the address, and the setting that moves it
        print(f"croupier demo: {taken_message(held, path, bool(args.ports))}", file=sys.stderr)
        return 1
    out = sys.stdout
    out.write(
        f"Croupier demo: {config.game_name} table {config.table_id!r} on simulated hardware "
        f"(seed {seed}); Ctrl-C stops it.\n"
    )
    work = Path(tempfile.mkdtemp(prefix="croupier-demo-"))
    shoe: CardSource | None = None
    try:
        shoe = _card_source(config, args, seed, work)
        # The command socket takes authorised keys only: the demo makes its operator key on the fly.
        key = local_key(config, "operator", "demo", state_dir=args.state_dir or work / "state")
        client = CommandClient(endpoints["command"], timeout=10.0, key=key)
    except BaseException:  # nothing of a demo that did not start is left behind: no key, no pty
        if shoe is not None:
            shoe.close()
        shutil.rmtree(work, ignore_errors=True)
        raise
    proc: subprocess.Popen[bytes] | None = None
    display: subprocess.Popen[bytes] | None = None
    ctl_line = ctl_command(key.path, config, path, endpoints, bool(args.ports))
    out.write(f"Commands while it runs: {ctl_line}\n")
    if args.hold_betting:
        out.write(f"Betting stays open until you close it: {ctl_line.removesuffix(' status')} close"
                  f"{' (or press c in the live view)' if out.isatty() else ''}\n")
    notes = [f"ctl: {ctl_line}"]
    sub: Subscriber | None = None
    dealer: Dealer | None = None
    dealer_thread: threading.Thread | None = None
    control: ControlClient | None = None
    shoe_control: ControlServer | None = None
    code = 0
    main_thread = threading.current_thread() is threading.main_thread()
    handlers = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS} if main_thread else {}
    try:
        for sig in handlers:  # SIGTERM (kill, systemd) and SIGHUP (terminal closed) stop it as Ctrl-C does
            signal.signal(sig, _interrupt)
        shoe_port = shoe.open_pty(work / "shoe") if isinstance(shoe, SimulatedShoe) else None
        proc, log_path = _start_daemon(args, path, work, shoe_port, endpoints)
        if args.shoe_control is not None:
            shoe_control = _shoe_control(shoe, args.shoe_control, proc.pid)
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
            notes.append(f"display: {url}")
            out.flush()
        live = out.isatty() and not (args.json or args.plain)
        if not live:
            sub = Subscriber(endpoints["pub"], endpoints["snapshot"], config.table_id, side=not args.no_lamps)
        if "control" in endpoints:
            control = ControlClient(endpoints["control"])
        dealer = Dealer(config, sim, shoe, client, seed, args.rounds, args.delay, control, args.hold_betting)
        dealer_thread = threading.Thread(target=dealer.run, name="demo dealer", daemon=True)
        dealer_thread.start()
        if live:  # the same live view as `croupier watch`, until the dealer is done or the daemon dies
            daemon = proc
            view = TableView(config.table_id)
            if args.hold_betting:
                notes.append("betting stays open: press c to close it")
            with keys_pressed({"c": _closer(endpoints["command"], key)} if args.hold_betting else {}):
                run_live([view], [lambda: Subscriber(endpoints["pub"], endpoints["snapshot"], config.table_id,
                                                     side=True)],
                         until=lambda: dealer.done.is_set() or daemon.poll() is not None, notes=tuple(notes))
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
        if shoe_control is not None:
            shoe_control.close()
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

"""Command line: ``croupier shoe read`` and ``croupier sim shoe``.

``register`` only adds parsers to subcommand groups that the top-level CLI
owns, so this module can grow without touching it. Each leaf sets ``func``,
a callable taking the parsed arguments and returning the exit code.
"""

from __future__ import annotations

import argparse
import json
import queue
import signal
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from serial import SerialException  # type: ignore[import-untyped]

from controller.daemon.private import write_atomic
from drivers.shoe.events import ShoeCard, ShoeEvent
from drivers.shoe.probe import Probe
from drivers.shoe.profile import ProfileError, ShoeProfile, load_profile, parse_profile
from drivers.shoe.sim import SimError, SimulatedShoe, load_deck
from drivers.shoe.simctl import ControlServer, run_command, send
from drivers.shoe.simlink import LinkError
from drivers.shoe.transport import ShoeReader

Subparsers = argparse._SubParsersAction  # the type argparse gives add_subparsers() results


def register(sub: Subparsers[argparse.ArgumentParser], sim_sub: Subparsers[argparse.ArgumentParser]) -> None:
    """Add ``shoe read`` under ``sub`` and ``shoe`` under ``sim_sub`` (the ``sim`` command's group)."""
    shoe = sub.add_parser("shoe", help="card shoe and shuffler tools", description="Card shoe tools.")
    shoe_sub = shoe.add_subparsers(dest="shoe_command", required=True, metavar="COMMAND")
    read = shoe_sub.add_parser(
        "read", help="print each card and status a shoe reports",
        description="Open the shoe of a profile and print each card and status as it comes (Ctrl-C stops).")
    read.add_argument("--profile", required=True, type=Path, help="firmware_configs/shoes/*.yaml")
    read.add_argument("--port", help="a pyserial URL to use instead of the profile's port")
    read.add_argument("--json", action="store_true", help="one JSON object per line")
    read.add_argument("--count", type=int, default=None, help="exit after this many cards")
    read.set_defaults(func=cmd_read)

    conf = shoe_sub.add_parser(
        "conformance", help="check a shoe or shuffler against protocol v1 (docs/shoe-conformance.md)",
        description="Act as the host against a device and run the documented checks of protocol v1: "
                    "pass, fail or skip per check with what was seen. Exit 0 if no check failed.")
    conf.add_argument("--port", required=True, help="a pyserial URL: /dev/ttyUSB0, a pty, socket://HOST:PORT")
    conf.add_argument("--profile", type=Path,
                      help="the device profile (line settings; a dealing shuffler adds the DISPENSE check)")
    conf.add_argument("--json", type=Path, help="also write the report as JSON to this file")
    conf.add_argument("--only", help="comma-separated check names to run (default: all)")
    who = conf.add_mutually_exclusive_group()
    who.add_argument("--operator", action="store_true",
                     help="prompt a person to open the lid, jam the device... (else those checks skip)")
    who.add_argument("--sim-control", metavar="HOST:PORT",
                     help="the simulator's control socket does the operator's steps")
    conf.set_defaults(func=cmd_conformance)

    ctl = shoe_sub.add_parser(
        "sim-control", help="send one command to a simulated shoe's control socket",
        description="Run one command of the simulated shoe's language (docs/shoe-simulator.md) on the "
                    "simulator whose control socket is HOST:PORT (`croupier sim shoe` and `croupier demo "
                    "--shoe-control` print it), and print its answer. Exit 0 if it answered ok.")
    ctl.add_argument("where", metavar="HOST:PORT", help="the control socket, e.g. 127.0.0.1:41057")
    ctl.add_argument("line", nargs="+", metavar="COMMAND", help="e.g. disconnect 5, lid open, lid closed")
    ctl.set_defaults(func=cmd_sim_control)

    sim = sim_sub.add_parser(
        "shoe", help="a simulated shoe on a pty or loopback TCP",
        description="Run a simulated shoe where the profile's port says: a path gets a pty linked "
                    "there, socket://127.0.0.1:PORT a listener. Commands on stdin or the control "
                    "socket; see docs/shoe-simulator.md.")
    sim.add_argument("--profile", required=True, type=Path, help="firmware_configs/shoes/sim_*.yaml")
    sim.add_argument("--port", help="a path (pty link) or socket://127.0.0.1:PORT instead of the profile's")
    decks = sim.add_mutually_exclusive_group()
    decks.add_argument("--deck", type=Path, help="a text file of cards in shoe order")
    decks.add_argument("--decks", type=int, default=1, help="number of shuffled decks (default 1)")
    sim.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    sim.add_argument("--control-port", type=int, default=0,
                     help="TCP port on 127.0.0.1 for commands (default: any free port, printed)")
    sim.add_argument("--noise", type=float, default=0.0, help="probability of a random fault per frame")
    sim.add_argument("--ack-timeout", type=float, default=0.2,
                     help="seconds before an unacknowledged frame is resent")
    sim.add_argument("--misbehave", default="", metavar="QUIRK[,QUIRK]",
                     help="break protocol rules on purpose, to see conformance checks fail: "
                          "see docs/shoe-conformance.md")
    sim.add_argument("--feed-delay", type=float, default=0.0,
                     help="dealing shuffler (profile mode): seconds from DISPENSE to its card")
    sim.set_defaults(func=cmd_sim)


def _profile(args: argparse.Namespace) -> ShoeProfile:
    profile = load_profile(args.profile)
    if args.port:
        profile = parse_profile({**profile.model_dump(), "port": args.port}, f"{args.profile} with --port")
    return profile


def describe(event: ShoeEvent) -> str:
    """One readable line per event: ``card AS``, ``burn 9D``, ``disconnected port=... reason=...``."""
    if isinstance(event, ShoeCard):
        return f"{'burn' if event.burn else 'card'} {event.card.code}"
    fields = " ".join(f"{key}={value}" for key, value in event.detail.items())
    return f"{event.status} {fields}".rstrip()


def cmd_read(args: argparse.Namespace) -> int:
    try:
        profile = _profile(args)
    except ProfileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    events: queue.Queue[ShoeEvent] = queue.Queue()
    reader = ShoeReader(profile, events.put)
    reader.start()
    cards = 0
    try:
        while args.count is None or cards < args.count:
            event = events.get()
            line = json.dumps(event.to_dict()) if args.json else describe(event)
            print(line, flush=True)
            cards += isinstance(event, ShoeCard)
    except KeyboardInterrupt:
        pass
    finally:
        reader.stop()
    return 0


def _url_of_sim(profile: ShoeProfile) -> tuple[str, Any]:
    if profile.port.startswith("socket://"):
        parts = urlsplit(profile.port)
        if parts.hostname is None or parts.port is None:
            raise SimError(f"expected socket://HOST:PORT, got {profile.port!r}")
        return "socket", (parts.hostname, parts.port)
    if "://" in profile.port:
        raise SimError(f"the simulator makes a pty at a path or listens on socket://, not {profile.port!r}")
    return "pty", profile.port


def cmd_sim_control(args: argparse.Namespace) -> int:
    try:
        answer = send(args.where, " ".join(args.line))
    except (ValueError, OSError) as exc:
        print(f"error: {args.where}: {exc}", file=sys.stderr)
        return 2
    print(answer, flush=True)
    return 1 if answer.startswith("error") else 0


def cmd_sim(args: argparse.Namespace) -> int:
    try:
        profile = _profile(args)
        kind, where = _url_of_sim(profile)
        deck = load_deck(args.deck) if args.deck else None
        sim = SimulatedShoe(profile.protocol, seed=args.seed, deck=deck, decks=args.decks,
                            noise=args.noise, ack_timeout=args.ack_timeout,
                            on_log=lambda text: print(f"# {text}", flush=True),
                            mode=profile.mode, feed_delay=args.feed_delay,
                            misbehave=[q for q in args.misbehave.split(",") if q])
    except (ProfileError, SimError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        url = sim.open_pty(where) if kind == "pty" else sim.listen(*where)
        control = ControlServer(sim, args.control_port)
    except (LinkError, OSError) as exc:
        sim.close()
        print(f"error: {exc}", file=sys.stderr)
        return 2
    what = profile.protocol + (", dealing on DISPENSE" if profile.mode == "dealing_shuffler" else "")
    print(f"# simulated shoe ({what}) on {url}: point a reader at it, e.g.", flush=True)
    print(f"#   croupier shoe read --profile {args.profile} --port {url}", flush=True)
    print(f"# control: 127.0.0.1:{control.port} or stdin; type 'help'", flush=True)
    stopping = threading.Event()

    def read_stdin() -> None:
        for line in sys.stdin:
            print(run_command(sim, line), flush=True)
            if sim.closed.is_set():
                break

    threading.Thread(target=read_stdin, name="sim-shoe stdin", daemon=True).start()
    previous = signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    try:
        while not sim.closed.is_set() and not stopping.is_set():
            sim.closed.wait(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        control.close()
        sim.close()
    return 0


def cmd_conformance(args: argparse.Namespace) -> int:
    """Run the checks; print one line per check; write the JSON report if asked."""
    from drivers.shoe.conformance import Conformance, report  # noqa: PLC0415 - only this command needs them
    from drivers.shoe.operator import person, sim_control  # noqa: PLC0415

    try:
        operator = sim_control(args.sim_control) if args.sim_control else person if args.operator else None
        profile = load_profile(args.profile) if args.profile else None
        probe = Probe(args.port, profile)
    except (ProfileError, OSError, ValueError, SerialException) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    only = set(args.only.split(",")) if args.only else None
    print(f"# conformance of {args.port} to Croupier shoe protocol v1 (docs/shoe-conformance.md)", flush=True)
    kit = Conformance(probe, profile, operator)
    try:
        results = kit.run_all(only, lambda r: print(f"{r.verdict}  {r.name:<20} {r.seen}", flush=True))
    finally:
        probe.close()
    data = report(results, args.port, str(args.profile) if args.profile else None)
    print(f"# {data['passed']} passed, {data['failed']} failed, {data['skipped']} skipped", flush=True)
    if args.json:
        write_atomic(args.json, json.dumps(data, indent=2) + "\n")
    return 1 if data["failed"] else 0

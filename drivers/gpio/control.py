"""The simulated panel's control socket: press buttons, put chips down, read the lamps, from anywhere.

A line-based text protocol over TCP on 127.0.0.1 (docs/panel-simulator.md):
one command per line, one answer per line, ``ok ...`` or ``error: ...``, so a
person with ``nc`` and a test with a socket send exactly the same thing.
Commands speak panel words (``press 3 hit``, ``chips 3 main on``); the
server turns them into electrical levels on gpiozero's mock pins, so the
panel driver under test reads them through the same debounce and logic as
on a Pi. ``press`` holds the contact until the panel has taken it (its debounce
time: :meth:`Panel.flush`), then releases it and waits again, because a
simulated finger, like a real one, must stay down for a press to count; no
command sleeps a guessed "long enough".
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

from controller.digits import whole_number
from controller.quote import quote
from drivers.gpio.backend import BackendError, SimulatedPins
from drivers.gpio.events import LampMode
from drivers.gpio.pinmap import HEADER, InputPin, PinMap, chip_name, line_name, line_problem

HELP = """commands (one per line; answers 'ok ...' or 'error: ...'):
  press SEAT|dealer WORD       press and release a button (held past the debounce time)
  hold SEAT|dealer WORD        press and keep it down (a stuck button after stuck_after_s)
  release SEAT|dealer WORD     let it go
  bounce SEAT|dealer WORD [N]  a contact that chatters N times (default 5) before it settles, then release
  chips SEAT SPOT on|off       put chips on a spot's sensor, or lift them
  unplug SEAT|dealer | plug SEAT|dealer    open or close the panel's presence loop
  pin [CHIP:]N [high|low]      read or drive a raw BCM pin, or an expander's line (pin 0x21:5)
  lamps                        every lamp: {"seat 1 hit": {"mode": "blink", "lit": true}, ...}
  selected SEAT                the amounts chips on each spot of SEAT would wager now
  help                         this list
  quit                         stop the simulator (on the daemon's gpio.control: close this connection)"""

#: How long a simulated contact may take to be taken by the panel (its debounce, on a very busy machine).
SETTLE_TIMEOUT_S = 10.0


class ControlledPanel(Protocol):
    """What the socket needs of a panel (the controller's :class:`~controller.panels.link.PanelLink`)."""

    map: PinMap

    def flush(self, timeout: float = ...) -> bool: ...

    def lamp_modes(self) -> dict[str, LampMode]: ...

    def lamp_levels(self) -> dict[str, bool]: ...

    def selected(self, seat: int, spot: str) -> int: ...


class ControlError(ValueError):
    """A control command that cannot be run; the message is sent back after ``error:``."""


def parse_endpoint(endpoint: str) -> tuple[str, int]:
    """``tcp://127.0.0.1:PORT`` (port 0: any free port). Only loopback: this socket presses buttons."""
    shape = f"control endpoint must look like tcp://127.0.0.1:PORT, not {endpoint[:60]!r}"
    try:  # urllib raises its own ValueError for a port out of range or not a number, a broken [::1]
        parts = urlsplit(endpoint)
        port = parts.port
    except ValueError:
        raise ControlError(shape) from None
    if parts.scheme != "tcp" or parts.hostname is None or port is None:
        raise ControlError(shape)
    if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise ControlError(f"control endpoint must be on loopback (127.0.0.1), not {parts.hostname}")
    return parts.hostname, port


class PanelControl:
    """Runs control commands against the panels of one table over simulated pins (one command at a time).

    A table may have several maps (one per header); on mock pins each has its
    own :class:`SimulatedPins`, so ``press 3 hit`` goes to the header that has
    seat 3, ``press dealer ...`` to the one with the dealer panel, and ``lamps``
    answers for all of them. ``pin N`` speaks to the first map's header, ``pin 0x21:5``
    to line 5 of its expander 0x21.
    """

    def __init__(self, panel: ControlledPanel, pins: SimulatedPins,
                 more: Sequence[tuple[ControlledPanel, SimulatedPins]] = ()) -> None:
        self.panel = panel
        self.pins = pins
        self.headers: list[tuple[ControlledPanel, SimulatedPins]] = [(panel, pins), *more]
        self._lock = threading.Lock()

    def run(self, line: str) -> str:
        """One command line to one answer line; never raises for a bad command."""
        words = line.split()
        if not words:
            return "ok"
        try:
            with self._lock:
                return "ok" + ((" " + out) if (out := self._run(words[0].lower(), words[1:])) else "")
        except ControlError as exc:
            return f"error: {exc}"
        except Exception as exc:  # a driver error answers the client; it must not drop the connection
            return f"error: {type(exc).__name__}: {exc}"

    # ---------------------------------------------------------------- commands
    def _run(self, cmd: str, args: list[str]) -> str:
        if cmd == "help":
            return HELP.replace("\n", " | ")
        if cmd in ("press", "hold", "release", "bounce"):
            if len(args) not in (2, 3) or (len(args) == 3 and cmd != "bounce"):
                raise ControlError(f"usage: {cmd} SEAT|dealer WORD" + (" [N]" if cmd == "bounce" else ""))
            header, spec = self._button(args[0], args[1])
            if cmd == "hold":
                self._set(header, spec, True)
            elif cmd == "release":
                self._set(header, spec, False)
            else:
                if cmd == "bounce":
                    for _ in range(self._count(args[2] if len(args) == 3 else "5")):
                        self._set(header, spec, True, settle=False)
                        time.sleep(0.001)
                        self._set(header, spec, False, settle=False)
                        time.sleep(0.001)
                self._set(header, spec, True)
                self._set(header, spec, False)
            return f"{cmd} {args[0]} {args[1]}"
        if cmd == "chips":
            if len(args) != 3 or args[2] not in ("on", "off"):
                raise ControlError("usage: chips SEAT SPOT on|off")
            seat = self._seat(args[0])
            header = self._seat_header(seat)
            spots = header[0].map.seats[seat].spots
            if args[1] not in spots:
                known = ", ".join(spots)
                raise ControlError(f"seat {seat} has no spot {args[1]!r} in this map; spots: {known}")
            self._set(header, spots[args[1]].sensor, args[2] == "on")
            return f"chips {seat} {args[1]} {args[2]}"
        if cmd in ("unplug", "plug"):
            if len(args) != 1:
                raise ControlError(f"usage: {cmd} SEAT|dealer")
            header, presence = self._presence(args[0])
            self._set(header, presence, cmd == "plug")
            return f"{cmd} {args[0]}"
        if cmd == "pin":
            if len(args) not in (1, 2) or (len(args) == 2 and args[1] not in ("high", "low")):
                raise ControlError("usage: pin [CHIP:]N [high|low]")
            chip, _, number = args[0].rpartition(":")
            chip = chip_name(chip) if chip else HEADER
            pin = self._count(number)
            if (wrong := line_problem(chip, pin)) is not None:
                raise ControlError(wrong)
            try:
                if len(args) == 2:
                    self.pins.drive(pin, args[1] == "high", chip)
                level = self.pins.level(pin, chip)
            except AssertionError:
                raise ControlError(f"pin {args[0]} is an output; read it, do not drive it") from None
            except BackendError as exc:
                raise ControlError(str(exc)) from None
            return f"pin {args[0]} {'high' if level else 'low'}"
        if cmd == "lamps":
            return json.dumps(self.lamps())
        if cmd == "selected":
            if len(args) != 1:
                raise ControlError("usage: selected SEAT")
            seat = self._seat(args[0])
            panel = self._seat_header(seat)[0]
            return json.dumps({spot: panel.selected(seat, spot) for spot in panel.map.seats[seat].spots})
        raise ControlError(f"unknown command {cmd!r}; try 'help'")

    def lamps(self) -> dict[str, dict[str, Any]]:
        """Every lamp of every map: its mode and whether its pin is lit now."""
        out: dict[str, dict[str, Any]] = {}
        for panel, _ in self.headers:
            modes = panel.lamp_modes()
            levels = panel.lamp_levels()
            out.update({k: {"mode": modes[k].value, "lit": levels[k]} for k in modes})
        return out

    # ----------------------------------------------------------------- helpers
    def _set(self, header: tuple[ControlledPanel, SimulatedPins], spec: InputPin, active: bool, *,
             settle: bool = True) -> None:
        """Drive the contact and (``settle``) wait until the panel has taken the new level."""
        panel, pins = header
        pins.drive(spec.pin, active == (spec.active == "high"), panel.map.chip_of(spec))
        if settle and not panel.flush(SETTLE_TIMEOUT_S):
            line = line_name(panel.map.chip_of(spec), spec.pin)
            raise ControlError(f"the panel did not take {line} within {SETTLE_TIMEOUT_S:g} s")

    @staticmethod
    def _count(text: str) -> int:
        # ASCII digits only: str.isdigit takes "١" (a seat 1) and "²" (int() then raised ValueError).
        if (number := whole_number(text, 9)) is None:
            raise ControlError(f"expected a number (0-9), not {quote(text, 40)}")
        return number

    def _seat(self, text: str) -> int:
        seat = self._count(text)
        seats = sorted(s for panel, _ in self.headers for s in panel.map.seats)
        if seat not in seats:
            raise ControlError(f"seat {seat} has no panel in this map; seats: {seats}")
        return seat

    def _seat_header(self, seat: int) -> tuple[ControlledPanel, SimulatedPins]:
        return next(h for h in self.headers if seat in h[0].map.seats)

    def _dealer_header(self) -> tuple[ControlledPanel, SimulatedPins]:
        for header in self.headers:
            if header[0].map.dealer is not None:
                return header
        raise ControlError("this map has no dealer panel")

    def _button(self, owner: str, word: str) -> tuple[tuple[ControlledPanel, SimulatedPins], InputPin]:
        if owner == "dealer":
            header = self._dealer_header()
            dealer = header[0].map.dealer
            assert dealer is not None
            buttons = dealer.buttons
        else:
            seat = self._seat(owner)
            header = self._seat_header(seat)
            buttons = header[0].map.seats[seat].buttons
        if word not in buttons:
            who = owner if owner == "dealer" else f"seat {owner}"
            raise ControlError(f"{who} has no button {word!r} in this map; buttons: {', '.join(buttons)}")
        return header, buttons[word]

    def _presence(self, owner: str) -> tuple[tuple[ControlledPanel, SimulatedPins], InputPin]:
        if owner == "dealer":
            header = self._dealer_header()
            panel: Any = header[0].map.dealer
        else:
            seat = self._seat(owner)
            header = self._seat_header(seat)
            panel = header[0].map.seats[seat]
        if panel.presence is None:
            who = owner if owner == "dealer" else f"seat {owner}"
            raise ControlError(f"{who} has no presence pin in this map")
        presence: InputPin = panel.presence
        return header, presence


class _Handler(socketserver.StreamRequestHandler):
    server: ControlServer

    def handle(self) -> None:
        for raw in self.rfile:
            line = raw.decode("utf-8", "replace").strip()
            if line.lower() == "quit":
                self.wfile.write(b"ok bye\n")
                if self.server.on_quit is not None:
                    self.server.on_quit()  # `croupier sim panel`: the simulator stops, as the shoe's does
                return
            self.wfile.write((self.server.control.run(line) + "\n").encode())


class ControlServer(socketserver.ThreadingTCPServer):
    """The control socket: ``ControlServer(control, "tcp://127.0.0.1:0")``, then :meth:`start`.

    ``quit`` closes the connection, and calls ``on_quit`` if given (the simulator's stop); the daemon
    gives none: a command on its panel socket never stops the table.
    """

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, control: PanelControl, endpoint: str, on_quit: Callable[[], None] | None = None
    ) -> None:
        host, port = parse_endpoint(endpoint)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.address_family = family
        self.control = control
        self.on_quit = on_quit
        super().__init__((host, port), _Handler)
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        host, port = self.server_address[:2]
        return f"tcp://{host!s}:{port}" if isinstance(host, str) else f"tcp://{host.decode()}:{port}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self.serve_forever, name="gpio-control", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def send(endpoint: str, *lines: str, timeout: float = 10.0) -> list[str]:
    """Send command lines to a control socket and return the answers (a small client for tests and tools)."""
    host, port = parse_endpoint(endpoint)
    answers: list[str] = []
    with socket.create_connection((host, port), timeout=timeout) as sock, sock.makefile("rwb") as stream:
        for line in lines:
            stream.write(line.encode() + b"\n")
            stream.flush()
            answers.append(stream.readline().decode().rstrip("\n"))
    return answers


class ControlClient:
    """One connection to a control socket, kept open: ``call("press 3 hit")`` -> the text after ``ok``.

    For tools that press many buttons (the demo's players); an ``error:`` answer raises
    :class:`ControlError` with the server's reason, so a typo in a tool is never a silent no-op.
    """

    def __init__(self, endpoint: str, timeout: float = 30.0) -> None:
        host, port = parse_endpoint(endpoint)
        self.endpoint = endpoint
        self._sock = socket.create_connection((host, port), timeout=timeout)
        self._stream = self._sock.makefile("rwb")

    def call(self, line: str) -> str:
        self._stream.write(line.encode() + b"\n")
        self._stream.flush()
        answer = self._stream.readline().decode().rstrip("\n")
        if answer.startswith("error: "):
            raise ControlError(f"{line}: {answer.removeprefix('error: ')}")
        if not answer.startswith("ok"):
            raise ControlError(f"{line}: no answer from {self.endpoint}")
        return answer.removeprefix("ok").strip()

    def close(self) -> None:
        self._stream.close()
        self._sock.close()

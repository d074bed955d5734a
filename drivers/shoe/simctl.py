"""The simulated shoe's command language, and a line-based control socket on 127.0.0.1.

One small language (``deal 5``, ``burn``, ``corrupt``, ``disconnect 2``...)
for stdin, the control socket and tests alike, so what a user types in a
walkthrough is exactly what a test script sends. Every command answers one
line: ``ok ...`` or ``error: ...``.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading

from controller.cards import Card
from controller.digits import whole_number
from controller.quote import quote
from drivers.shoe.sim import LINE_FAULTS, SimError, SimulatedShoe
from drivers.shoe.simlink import LinkError

HELP = """commands (one per line; answers 'ok ...' or 'error: ...'):
  deal [N | CARD]       deal the next card, the next N, or CARD as given (e.g. 'deal AS')
  burn [CARD]           deal the next card (or CARD) reported as a burn
  shuffle               refill the shoe (SHUFFLE_STARTED, SHUFFLE_COMPLETE)
  empty                 report SHOE_EMPTY
  lid open|closed       report the lid
  fault jam|misread|double_feed|sensor|motor|CODE [TEXT]
  corrupt | bitflip | drop | dup | truncate     damage the next frame
  delay MS              stall the line MS milliseconds
  disconnect SECONDS    unplug, then plug in again after SECONDS
  feed jam|lose|empty|normal|slow MS    a dealing shuffler's next DISPENSE jams / is lost;
                        the shoe runs empty; cards come MS ms after DISPENSE; all normal again
  status                remaining cards and counters
  help | quit"""


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SimError(f"{what} must be a number, not {text!r}") from None
    if not 0 <= value <= 3600_000:
        raise SimError(f"{what} out of range: {text}")
    return value


def run_command(sim: SimulatedShoe, line: str) -> str:
    """Run one command line; return the answer. Raises nothing for a bad command: it answers ``error``."""
    words = line.split()
    if not words:
        return "ok"
    cmd, args = words[0].lower(), words[1:]
    try:
        if cmd in ("deal", "burn"):
            burn = cmd == "burn"
            if args and (count := whole_number(args[0], 4)) is not None and not burn:
                dealt: list[Card] = []
                for _ in range(count):
                    try:
                        dealt.append(sim.deal())
                    except SimError as exc:
                        return f"error: dealt {len(dealt)} ({' '.join(c.code for c in dealt)}), then: {exc}"
                return f"ok dealt {' '.join(c.code for c in dealt)}"
            card = sim.deal(args[0] if args else None, burn=burn)
            return f"ok {'burned' if burn else 'dealt'} {card.code}"
        if cmd == "shuffle":
            sim.shuffle()
            return f"ok shuffled, {sim.remaining} cards"
        if cmd == "empty":
            sim.empty()
            return "ok"
        if cmd == "lid":
            if not args or args[0] not in ("open", "closed"):
                return f"error: lid open|closed, not {' '.join(args) or 'nothing'!r}"
            sim.lid(args[0] == "open")
            return f"ok lid {args[0]}"
        if cmd == "fault" and args:
            number = whole_number(args[0], 9)
            kind: str | int = args[0] if number is None else number
            sim.fault(kind, " ".join(args[1:]))
            return f"ok fault {args[0]}"
        if cmd in LINE_FAULTS and cmd != "delay":
            sim.inject(cmd)
            return f"ok next frame: {cmd}"
        if cmd == "delay" and args:
            sim.inject("delay", _number(args[0], "delay"))
            return f"ok line stalls {args[0]} ms"
        if cmd == "disconnect":
            seconds = _number(args[0], "disconnect") if args else 1.0
            sim.inject("disconnect", seconds)
            return f"ok unplugged for {seconds:g} s"
        if cmd == "feed" and args:
            sim.feed(args[0], _number(args[1], "feed slow") if args[0] == "slow" and len(args) > 1 else 0.0)
            return f"ok feed {' '.join(args)}"
        if cmd == "status":
            s = sim.stats
            return (f"ok {sim.remaining} cards left on {sim.url}; frames {s.frames}, resends {s.resends}, "
                    f"acks {s.acks}, naks {s.naks}, faults {s.faults}")
        if cmd == "help":
            return HELP
        if cmd == "quit":
            sim.close()
            return "ok bye"
    except SimError as exc:
        return f"error: {exc}"
    return f"error: unknown or incomplete command {line.strip()!r}; try 'help'"


class ControlServer:
    """Line-based TCP control on loopback, for scripts: ``printf 'deal 5\\n' | nc 127.0.0.1 PORT``."""

    def __init__(self, sim: SimulatedShoe, port: int = 0, host: str = "127.0.0.1") -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise LinkError(f"the control socket listens on loopback only, not {host!r}")
        self._sim = sim
        try:
            self._listener = socket.create_server((host, port))
        except OSError as exc:
            raise LinkError(f"cannot listen for control on {host}:{port}: {exc}") from None
        self.port: int = self._listener.getsockname()[1]
        self._clients: dict[socket.socket, bytearray] = {}
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sim-shoe control", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stopping.set()
        self._thread.join()
        for sock in [self._listener, *self._clients]:
            sock.close()

    def _loop(self) -> None:
        while not self._stopping.is_set() and not self._sim.closed.is_set():
            ready, _, _ = select.select([self._listener, *self._clients], [], [], 0.1)
            for sock in ready:
                if sock is self._listener:
                    client, _ = self._listener.accept()
                    self._clients[client] = bytearray()
                    continue
                try:
                    data = sock.recv(4096)
                except OSError:
                    data = b""
                if not data:
                    self._clients.pop(sock).clear()
                    sock.close()
                    continue
                buf = self._clients[sock]
                buf += data
                while b"\n" in buf:
                    raw, _, rest = bytes(buf).partition(b"\n")
                    buf[:] = rest
                    answer = run_command(self._sim, raw.decode("utf-8", "replace"))
                    with contextlib.suppress(OSError):
                        sock.sendall(answer.encode() + b"\n")


def address(where: str) -> tuple[str, int]:
    """HOST:PORT of a control socket as (host, port); ValueError, saying so, if it is not one."""
    host, _, port_text = where.rpartition(":")
    if not host or (port := whole_number(port_text, 5)) is None or port > 65535:
        raise ValueError(f"a simulator's control socket is HOST:PORT, not {quote(where, 60)}")
    return host, port


def send(where: str, line: str, timeout: float = 5.0) -> str:
    """Run one command line on the simulator whose control socket is at ``where`` (HOST:PORT); its answer.

    The write side is shut after the line, so the answer is read to the end (``help`` is many lines).
    ValueError for an address that is not HOST:PORT; OSError if the socket cannot be reached."""
    with socket.create_connection(address(where), timeout=timeout) as sock:
        sock.sendall(line.strip().encode() + b"\n")
        sock.shutdown(socket.SHUT_WR)
        answer = bytearray()
        while chunk := sock.recv(4096):
            answer += chunk
    return answer.decode("utf-8", "replace").rstrip("\n")

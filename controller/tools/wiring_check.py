"""``croupier gpio check``'s core: every line of a table's pin maps tried by hand, and what was miswired.

A technician who has just wired a table wants to know, line by line, that
the lamp the map calls "seat 3 banker" is the one that lights and that the
button the map calls "seat 3 bet_up" is the one on that pin: a swapped pair
still "works" (every input arrives) and pays the wrong player. So each lamp
is lit alone and the technician says whether it lit; each button is pressed,
each sensor covered and uncovered and each presence loop unplugged and plugged
back, and every input line of the table is watched meanwhile: the expected
line and no other must change. The result names every line that did not.

Lines come from the pin maps (:meth:`PinMap.specs`, the one walk over a map),
by role and name, each at its full address: its chip (the header, or an
expander the table file lists) and its pin there (:meth:`PinMap.chip_of`).
They are opened and read only through the pin backend (:class:`PinBackend`)
on that chip, and named the way a technician finds them (:func:`line_name`:
``GPIO 17``, ``0x21 line 5``), so a line on an expander is checked, and a
miswired one reported, exactly like one on the header.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from drivers.gpio.backend import InputLine, OutputLine, PinBackend
from drivers.gpio.pinmap import InputPin, LampPin, PinMap, line_name

Role = Literal["lamp", "button", "sensor", "presence", "canary"]
#: What the technician is asked to do to an input line (a lamp is only looked at).
ACTIONS: dict[Role, str] = {
    "button": "press and release",
    "sensor": "put a chip on, then take it off",
    "presence": "unplug, then plug back in",
    "lamp": "look at",
    "canary": "leave alone",
}


@dataclass(frozen=True, slots=True)
class Line:
    """One wired line: which pin map (the table's ``panels`` entry) names it, its key there, its role,
    its chip and how to open it."""

    map: int
    key: str
    role: Role
    name: str
    chip: str
    spec: InputPin | LampPin

    @property
    def where(self) -> str:
        """The line where the technician finds it: ``GPIO 17`` on the header, ``0x21 line 5``."""
        return line_name(self.chip, self.spec.pin)

    def __str__(self) -> str:
        return f"{self.name} ({self.where})"


@dataclass(frozen=True, slots=True)
class Finding:
    """The outcome of one line: ``ok``, ``miswired`` (with why) or ``skipped`` by the technician."""

    line: Line
    verdict: Literal["ok", "miswired", "skipped"]
    detail: str = ""


class Technician(Protocol):
    """Whoever works the table during the check: a person at a terminal, or simulated hands."""

    def lamp_lit(self, line: Line, prompt: str) -> str:
        """``line`` is lit alone: answer ``y`` (it lit), ``n`` (it did not) or ``s`` (skip)."""
        ...

    def actuate(self, line: Line, prompt: str) -> str:
        """Do what ``prompt`` asks to ``line``'s device and answer ``""`` when done, or ``s`` (skip)."""
        ...


def _role_and_name(key: str) -> tuple[Role, str]:
    parts = key.split(".")
    if parts[0] == "canaries":
        return "canary", f"canary {parts[1]}"
    owner = f"seat {parts[1]}" if parts[0] == "seats" else parts[0]
    if parts[0] == "tower":
        return "lamp", f"tower {parts[1]} lamp"
    if parts[-1] == "presence":
        return "presence", f"{owner} presence loop"
    thing = parts[-2]
    if parts[-1] == "lamp":
        return "lamp", f"{owner} {thing} lamp"
    if parts[-1] == "sensor":
        return "sensor", f"{owner} {thing} chip sensor"
    return "button", f"{owner} {thing} button"


def lines_of(maps: Sequence[tuple[str, PinMap]]) -> list[Line]:
    """Every line of a table's maps, in file order: lamps, buttons, sensors, presence loops and canaries
    (nothing to actuate: each must read idle, and change with no other line)."""
    out = []
    for index, (_label, pin_map) in enumerate(maps):
        for key, spec in pin_map.specs():
            role, name = _role_and_name(key)
            out.append(Line(index, key, role, name, pin_map.chip_of(spec), spec))
    return out


@dataclass
class WiringCheck:
    """A table's lines open on their backends (one per pin map, each with the table's chips), watched
    while the technician works."""

    lines: list[Line]
    backends: Sequence[PinBackend]
    _inputs: dict[Line, InputLine] = field(default_factory=dict, init=False)
    _outputs: dict[Line, OutputLine] = field(default_factory=dict, init=False)
    _changed: list[Line] = field(default_factory=list, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def open(self) -> None:
        """Open every line: lamps off, every input watched (BackendError, OSError if one cannot be)."""
        for line in self.lines:
            backend = self.backends[line.map]
            spec = line.spec
            if isinstance(spec, LampPin):
                self._outputs[line] = backend.output(spec.pin, active_high=spec.active == "high",
                                                     chip=line.chip)
            else:
                self._inputs[line] = backend.input(spec.pin, pull=spec.pull,
                                                   active_high=spec.active == "high",
                                                   on_change=self._watcher(line), chip=line.chip)

    def _watcher(self, line: Line) -> Callable[[bool], None]:
        def changed(_active: bool) -> None:
            with self._lock:
                self._changed.append(line)
        return changed

    def close(self) -> None:
        for backend in self.backends:
            backend.close()

    def run(self, technician: Technician, say: Callable[[str], None] = print) -> list[Finding]:
        """Lamps one by one, then every input; one finding per line, in the order checked."""
        findings = [self._canary(line) for line in self.lines if line.role == "canary"]
        findings += [self._lamp(line, technician) for line in self.lines if line.role == "lamp"]
        findings += [self._input(line, technician) for line in self.lines if line.role not in ("lamp",
                                                                                                "canary")]
        for finding in findings:
            if finding.verdict != "ok":
                say(f"  {finding.verdict.upper()}: {finding.line}: {finding.detail}")
        return findings

    def _canary(self, line: Line) -> Finding:
        """A canary must read idle: read active, the daemon would fail the map's inputs at start (a second
        reading: a loose strap showed only then). Watched with the rest while inputs are actuated."""
        if not self._inputs[line].is_active:
            return Finding(line, "ok")
        return Finding(line, "miswired", f"{line.where} reads active: it must be tied to its idle level "
                       "(a loose or missing strap, the wrong pin, or the chip answers garbage)")

    def _lamp(self, line: Line, technician: Technician) -> Finding:
        for other, output in self._outputs.items():
            output.set(other == line)
        answer = technician.lamp_lit(line, f"Is {line.name} lit, and no other lamp? [y/n/s]").strip().lower()
        self._outputs[line].set(False)
        if answer.startswith("s"):
            return Finding(line, "skipped", "skipped by the technician")
        if answer.startswith("y"):
            return Finding(line, "ok")
        return Finding(line, "miswired", f"driving {line.where} did not light it alone: another lamp, "
                       "or no lamp, is on that line (wrong pin, swapped wires, or the lamp or its driver)")

    def _input(self, line: Line, technician: Technician) -> Finding:
        with self._lock:
            self._changed.clear()
        answer = technician.actuate(line, f"{ACTIONS[line.role].capitalize()}: {line.name}; then Enter "
                                    "(s, Enter: skip)").strip().lower()
        with self._lock:
            changed = list(dict.fromkeys(self._changed))
        if answer.startswith("s"):
            return Finding(line, "skipped", "skipped by the technician")
        others = [other for other in changed if other != line]
        if line in changed and not others:
            return Finding(line, "ok")
        if not changed:
            return Finding(line, "miswired", f"nothing changed: no contact on {line.where} (open wire, wrong "
                           "pin, or the device itself)")
        names = ", ".join(str(other) for other in others)
        if line not in changed:
            return Finding(line, "miswired", f"{names} changed instead: this device is wired to that line "
                           "(swapped wires?)")
        return Finding(line, "miswired", f"{names} changed too: two lines joined (a short, or a shared "
                       "ground or common wired to a line)")


def report(title: str, findings: Sequence[Finding]) -> str:
    """The report the check writes: every miswired or skipped line by name first, then every line."""
    def where(f: Finding) -> str:
        return f"{f.line.name} [map {f.line.map}: {f.line.key}, {f.line.where}]"

    bad = [f for f in findings if f.verdict == "miswired"]
    skipped = [f for f in findings if f.verdict == "skipped"]
    lines = [f"# croupier gpio check: {title}",
             f"{len(findings)} lines: {len(findings) - len(bad) - len(skipped)} ok, {len(bad)} miswired, "
             f"{len(skipped)} skipped", ""]
    if bad:
        lines += ["MISWIRED", *(f"- {where(f)}: {f.detail}" for f in bad), ""]
    if skipped:
        lines += ["NOT CHECKED", *(f"- {where(f)}" for f in skipped), ""]
    lines += ["EVERY LINE", *(f"{f.verdict:<8} {where(f)}" for f in findings)]
    return "\n".join([*lines, ""])

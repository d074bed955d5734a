"""Every input line read again now and then: a line that cannot be read, or that reads what no edge said,
is a fault of its map's panels. A level read is never taken as a press or a placement.

Why: inputs arrive as edges, from interrupts. An I2C expander that stops answering (a loose cable, a
brown-out) sends no more of them, and nothing else would notice: the table would take that chip's
buttons as idle and its bet sensors as unchanged, so chips lifted from a spot after betting closed
would go unseen. Lamps are written often enough that a dead chip shows in their writes, but a chip may
carry only inputs. So every ``period`` seconds (the pin map's ``input_check_s``) every input line is
read, outside the panel's lock (a hung bus may take a second a read):

* a read that raises (:class:`drivers.gpio.backend.LineError`) fails the map's inputs; the chip's other
  lines are not read in that check (each would wait on the bus too);
* a line that reads a level its edges never gave, twice running with no edge between (a race with an
  edge in flight is not one), fails them too. That is a chip whose interrupts are lost, or one that
  answers garbage without raising: an SPI expander has no acknowledge, and a dead one reads all zero,
  every active-low input "active"; an expander reset by a brown-out comes back without its pull-ups.
  Taking such a level as an edge would press buttons and place chips nobody touched, so it is only a
  fault, and it stays one until the line's edges and level agree again (an edge, or the daemon started
  again once the chip is mended: started with the chip still dead, it takes the garbage for the
  panels' starting state, which :meth:`InputCheck.at_open` judges only by the chip's buttons);
* at open, a chip whose every button (two or more) reads pressed fails them at once (:meth:`at_open`);
* a canary (the pin map's ``canaries``: a spare line tied to its idle level) read active, at open or at
  any check, fails them at once: its chip answers garbage (one tied high catches a chip reading all
  low, one tied low a chip reading all high);
* the failure is reported once, with the first failing line named, and again only when that line
  changes; every panel of the map goes offline, so betting cannot close and a deal tilts, as for a lamp
  that cannot be written. No key repeats while they are failed, and a key whose line reads released or
  cannot be read stops repeating at the check (a level read only ever stops a repeat);
* after :data:`RECOVER_CHECKS` clean checks in a row the map's inputs are ``read`` again and its panels
  come back by themselves: a line that fails every other second does not flap them online between.

What it cannot see without canaries: a chip with fewer than two buttons dead at open and answering
garbage without raising (an MCP23S17 whose spots read "covered"), and a key stepping for the one or two
checks before a dead chip is found (a wager made then stands; with canaries, the one check). Keeping
each seat's keys and spots on one chip, as every shipped map does, and I2C expanders (a dead one
raises), or an SPI expander's two canaries, leave neither. What it costs: one read per input
line per period; on an expander, one I2C register read each (about
0.1 ms at 400 kHz), so a seat chip of 16 inputs read once a second keeps its bus under 0.2 % busy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from drivers.gpio.backend import InputLine
from drivers.gpio.pinmap import line_name

#: Clean checks in a row before failed inputs are reported read again.
RECOVER_CHECKS: Final = 3


@dataclass(frozen=True, slots=True)
class Probe:
    """One input line as the check reads it: its chip (a dead chip's other lines are skipped) and how the
    failure names it (``input seat 1 bet_up (0x21 line 0)``)."""

    line: InputLine | None
    chip: str
    label: str
    #: A canary: a spare line tied to its idle level, which must never read active (the pin map's
    #: ``canaries``).
    canary: bool = False


def probe(line: InputLine | None, chip: str, pin: int, kind: str, seat: int | None, name: str) -> Probe:
    """A panel's input line as the check reads and names it: ``input seat 1 bet_up (0x21 line 0)``,
    ``input dealer ...``, or ``pin map canary 0 (...)``."""
    owner = "pin map" if kind == "canary" else f"input {'dealer' if seat is None else f'seat {seat}'}"
    return Probe(line, chip, f"{owner} {name} ({line_name(chip, pin)})", kind == "canary")


class InputCheck:
    """When the next check is due, and what the checks so far found (so each change is reported once)."""

    def __init__(self, period: float, now: float) -> None:
        self.period = period
        self.due = now + period
        self.failed = False
        self.detail = ""
        self._clean = 0
        #: A line that read a level its edges did not give, at the last check: (level, its last edge's seq).
        self._odd: dict[int, tuple[bool, int]] = {}
        #: The buttons of a chip that all read pressed at open (:meth:`at_open`), while they all still do.
        self._garbage: list[int] = []

    def at_open(self, probes: Sequence[Probe], buttons: Sequence[bool], levels: Sequence[bool]) -> str | None:
        """Why the levels read at open look like garbage, or None: a canary active, or every button of a
        chip (two or more) pressed. A dead SPI expander reads every register 0, every active-low line
        "active", and at open that is the panels' starting state, which no later check can doubt; nobody
        holds every button of a seat at start. A failure until one of those buttons is seen released; a
        canary's lasts until the daemon is started again on a mended chip (every line's starting level
        was garbage, and each then reads what no edge said)."""
        for k, probe in enumerate(probes):
            if probe.canary and levels[k]:
                self.failed, self.detail = True, _canary(probe)
                return self.detail
        chips: dict[str, list[int]] = {}
        for k, probe in enumerate(probes):
            if buttons[k]:
                chips.setdefault(probe.chip, []).append(k)
        for ks in chips.values():
            if len(ks) >= 2 and all(levels[k] for k in ks):
                self._garbage, self.failed = ks, True
                self.detail = (f"{probes[ks[0]].label} and every other button on its chip ({len(ks)} in all) "
                               "read pressed at start: a dead chip answering garbage? (mend it, then start "
                               "the daemon again)")
                return self.detail
        return None

    def read(self, probes: Sequence[Probe], stopping: Callable[[], bool]) -> list[bool | str | None]:
        """Every line's level now, the error a read raised (str), or None (closed, the panel ``stopping``).
        Called without the panel's lock; a dead chip's other lines are not read (each would wait too)."""
        out: list[bool | str | None] = []
        dead: dict[str, int] = {}
        for k, probe in enumerate(probes):
            if probe.line is None or stopping():
                out.append(None)
                continue
            if probe.chip in dead:
                out.append(f"not read: {probes[dead[probe.chip]].label} failed")
                continue
            try:
                out.append(probe.line.is_active)
            except OSError as exc:  # LineError, the backends' error for a dead line, is one
                dead[probe.chip] = k
                out.append(str(exc) or type(exc).__name__)
        return out

    def judge(self, probes: Sequence[Probe], read: Sequence[bool | str | None],
              edges: Sequence[tuple[bool, int]], now: float) -> Literal["failed", "read"] | None:
        """What the check ``read`` says, given each line's level as its edges gave it and its last edge's
        seq (``edges``): ``failed`` (``detail`` says why), ``read``, or None (nothing new)."""
        self.due = now + self.period
        problems: list[str] = []
        if self._garbage and all(edges[k][0] for k in self._garbage):
            problems.append(self.detail)
        else:
            self._garbage = []
        for k, level in enumerate(read):
            if isinstance(level, str):
                problems.append(f"{probes[k].label} cannot be read: {level}")
                continue
            if probes[k].canary and level:
                problems.append(_canary(probes[k]))
                continue
            if level is None or level == edges[k][0]:
                self._odd.pop(k, None)
                continue
            seen = (level, edges[k][1])
            if self._odd.get(k) == seen:
                problems.append(f"{probes[k].label} reads {'active' if level else 'inactive'}, which no edge "
                                "said: its chip's interrupts lost or its state garbage (mend it, then start "
                                "the daemon again)")
            self._odd[k] = seen
        if problems:
            self._clean = 0
            if self.failed and problems[0] == self.detail:
                return None
            self.failed, self.detail = True, problems[0]
            return "failed"
        if not self.failed:
            return None
        self._clean += 1
        if self._clean < RECOVER_CHECKS:
            return None
        self.failed, self.detail = False, ""
        return "read"


def _canary(probe: Probe) -> str:
    """The same words at start and at a check: a failure is reported again only when they change."""
    return (f"{probe.label} reads active: a line tied to its idle level, so its chip answers garbage "
            "(mend it, then start the daemon again)")

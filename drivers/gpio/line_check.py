"""Every input line read again now and then: a line that cannot be read is a fault, and a level its edges
missed is taken as an edge.

Why: inputs arrive as edges, from interrupts. An I2C expander that stops answering (a loose cable, a
brown-out) sends no more of them, and nothing else would notice: the table would take that chip's
buttons as idle and its bet sensors as unchanged, so chips lifted from a spot after betting closed
would go unseen. Lamps are written often enough that a dead chip shows in their writes
(:meth:`drivers.gpio.panel.Panel.show`), but a chip may carry only inputs. So every ``period`` seconds
(the pin map's ``input_check_s``) the panel reads every input line it opened:

* a read that raises (:class:`drivers.gpio.backend.LineError`, an OSError) makes the map's inputs ``failed``,
  reported once with the first failing line named: every panel of the map goes offline, so betting
  cannot close and a deal tilts, as for a lamp that cannot be written;
* once every line reads again, ``read``: the panels come back by themselves;
* a line whose level is not the last its edges gave (an edge lost while its chip was dead, or an
  interrupt dropped) is given that level as an edge at the check's time, debounced like any edge: chips
  lifted during the outage are seen as lifted once the chip answers, a settle time after the check.

What it costs: one read per input line per period. On the header that is a register read; on an
expander, one I2C register read each (about 0.1 ms at 400 kHz), so a seat chip of 16 inputs read once a
second keeps its bus under 0.2 % busy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from drivers.gpio.backend import InputLine


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What one check found: the lines whose level differs from their last edge (index, level read), and
    the failure state's change: ``failed`` (with the first failure's index and error), ``read``, or None."""

    missed: list[tuple[int, bool]] = field(default_factory=list)
    change: str | None = None
    failed_at: int = -1
    error: str = ""


class InputCheck:
    """When the next check is due, and whether the last one failed (so each change is reported once)."""

    def __init__(self, period: float, now: float) -> None:
        self.period = period
        self.due = now + period
        self.failed = False

    def run(self, lines: Sequence[InputLine | None], raw: Sequence[bool], now: float) -> CheckResult | None:
        """Read every line if a check is due at ``now`` (None if not); ``raw``: each line's level as its
        edges last gave it."""
        if now < self.due:
            return None
        self.due = now + self.period
        missed: list[tuple[int, bool]] = []
        first, error = -1, ""
        for k, line in enumerate(lines):
            if line is None:
                continue
            try:
                level = line.is_active
            except OSError as exc:  # LineError, the backends' error for a dead line, is one
                if first < 0:
                    first, error = k, str(exc)
                continue
            if level != raw[k]:
                missed.append((k, level))
        change = None
        if first >= 0 and not self.failed:
            change = "failed"
        elif first < 0 and self.failed:
            change = "read"
        self.failed = first >= 0
        return CheckResult(missed, change, first, error)

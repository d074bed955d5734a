"""Settle-time debounce and stuck detection for one input, with time passed in.

A contact is taken to have changed only once its new level has held for the
settle time: a bouncing press (or a chip sliding on a sensor) is one change,
and a glitch shorter than the settle time is none. The cost is that every
change is reported ``settle`` seconds late, which at 20 ms nobody at a table
can notice. Time is a parameter, not a clock read, so tests step it exactly.

A button that stays active much longer than anyone holds a button is
"stuck": a jammed switch, a shorted cable, or a panel whose connector shorts
its lines when pulled. That is reported once, and its recovery once.
"""

from __future__ import annotations

from enum import Enum


class Change(Enum):
    ACTIVE = "active"
    INACTIVE = "inactive"
    STUCK = "stuck"
    UNSTUCK = "unstuck"


class Debouncer:
    """One input's debounced level. ``edge`` records raw levels; ``poll`` reports settled changes."""

    __slots__ = ("settle", "stuck_after", "raw", "stable", "changed_at", "stable_since", "stuck")

    def __init__(self, settle: float, stuck_after: float | None, initial: bool, now: float) -> None:
        self.settle = settle
        self.stuck_after = stuck_after
        self.raw = initial
        self.stable = initial
        self.changed_at = now
        self.stable_since = now
        self.stuck = False

    def edge(self, active: bool, now: float) -> None:
        """The raw level changed at ``now`` (a repeat of the same level is ignored)."""
        if active != self.raw:
            self.raw = active
            self.changed_at = now

    def deadline(self) -> float | None:
        """When :meth:`poll` next has something to decide, or ``None``."""
        if self.raw != self.stable:
            return self.changed_at + self.settle
        if self.stuck_after is not None and self.stable and not self.stuck:
            return self.stable_since + self.stuck_after
        return None

    def poll(self, now: float) -> list[Change]:
        """Changes that have settled by ``now``, in the order they happened."""
        out: list[Change] = []
        if self.raw != self.stable and now >= self.changed_at + self.settle:
            self.stable = self.raw
            self.stable_since = self.changed_at + self.settle
            if self.stable:
                out.append(Change.ACTIVE)
            else:
                if self.stuck:
                    self.stuck = False
                    out.append(Change.UNSTUCK)
                out.append(Change.INACTIVE)
        if (self.stuck_after is not None and self.stable and not self.stuck
                and now >= self.stable_since + self.stuck_after):
            self.stuck = True
            out.append(Change.STUCK)
        return out

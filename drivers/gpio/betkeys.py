"""Entering an amount on a seat panel: press-and-hold repeat, and the key presses that reach an amount.

Stepping one table unit per press is fine for a minimum bet and useless for
a large one (1,000 units would be 1,000 presses), so a panel offers what
real bet panels offer: chip-denomination keys (``add_5``, ``add_25``, ...) and
``bet_up``/``bet_down`` that repeat while held, in growing steps. Both are
pure here (time is a parameter), so tests step them exactly; the panel
driver (:mod:`drivers.gpio.panel`) schedules the repeats on its worker.
"""

from __future__ import annotations

from collections.abc import Collection

from drivers.gpio.pinmap import BetHold, chip_key_units


class HoldRepeat:
    """One held ``bet_up``/``bet_down`` button: when it steps again and by how many units."""

    __slots__ = ("hold", "_since", "_repeats")

    def __init__(self, hold: BetHold) -> None:
        self.hold = hold
        self._since: float | None = None
        self._repeats = 0

    def press(self, now: float) -> None:
        """The button settled active at ``now`` (its first step is the press itself)."""
        self._since = now
        self._repeats = 0

    def release(self) -> None:
        self._since = None

    def deadline(self) -> float | None:
        """When the next repeat is due, or None while not held."""
        if self._since is None:
            return None
        h = self.hold
        return self._since + (h.delay_ms + self._repeats * h.interval_ms) / 1000.0

    def poll(self, now: float) -> list[int]:
        """The steps (in table units) due by ``now``, in order; empty while not held."""
        out: list[int] = []
        while (due := self.deadline()) is not None and now >= due:
            h = self.hold
            out.append(h.steps[min(self._repeats // h.accelerate_every, len(h.steps) - 1)])
            self._repeats += 1
        return out


def presses_for(selected: int, target: int, words: Collection[str], unit: int,
                min_bet: int, bet_step: int = 1) -> list[str] | None:
    """The fewest key presses from ``selected`` to ``target``; None if the keys cannot get there.

    What a player does at a panel: down to the minimum with ``clear_bet`` when
    the target is lower (else ``bet_down`` one unit at a time), then the largest
    chip keys that fit, then ``bet_up`` for the last units. ``words`` are the
    seat's buttons; amounts are minor units, ``unit`` the table's step, ``bet_step``
    the units one ``bet_up``/``bet_down`` press moves (the pin map's).
    """
    if target == selected:
        return []
    out: list[str] = []
    if target < selected:
        if "clear_bet" in words:
            out.append("clear_bet")
            selected = min_bet
        elif "bet_down" in words and (selected - target) % (unit * bet_step) == 0:
            return ["bet_down"] * ((selected - target) // (unit * bet_step))
        else:
            return None
    if (target - selected) % unit:
        return None
    left = (target - selected) // unit
    keys = sorted((u for w in words if (u := chip_key_units(w)) is not None), reverse=True)
    for units in keys:
        count, left = divmod(left, units)
        out += [f"add_{units}"] * count
    if left and ("bet_up" not in words or left % bet_step):
        return None
    return out + ["bet_up"] * (left // bet_step)

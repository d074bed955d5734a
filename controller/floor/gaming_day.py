"""The floor's gaming day: where "today" starts for every figure of the floor, in one place.

Why one definition: the pit board's tiles summed "today" from the board server's local midnight and its
``/report`` page from UTC midnight, so off UTC a pit boss saw two different "today" figures for one
table. A casino reports by one *gaming day*: a fixed daily cut-off in its local time (often 06:00), the
same for every screen and report. The tiles (``house_today``), ``/report``'s default range and
``croupier floor report --gaming-day`` all take their day from :class:`GamingDay` (docs/floor.md,
"The gaming day").

The cut-off is a wall-clock time in the floor server's time zone (``TZ``, else /etc/localtime) or an
explicit zone. Across a DST change a gaming day starts when the clock first reads the cut-off: a cut-off
in the hour skipped in spring (02:30, clocks going 02:00 -> 03:00) starts it at the jump (03:00), one in
the hour repeated in autumn at its first occurrence (summer time); so a day lasts 23, 24 or 25 hours.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Final

OPTION: Final = "--gaming-day-starts"
#: Seconds searched back from a cut-off that the clock skipped, for the jump (longer than any DST gap).
_GAP_SEARCH: Final = 2 * 86400


def parse_starts(text: str) -> time:
    """``HH:MM`` (00:00 to 23:59) as a time of day; an error argparse shows with the option's name."""
    m = re.fullmatch(r"([01]?\d|2[0-3]):([0-5]\d)", text.strip())
    if m is None:
        raise argparse.ArgumentTypeError(f"HH:MM, a time of day from 00:00 to 23:59, not {text!r}")
    return time(int(m[1]), int(m[2]))


def add_starts_option(parser: argparse.ArgumentParser) -> None:
    """``--gaming-day-starts HH:MM``, one declaration for every command that has a "today"."""
    parser.add_argument(OPTION, dest="gaming_day_starts", type=parse_starts, default=time(0, 0),
                        metavar="HH:MM",
                        help="the gaming day's daily cut-off, wall-clock time in this server's time zone "
                             "(TZ): where 'today' starts (default 00:00, midnight)")


@dataclass(frozen=True)
class GamingDay:
    """Gaming days cut at ``starts`` (wall clock) in ``zone`` (None: the server's local time zone)."""

    starts: time = time(0, 0)
    zone: tzinfo | None = None

    def _wall(self, at: float) -> datetime:
        """The clock on the wall at ``at`` (epoch seconds), as a naive datetime."""
        return datetime.fromtimestamp(at, self.zone).replace(tzinfo=None, fold=0)

    def start_on(self, day: date) -> float:
        """When gaming day ``day`` starts (epoch seconds): the first instant the clock reads ``day`` at
        or after the cut-off (the first of two readings in autumn; the jump, if spring skips it)."""
        wall = datetime.combine(day, self.starts)
        # fold=0: a repeated reading's first instant; a skipped one's instant falls after the jump.
        guess = wall.replace(tzinfo=self.zone, fold=0).timestamp()
        if self._wall(guess) == wall:
            return guess
        lo, hi = int(guess) - _GAP_SEARCH, int(guess)  # the clock reads before the cut-off at lo, after at hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._wall(mid) >= wall:
                hi = mid
            else:
                lo = mid
        return float(hi)

    def day_of(self, at: float) -> date:
        """The gaming day ``at`` is in, named by the date it starts on (06:00 cut-off: 05:59 is
        yesterday's)."""
        day = self._wall(at).date()
        return day if at >= self.start_on(day) else day - timedelta(days=1)

    def start(self, at: float) -> float:
        """When the gaming day ``at`` is in started (epoch seconds): "today" of every floor figure."""
        return self.start_on(self.day_of(at))

    def describe(self, at: float) -> str:
        """Which gaming day ``at`` is in, for a person: ``gaming day 2026-12-01 (from 06:00 GMT)``."""
        begun = self.start(at)
        clock = datetime.fromtimestamp(begun, self.zone).astimezone(self.zone)  # None: the local zone
        return f"gaming day {self.day_of(at).isoformat()} (from {clock:%H:%M %Z})"


#: Midnight in the server's local time zone: the board's "today" before gaming days had a cut-off.
MIDNIGHT: Final = GamingDay()

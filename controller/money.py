"""Money: integer minor units and exact odds.

Every amount is an ``int`` of minor units (cents): floats cannot represent
cents exactly, and a table must settle to the cent every time. Odds are kept
as a numerator and denominator so that ``19:20`` stays exact; a win is
``floor(stake * num / den)``, the house keeping the fraction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ODDS = re.compile(r"^\s*(\d{1,9})\s*:\s*(\d{1,9})\s*$")


class OddsError(ValueError):
    """Text that is not odds of the form ``num:den``."""


@dataclass(frozen=True, slots=True)
class Odds:
    """Payout odds ``num:den`` (a win of ``stake * num / den``, floored)."""

    num: int
    den: int

    def __post_init__(self) -> None:
        if self.den <= 0 or self.num < 0:
            raise OddsError(f"odds must be n:d with n >= 0 and d > 0, not {self.num}:{self.den}")

    @classmethod
    def parse(cls, text: object) -> Odds:
        """Parse ``'9:1'``. A number (YAML's reading of unquoted ``9:1``) is refused."""
        if not isinstance(text, str):
            raise OddsError(
                f"odds must be a quoted string such as '9:1', not {text!r} "
                "(unquoted 9:1 is read by YAML 1.1 as the number 541)"
            )
        m = _ODDS.match(text)
        if m is None:
            raise OddsError(f"odds must look like '9:1' or '19:20', not {text!r}")
        return cls(int(m.group(1)), int(m.group(2)))

    def win(self, stake: int) -> int:
        """The amount a winning ``stake`` gains: floored, the house keeps the fraction."""
        return stake * self.num // self.den

    def __str__(self) -> str:
        return f"{self.num}:{self.den}"


EVEN = Odds(1, 1)


def half_lost(stake: int) -> int:
    """The net of losing half a stake: the house keeps the odd cent (``-(stake - floor(stake/2))``)."""
    return -(stake - stake // 2)

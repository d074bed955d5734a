"""Money: integer minor units and exact odds.

Every amount is an ``int`` of minor units (cents): floats cannot represent
cents exactly, and a table must settle to the cent every time. Odds are kept
as a numerator and denominator so that ``19:20`` stays exact; a win is
``floor(stake * num / den)``, the house keeping the fraction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from controller.quote import quote

#: ASCII digits only, as amounts (:data:`_AMOUNT`): ``\d`` took an Arabic-Indic zero, drawn as a dot,
#: so ``1.:1`` as a reader of the table file sees it paid 10:1.
_ODDS = re.compile(r"^\s*([0-9]{1,9})\s*:\s*([0-9]{1,9})\s*$")


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
        if isinstance(text, int) and not isinstance(text, bool) and text >= 60:
            # YAML 1.1 reads unquoted n:d as a base-60 number n*60+d: give back what was written.
            written = f"{text // 60}:{text % 60}"
            raise OddsError(
                f"odds must be a quoted string such as '{written}': unquoted {written} "
                f"is read by YAML 1.1 as the number {text}; write '{written}' in quotes"
            )
        if not isinstance(text, str):
            raise OddsError(f"odds must be a quoted string such as '9:1', not {text!r}")
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


class AmountError(ValueError):
    """Text typed as an amount that is not one (``5,00``, ``5.001`` for cents, ``-5``, ``five``), or one
    past :data:`MAX_MINOR`."""


#: ASCII digits only (``\d`` took an Arabic-Indic zero, drawn as a dot: ``1٠500`` was 10,500), and a
#: thousands group never led by 0 (``0,500`` was read as 500: half a unit, typed with a decimal comma).
_AMOUNT = re.compile(r"^([1-9][0-9]{0,2}(?:,[0-9]{3})+|[0-9]+)(?:\.([0-9]+))?$")
#: The largest amount, in minor units: a signed 64-bit integer, what the wire and the journal hold.
#: Counted before converting: int() refused past 4,300 digits with its own ValueError, for programmers.
MAX_MINOR: Final = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Currency:
    """How people see and type money at a table: the currency's code and its minor units.

    Amounts are integers of minor units everywhere a machine reads them (the
    wire, the journal, ``--json``); everything a person reads shows them as
    major units with ``minor_units`` decimals (``99500`` cents is ``995.00``),
    and everything a person types is read back the same way (``5`` and ``5.00``
    are both 500 cents). ``minor_units`` is 2 for EUR/USD/GBP, 0 for JPY.
    """

    code: str = ""
    minor_units: int = 2

    def __post_init__(self) -> None:
        if not 0 <= self.minor_units <= 4:
            raise ValueError(f"minor_units must be 0..4, not {self.minor_units}")

    def format(self, minor: int) -> str:
        """``99500`` -> ``'995.00'``; ``123456789`` -> ``'1,234,567.89'``; negative with ``-``."""
        whole, frac = divmod(abs(minor), 10**self.minor_units)
        text = f"{whole:,}" + (f".{frac:0{self.minor_units}d}" if self.minor_units else "")
        return f"-{text}" if minor < 0 else text

    def signed(self, minor: int) -> str:
        """A result: ``+5.00`` (a win), ``-5.00`` (a loss), ``0.00`` (a push: no sign, and no space in its
        place, which read as a double space in ``house net  0.00``)."""
        return ("+" if minor > 0 else "-" if minor < 0 else "") + self.format(abs(minor))

    def parse(self, text: str) -> int:
        """What a person typed (``5``, ``5.00``, ``1,000.50``) in minor units; :class:`AmountError` else."""
        m = _AMOUNT.match(text.strip())
        decimals = m.group(2) if m else None
        if m is None or (decimals is not None and len(decimals) > self.minor_units):
            example = "5" if not self.minor_units else f"5 or 5.{'0' * self.minor_units}"
            unit = f"{self.minor_units} decimal{'s' if self.minor_units != 1 else ''}"
            code = f"{self.code}, " if self.code else ""
            raise AmountError(f"an amount is written like {example} ({code}{unit} at most), "
                              f"not {quote(text)}")
        digits = m.group(1).replace(",", "").lstrip("0") or "0"  # leading zeros are no size (a review)
        minor = MAX_MINOR + 1
        if len(digits) <= len(str(MAX_MINOR)):
            scale: int = 10**self.minor_units
            minor = int(digits) * scale + int((decimals or "").ljust(self.minor_units, "0") or "0")
        if minor > MAX_MINOR:
            raise AmountError(f"{quote(text)} is too large: the largest amount is {self.format(MAX_MINOR)}")
        # With 3 decimals, "5,000" is five thousand to some and 5.000 to others: its decimals are asked for.
        if "," in m.group(1) and decimals is None and self.minor_units == 3:
            raise AmountError(f"{quote(text)} is ambiguous at 3 decimals (a thousands comma, or a decimal "
                              f"one?): write {digits} or {m.group(1)}.000 for thousands")
        return minor

    def to_dict(self) -> dict[str, object]:
        return {"code": self.code, "minor_units": self.minor_units}

    @classmethod
    def from_dict(cls, data: object) -> Currency:
        """From a daemon reply's ``currency`` object; the default when a reply has none."""
        if not isinstance(data, dict):
            return cls()
        return cls(str(data.get("code", "")), int(data.get("minor_units", 2)))


#: Two decimals, no code: what a table without a ``currency`` key uses.
DEFAULT_CURRENCY = Currency()


def round_decimals(record: Mapping[str, Any], currency: Mapping[str, Any]) -> int:
    """The decimals a recorded round's amounts are in: its record's ``minor_units`` (those in force when
    it was played: a ``limits`` row may change them between rounds), else (a record from before they
    were recorded) its table's ``currency``'s. The one rule of recall, the floor's report, the pit board
    and the alerts, so a round is never shown at one scale in one place and another elsewhere."""
    own = record.get("minor_units")
    return int(currency.get("minor_units", 2) if own is None else own)

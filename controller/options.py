"""Shared pieces of configuration models (pydantic), used by every game's options.

Options are read once at start and validated strictly: an unknown key, a
wrong type or odds written as a bare number stop the start with the key named.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, PlainSerializer

from controller.money import Odds, OddsError


def _odds(value: object) -> Odds:
    if isinstance(value, Odds):
        return value
    try:
        return Odds.parse(value)
    except OddsError as exc:
        raise ValueError(str(exc)) from None


#: Odds in a table or scenario file: a quoted ``'n:d'`` string; a number is refused.
OddsText = Annotated[Odds, BeforeValidator(_odds), PlainSerializer(str, return_type=str)]


def odds_in(*allowed: str) -> AfterValidator:
    """Restrict an :data:`OddsText` option to the odds its rules allow (e.g. ``'9:1'`` or ``'8:1'``)."""

    def check(odds: Odds) -> Odds:
        if str(odds) not in allowed:
            raise ValueError(f"must be one of {', '.join(repr(a) for a in allowed)}, not '{odds}'")
        return odds

    return AfterValidator(check)

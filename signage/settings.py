"""The ``display:`` section of a table file: how the table's signage screen looks.

Money is written as the table file's ``currency`` section says (one way to
write amounts for the whole product); the display only adds its sign.

Validated with the rest of the table file (an unknown key or a wrong value
stops ``croupier run`` and ``croupier display`` naming the key), so a screen
on the floor never shows a default by accident of a typo.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class DisplaySpec(BaseModel):
    """Title, language, layout and money sign of a table's signage screen."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The big name at the top of the screen (default: the table file's description, else its id).
    title: str | None = Field(default=None, max_length=60)
    #: Language of every word on the screen (zh-Hans, zh-Hant: Simplified and Traditional Chinese).
    language: Literal["en", "fr", "es", "zh-Hans", "zh-Hant", "vi", "th", "ko"] = "en"
    #: ``auto`` follows the screen (portrait when it is taller than wide); the others force a layout.
    layout: Literal["auto", "landscape", "portrait"] = "auto"
    #: The money sign shown before amounts (``€``); default: the table's ``currency.code`` and a space.
    #: Amounts themselves are written as the table's ``currency`` says (its ``minor_units``).
    symbol: str | None = Field(default=None, max_length=4)
    #: Seconds without a message from the table (event, heartbeat, lamps) and no snapshot reply before
    #: the screen says "no live feed": three of the daemon's default 1 s heartbeats.
    stale_after: float = Field(default=3.0, gt=0.5, le=300.0)

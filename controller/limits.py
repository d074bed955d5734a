"""Table limits: seats, the betting unit, the minimum and maximum wager, the currency's decimals."""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict, Field, model_validator

from controller.money import Currency

#: The most seats a table has.
MAX_SEATS: Final = 12


class TableLimits(BaseModel):
    """Seats and betting limits (minor units). Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seats: int = Field(strict=True, default=7, ge=1, le=MAX_SEATS)
    unit: int = Field(strict=True, default=100, ge=1)
    min_bet: int = Field(strict=True, default=100, ge=1)
    max_bet: int = Field(strict=True, default=1_000_000, ge=1)
    #: Largest single credit in or out (minor units); a command beyond it is refused, never journaled.
    max_credit: int = Field(strict=True, default=100_000_000, ge=1)
    #: The currency's decimals (the table file's ``currency.minor_units``): how refusals show amounts.
    minor_units: int = Field(strict=True, default=2, ge=0, le=4)

    @property
    def money(self) -> Currency:
        """How this table's messages show an amount (``995.00``)."""
        return Currency(minor_units=self.minor_units)

    @model_validator(mode="after")
    def _consistent(self) -> TableLimits:
        if self.min_bet % self.unit or self.max_bet % self.unit:
            raise ValueError("min_bet and max_bet must be multiples of unit")
        if self.min_bet > self.max_bet:
            raise ValueError("min_bet must not exceed max_bet")
        return self

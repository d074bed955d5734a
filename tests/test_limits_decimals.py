"""A change of the currency's decimals never waits for a round in play: it is refused at the start.

A change found mid-round is journaled at the round's end (docs/daemon.md,
"Limits"), but the rest of that round's commands are typed in the table
file's currency: a decimals change pending there would read "50.00" in the
new decimals while the table still counts the old minor units. So the
decimals change only between rounds with no money held, at once.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_limits_journal import config, open_service, refused_start

from controller import inputs as I

pytestmark = pytest.mark.timeout(30)


def test_a_decimals_change_found_mid_round_is_refused_even_with_no_money_held(tmp_path: Path) -> None:
    live = open_service(config(tmp_path, 100, 1000))
    live.replay()
    for inp in (I.NewShoe(), I.OpenBetting()):  # a round in play, no seat holding anything
        assert live.submit(inp, "test", at=1.0).refused is None
    assert live.table.phase == "betting" and not any(live.table.credits.values())
    live.journal.close()
    refused_start(config(tmp_path, 100, 1000, minor_units=0),
                  "currency.minor_units 2 -> 0 while a round is in play")


def test_a_decimals_change_between_rounds_with_no_money_held_takes_effect_at_once(tmp_path: Path) -> None:
    live = open_service(config(tmp_path, 100, 1000))
    live.replay()
    live.journal.close()
    again = open_service(config(tmp_path, 100, 1000, minor_units=0))
    again.replay()
    assert again.table.limits.minor_units == 0 and again.journal.last_id == 1  # the change, journaled
    again.journal.close()

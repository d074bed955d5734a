"""The simulation tools' shared statistics and chunked runs."""

from __future__ import annotations

import math
import statistics

import pytest

from controller.games.baccarat.simulation import simulate
from controller.simulation.montecarlo import chunks, mean_interval


def test_mean_interval_matches_the_textbook_formula() -> None:
    data = [3, -1, 4, -1, -5, 9, 2, -6]
    mean, half = mean_interval(sum(data), sum(x * x for x in data), len(data))
    assert mean == pytest.approx(statistics.fmean(data))
    assert half == pytest.approx(1.96 * statistics.stdev(data) / math.sqrt(len(data)))
    with pytest.raises(ValueError):
        mean_interval(1, 1, 1)


def test_chunks_cover_the_run_exactly() -> None:
    assert list(chunks(120, 50)) == [(0, 50), (1, 50), (2, 20)]
    assert sum(n for _, n in chunks(1_000_001, 50_000)) == 1_000_001


@pytest.mark.timeout(120)
def test_the_answer_does_not_depend_on_the_number_of_workers() -> None:
    one = simulate(60_000, seed=9, decks=8, tie_pays="9:1", workers=1)
    two = simulate(60_000, seed=9, decks=8, tie_pays="9:1", workers=2)
    assert one == two and one.rounds == 60_000

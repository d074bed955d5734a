"""The caches added for speed (DeckProfile.kept, sharpness's identity cache) must never hand back a value
made from inputs that have since changed: each claims the same results as making the value afresh."""

from __future__ import annotations

import numpy as np
import pytest
from vision_support import profile

from vision import sharpness
from vision.profile import DeckProfile


@pytest.mark.timeout(60)
def test_a_kept_value_is_not_one_made_from_aspects_changed_while_it_was_made() -> None:
    """kept() copies the aspects after make() has run: an edit made meanwhile (another thread) is taken as
    what the value was made from, and the value made from the old aspects is then kept for the new ones."""
    deck = profile()
    mine = DeckProfile(deck.spec, dict(deck.ranks), dict(deck.suits), None, dict(deck.aspects))
    mine.aspects["offset:A"] = 0.1

    def make() -> float:
        value = mine.aspects["offset:A"]
        mine.aspects["offset:A"] = 0.2  # another thread's edit, while the value is being made
        return value

    mine.kept("offset", make)
    assert mine.kept("offset", lambda: mine.aspects["offset:A"]) == 0.2


@pytest.mark.timeout(60)
def test_a_read_only_views_blur_follows_the_bytes_it_shows() -> None:
    """blurred() finds a read-only template by its identity: a read-only view of a writeable array shows
    other bytes once that array changes, and its blur must be of those bytes (as a cache by bytes gives)."""
    base = np.random.default_rng(0).random((40, 30)).astype(np.float32)
    view = base[:]
    view.setflags(write=False)
    sharpness.blurred(view, 1.0)
    base[:] = 0
    assert not sharpness.blurred(view, 1.0).any()

"""A profile's template stacks (vision/stack.py, kept by vision/profile.py, read by vision/compare.py):
built once, the same correlations to the last bit as templates stacked per call, rebuilt when a
template is replaced, and no part of what a profile saves or compares equal by."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from vision_support import profile

from vision.compare import correlations
from vision.profile import load_profile, save_profile
from vision.stack import Stack


def test_a_kept_stack_gives_the_correlations_of_templates_stacked_per_call() -> None:
    deck = profile()
    rng = np.random.default_rng(3)
    glyph = np.clip(deck.ranks["8"] + rng.normal(0, 0.1, deck.ranks["8"].shape), 0, 1).astype(np.float32)
    some = ["6", "8", "9", "Q"]
    kept = deck.stack("rank", some)
    assert deck.stack("rank", some) is kept  # built once
    assert correlations(glyph, kept) == correlations(glyph, [deck.ranks[r] for r in some])  # bit for bit
    # ... and what OpenCV's normalised correlation gives for the one position
    for name, score in zip(some, correlations(glyph, kept), strict=True):
        cv = cv2.matchTemplate(glyph, deck.ranks[name], cv2.TM_CCOEFF_NORMED)[0, 0]
        assert abs(score - float(cv)) < 1e-4
    assert correlations(glyph, deck.stack("rank", [])) == []
    assert deck.stack("suit").built_from(list(deck.suits.values()))  # all of a kind, in the profile's order


def test_a_replaced_template_is_stacked_again() -> None:
    deck = profile()
    copy = type(deck)(deck.spec, dict(deck.ranks), dict(deck.suits), None, dict(deck.aspects))
    before = copy.stack("suit")
    copy.suits["S"] = copy.suits["C"]
    after = copy.stack("suit")
    assert after is not before and after.built_from(list(copy.suits.values()))
    assert correlations(deck.suits["C"], after) == correlations(deck.suits["C"], list(copy.suits.values()))


def test_a_loaded_profile_builds_its_stacks_and_saves_and_compares_without_them(tmp_path: Path) -> None:
    deck = profile()
    path = tmp_path / "house.yaml"
    save_profile(deck, path)
    loaded = load_profile(path)
    twin = type(loaded)(loaded.spec, loaded.ranks, loaded.suits, loaded.path, loaded.aspects)
    stack = loaded.stack("rank")
    assert isinstance(stack, Stack) and stack.built_from(list(loaded.ranks.values()))
    fresh = Stack.of(list(loaded.ranks.values()))
    assert np.array_equal(stack.rows, fresh.rows) and np.array_equal(stack.energy, fresh.energy)
    assert loaded == twin and "_stacks" not in repr(loaded)  # equal as before, stacks or not
    save_profile(loaded, tmp_path / "again.yaml")
    assert "stack" not in (tmp_path / "again.yaml").read_text(encoding="utf-8")


def test_a_template_cannot_be_changed_in_place_behind_its_kept_stack() -> None:
    """The kept stack knows a template by identity: an edit in place would leave it stale, so a
    profile's templates refuse one (replacing a template, above, is the way)."""
    deck = profile()
    deck.stack("rank")
    try:
        deck.ranks["8"][0, 0] = 0.5
    except ValueError:
        pass
    else:
        raise AssertionError("a profile's template was changed in place")
    assert deck.stack("rank").built_from(list(deck.ranks.values()))


def test_two_profiles_loaded_apart_compare_by_their_deck_not_raise(tmp_path: Path) -> None:
    """``==`` of two loads of one deck is True (it raised ValueError, comparing arrays with ``==``);
    a changed template or a different deck is not equal; where it was loaded from is no part of it."""
    deck = profile()
    save_profile(deck, tmp_path / "a.yaml")
    save_profile(deck, tmp_path / "b.yaml")
    a, b = load_profile(tmp_path / "a.yaml"), load_profile(tmp_path / "b.yaml")
    assert a == b
    suits = dict(b.suits)
    suits["S"] = suits["C"]
    changed = type(b)(b.spec, b.ranks, suits, b.path, b.aspects)
    assert a != changed and a != "house"

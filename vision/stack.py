"""A deck's templates stacked for correlation, built once per profile (:mod:`vision.compare` uses them).

Why a module of its own: the profile (:mod:`vision.profile`) keeps its stacks and the comparison
(:mod:`vision.compare`) reads them, and the comparison already imports the profile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray


@dataclass(frozen=True, eq=False)
class Stack:
    """Templates of one size as :func:`vision.compare.correlations` uses them: one float64 row each,
    centred on its mean, and each row's energy (its sum of squares).

    Why kept: restacking a deck's templates on every glyph cost 0.2-0.4 ms a frame, more than the
    correlations; the templates do not change once enrolled, so a profile builds each stack once
    (:meth:`vision.profile.DeckProfile.stack`). Each row is the same arithmetic as when built per call,
    so the correlations are the same to the last bit.
    """

    #: The template arrays it was built from, in order: a stack whose templates were replaced is stale.
    templates: tuple[MatLike, ...]
    rows: NDArray[np.float64]
    energy: NDArray[np.float64]

    @classmethod
    def of(cls, templates: Sequence[MatLike]) -> Stack:
        """``templates`` stacked (none: an empty stack)."""
        if not templates:
            return cls((), np.zeros((0, 0)), np.zeros(0))
        rows = np.stack(templates).reshape(len(templates), -1).astype(np.float64)
        rows -= rows.mean(axis=1, keepdims=True)
        return cls(tuple(templates), rows, (rows * rows).sum(axis=1))

    def built_from(self, templates: Sequence[MatLike]) -> bool:
        """Whether this stack holds exactly ``templates`` (the same arrays, in the same order)."""
        return len(templates) == len(self.templates) and all(
            a is b for a, b in zip(templates, self.templates, strict=True))

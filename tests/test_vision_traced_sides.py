"""An outline fitted to a bright region is kept only when each of its sides runs along the region's own
contour: a side fitted across the face (a polygon corner on a patch of table joined to the card) is
not the card's edge, and warping by it would shrink and cut the indices."""

from __future__ import annotations

import cv2
import numpy as np

from vision.sides import side_support, side_supports, traced_sides

SHAPE = (240, 320)
CARD = np.array([(60.0, 40.0), (170.0, 40.0), (170.0, 194.0), (60.0, 194.0)], np.float32)


def region_contour(polygon: np.ndarray) -> np.ndarray:
    """The external contour (N x 2) of ``polygon`` filled in a working-size mask."""
    mask = np.zeros(SHAPE, np.uint8)
    cv2.fillConvexPoly(mask, np.round(polygon).astype(np.int32), 255)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return np.asarray(contours[0], np.int32).reshape(-1, 2)


def test_the_cards_own_outline_runs_along_its_contour() -> None:
    assert traced_sides(CARD, region_contour(CARD), SHAPE)


def test_a_side_fitted_across_the_face_is_not_the_cards_edge() -> None:
    """The left side swung across the face by 25 degrees about its top corner: it leaves the contour
    after its first quarter, as the side fitted through a joined patch of table does."""
    across = CARD.copy()
    across[3] = (60.0 + 154.0 * np.tan(np.radians(25.0)), 194.0)
    assert not traced_sides(across, region_contour(CARD), SHAPE)


def test_a_side_a_few_pixels_off_the_contour_still_runs_along_it() -> None:
    """A thresholded, blurred edge puts the fitted side up to two pixels off the traced contour."""
    near = CARD + np.array([(-2.0, 0.0), (2.0, 0.0), (2.0, 2.0), (-2.0, 2.0)], np.float32)
    assert traced_sides(near, region_contour(CARD), SHAPE)


def test_the_joined_card_searchs_sides_measured_together_are_each_outlines_own() -> None:
    """The joined-card search measures its candidate outlines' sides in one pass (vision.sides.side_supports):
    each outline's shares are exactly what it gets measured alone, wherever it lies (partly off the frame
    too), so batching changes no outline the search keeps."""
    rng = np.random.default_rng(11)
    seen = np.zeros(SHAPE, np.uint8)
    seen[rng.random(SHAPE) < 0.3] = 255
    quads = [CARD + rng.normal(0, 40, (4, 2)).astype(np.float32) for _ in range(30)]
    one_by_one = [side_support(q, seen) for q in quads]
    assert side_supports(quads, seen) == one_by_one and side_supports([], seen) == []
    assert len({tuple(s) for s in one_by_one}) == len(quads) and all(len(s) == 4 for s in one_by_one)


def sampled_one_by_one(q: np.ndarray, seen: np.ndarray) -> list[float]:
    """:func:`side_support` by its definition, one sample at a time: each side's middle 80 % sampled about
    once a pixel (float32 points, rounded), a hit where the point is in the frame and ``seen``."""
    h, w = seen.shape
    shares = []
    for i in range(4):
        start, step = q[i], q[(i + 1) % 4] - q[i]
        n = max(int(np.hypot(step[0], step[1])), 2)
        hits = 0
        for k in range(n):
            x, y = np.round(start + np.float32(0.1 + 0.8 * k / (n - 1)) * step).astype(np.int32)
            hits += int(0 <= x < w and 0 <= y < h and seen[y, x] > 0)
        shares.append(hits / n)
    return shares


def test_sides_running_far_off_the_frame_are_measured_as_sample_by_sample() -> None:
    """Two nearly parallel runs meet far off the frame: such a candidate's sides are several frames long,
    and only the samples that can fall in the frame are made. Each share is still exactly the one the
    definition gives (the hits in the frame over every sample of the side), for sides wholly off the
    frame, crossing it, along its rim, axis-parallel, and ending on half pixels."""
    rng = np.random.default_rng(28)
    for _ in range(60):
        h, w = (int(v) for v in rng.integers(20, 200, 2))
        seen = np.where(rng.random((h, w)) < 0.5, 255, 0).astype(np.uint8)
        quads = []
        for spread in (w / 4, w, 5 * w, 40 * w):
            q = rng.normal([w / 2, h / 2], spread, (4, 2)).astype(np.float32)
            q[1, 0] = q[0, 0] if rng.random() < 0.3 else q[1, 0]  # a side along the y axis
            q[2, 1] = q[1, 1] if rng.random() < 0.3 else q[2, 1]  # one along the x axis
            q[3] = np.round(q[3]) + 0.5 if rng.random() < 0.3 else q[3]
            quads.append(q)
        quads.append(np.array([(-1.0, 0.0), (w, 0.0), (w, h - 1.0), (-1.0, h - 1.0)], np.float32))
        rng.shuffle(quads)  # and wholly off the frame, last or first: sides with no sample in the frame
        quads.append(np.array([(-9.0, -9.0), (-3.0, -9.0), (-3.0, -3.0), (-9.0, -3.0)], np.float32))
        quads.insert(0, quads[-1] + np.float32(2 * w))
        assert side_supports(quads, seen) == [sampled_one_by_one(q, seen) for q in quads]
        assert side_supports(quads[1:-1], seen) == [sampled_one_by_one(q, seen) for q in quads[1:-1]]

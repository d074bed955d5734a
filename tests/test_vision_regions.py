"""vision.regions.components: OpenCV's default 8-connected labelling, exactly, at its lower cost."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.regions import MOST_16BIT, areas, components, labelled


@pytest.mark.parametrize("size", [(1, 160), (160, 160), (360, 480), (563, 480)])
def test_the_regions_are_exactly_opencvs_default_ones(size: tuple[int, int]) -> None:
    """The ink search, the back's field and an index's pieces are labelled with 16-bit labels for their
    lower cost: the count, the labels, the statistics (boxes, areas) and the centroids must be exactly
    those of OpenCV's default 8-connected labelling, on masks of any density, speckled, swollen or
    thinned, so no stage finds other pieces than before."""
    rng = np.random.default_rng(sum(size))
    for _ in range(60 if size[0] * size[1] > 30_000 else 200):
        h, w = int(rng.integers(1, size[0] + 1)), int(rng.integers(1, size[1] + 1))
        mask = ((rng.random((h, w)) < rng.random()) * 255).astype(np.uint8)
        if rng.random() < 0.5:
            morph = cv2.dilate if rng.random() < 0.5 else cv2.erode
            mask = morph(mask, np.ones((2, 3), np.uint8))
        n, labels, stats, centroids = cv2.connectedComponentsWithStats(mask, connectivity=8)
        got = components(mask)
        assert got[0] == n
        assert np.array_equal(got[1].astype(np.int32), labels)
        assert np.array_equal(got[2], stats)
        assert np.array_equal(got[3], centroids, equal_nan=True)  # no background: its centroid is NaN


def test_a_mask_with_more_regions_than_16_bits_count_is_labelled_whole() -> None:
    """A checkerboard of lone pixels two apart: more regions than a 16-bit label holds (a 16-bit label
    image would wrap and merge them); every one is its own region with 32-bit labels."""
    mask = np.zeros((530, 530), np.uint8)
    mask[::2, ::2] = 255
    regions = int(np.count_nonzero(mask))
    assert regions > MOST_16BIT
    n, labels, stats, _ = components(mask)
    assert n == regions + 1 and labels.dtype == np.int32 and int(labels.max()) == regions
    assert np.all(stats[1:, cv2.CC_STAT_AREA] == 1)


@pytest.mark.parametrize("seed", range(4))
def test_a_large_mask_labelled_within_its_inks_box_is_labelled_as_a_whole(seed: int) -> None:
    """A large mask whose set pixels lie in a box well short of it is labelled within that box only (its
    origin moved to even columns and rows): the count, labels, statistics and centroids, the background's
    too, must still be exactly OpenCV's of the whole mask, wherever the box lies (at an edge, a corner, an
    odd origin, a single pixel), so the ink search finds the same pieces as before."""
    rng = np.random.default_rng(1000 + seed)
    for _ in range(80):
        h, w = int(rng.integers(150, 400)), int(rng.integers(150, 520))
        bh, bw = int(rng.integers(1, h // 2)), int(rng.integers(1, w // 2))
        y, x = int(rng.integers(0, h - bh + 1)), int(rng.integers(0, w - bw + 1))
        if rng.random() < 0.3:  # against an edge or a corner of the mask
            y, x = (0 if rng.random() < 0.5 else h - bh), (0 if rng.random() < 0.5 else w - bw)
        mask = np.zeros((h, w), np.uint8)
        mask[y:y + bh, x:x + bw] = ((rng.random((bh, bw)) < rng.random()) * 255).astype(np.uint8)
        if rng.random() < 0.5:
            mask = cv2.dilate(mask, np.ones((2, 3), np.uint8))
        n, labels, stats, centroids = cv2.connectedComponentsWithStats(mask, connectivity=8)
        got = components(mask)
        assert got[0] == n
        assert np.array_equal(got[1].astype(np.int32), labels)
        assert np.array_equal(got[2], stats)
        assert np.array_equal(got[3], centroids, equal_nan=True)


@pytest.mark.parametrize("size", [(90, 120), (530, 530)])
def test_the_areas_of_labels_are_their_pixel_counts_under_a_mask_or_not(size: tuple[int, int]) -> None:
    """A region's size (a back's field) and a piece's pixels of one kind (an index's faded ink) are counted
    from the labels alone, 16-bit or, past 16 bits' count, 32-bit: the same numbers as OpenCV's statistics
    without a mask, and as numpy's count of the labels under one."""
    rng = np.random.default_rng(size[0])
    mask = ((rng.random(size) < 0.45) * 255).astype(np.uint8)
    if size[0] > 500:  # lone pixels two apart: more regions than 16 bits count, 32-bit labels
        mask[::2, ::2] = 255
    n, labels = labelled(mask)
    assert labels.dtype == (np.int32 if size[0] > 500 else np.uint16)
    stats = cv2.connectedComponentsWithStats(mask, connectivity=8)[2]
    assert np.array_equal(areas(labels, n), stats[:, cv2.CC_STAT_AREA])
    under = ((rng.random(size) < 0.5) * 255).astype(np.uint8)
    expected = np.bincount(labels.astype(np.int64).ravel()[under.ravel() > 0], minlength=n)
    assert np.array_equal(areas(labels, n, under), expected)

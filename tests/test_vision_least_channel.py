"""vision.levels.least_channel: the least of blue, green and red per pixel, for BGR frames only."""

from __future__ import annotations

import numpy as np
import pytest

from vision.levels import least_channel


@pytest.mark.timeout(60)
def test_the_least_channel_is_numpys_minimum_over_the_channels() -> None:
    """Red ink is as dark as black in the least channel (the search by indices finds both so): the values
    must be numpy's minimum over the three channels, on a contiguous frame and on a strided view of one."""
    rng = np.random.default_rng(7)
    frame = rng.integers(0, 256, (61, 83, 3), dtype=np.uint8)
    assert np.array_equal(least_channel(frame), frame.min(axis=2))
    view = frame[::2, 1::3]
    assert np.array_equal(least_channel(view), view.min(axis=2))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("shape", [(40, 30), (40, 30, 1), (40, 30, 4)])
def test_a_frame_that_is_not_bgr_is_refused_naming_its_shape(shape: tuple[int, ...]) -> None:
    """A grey or BGRA frame is not silently read by its first three channels (or refused by OpenCV in its
    own words): the recogniser converts such frames to BGR first, and a caller that does not is told."""
    with pytest.raises(ValueError, match=r"BGR frame, not one of shape"):
        least_channel(np.zeros(shape, np.uint8))

"""A hand-edited deck profile: a box or glyph area that cannot fit the face is named before any read."""

from __future__ import annotations

from pathlib import Path

import pytest
from vision_support import profile

from vision.profile import ProfileError, load_profile, save_profile


def _saved(tmp_path: Path) -> Path:
    path = tmp_path / "decks" / "house.yaml"
    path.parent.mkdir()
    save_profile(profile(), path)
    return path


def _edit(path: Path, key: str, values: list[int]) -> None:
    """Replace the four numbers under ``index.<key>`` (the YAML lists them one per line)."""
    lines = path.read_text().splitlines()
    at = lines.index(f"  {key}:")
    lines[at + 1 : at + 5] = [f"  - {v}" for v in values]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    ("key", "values", "named"),
    [
        ("box", [0, 0, 320, 100], r"key 'index\.box'.*x1 <= 300"),  # past the face's right edge
        ("box", [0, 150, 74, 250], r"key 'index\.box'.*upper half"),  # the index cannot be mid-face
        ("box", [74, 0, 0, 100], r"key 'index\.box'"),  # corners swapped
        ("glyphs", [10, 12, 90, 88], r"key 'index\.glyphs'.*not inside the index box"),
        ("glyphs", [10, 12, 10, 88], r"key 'index\.glyphs'"),  # no width
    ],
)
def test_an_index_that_cannot_fit_the_face_is_named(
    tmp_path: Path, key: str, values: list[int], named: str
) -> None:
    path = _saved(tmp_path)
    load_profile(path)  # as enrolled: accepted
    _edit(path, key, values)
    with pytest.raises(ProfileError, match=named):
        load_profile(path)


def test_a_glyph_taller_than_its_box_is_named(tmp_path: Path) -> None:
    path = _saved(tmp_path)
    text = path.read_text()
    height = next(line for line in text.splitlines() if line.startswith("  rank_height:"))
    path.write_text(text.replace(height, "  rank_height: 140.0"))
    with pytest.raises(ProfileError, match=r"key 'index\.rank_height'.*taller than the index box"):
        load_profile(path)

"""Files the project creates outside the daemon's state dir (tests/test_private_files.py has those): private
from their first byte, and whole.

A deck profile (its YAML and templates), an image file (the writer of audit frames and photo sets; the
daemon's own audit frame is checked in tests/test_vision_daemon.py) and a child's or a server's log
are made under a permissive umask here (0000: every bit the process may set, it would) and must still
be 0600 (folders 0700); a deck profile's save cut short before its YAML is written must leave the
profile on disk loading exactly as before.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from vision_support import profile

from controller.daemon.private import open_log
from controller.tools.children import start_child
from vision import profile as profile_module
from vision.image_file import write_image
from vision.profile import load_profile, save_profile


@pytest.fixture()
def open_umask() -> Iterator[None]:
    before = os.umask(0)
    try:
        yield
    finally:
        os.umask(before)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_saved_deck_profile_and_its_templates_are_private(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "decks" / "house.yaml"
    path.parent.mkdir()
    folder = save_profile(profile(), path)
    assert mode(path) == 0o600
    assert folder.parent == path.parent and mode(folder) == 0o700
    pngs = list(folder.rglob("*.png"))
    assert len(pngs) == 17 and all(mode(p) == 0o600 for p in pngs)
    assert all(mode(d) == 0o700 for d in folder.iterdir())
    assert not list(tmp_path.rglob("*.partial"))


def test_a_new_save_replaces_the_templates_and_keeps_no_earlier_folder(tmp_path: Path) -> None:
    path = tmp_path / "house.yaml"
    legacy = tmp_path / "house" / "ranks"  # the layout before content-named folders
    legacy.mkdir(parents=True)
    (legacy / "Q.png").write_bytes(b"old")
    first = save_profile(profile("classic"), path)
    second = save_profile(profile("bold"), path)
    assert first != second and not first.exists() and not (tmp_path / "house").exists()
    assert [p.name for p in tmp_path.iterdir() if p.is_dir()] == [second.name]
    assert load_profile(path).spec.deck == profile("bold").spec.deck != profile("classic").spec.deck


def test_a_save_cut_short_before_its_yaml_leaves_the_old_profile_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "house.yaml"
    save_profile(profile("classic"), path)
    before = load_profile(path)
    real = profile_module.write_atomic

    def power_cut_at_the_yaml(target: Path, text: str | bytes, *args: object) -> None:
        if target == path:
            raise OSError("power cut")
        real(target, text)

    monkeypatch.setattr(profile_module, "write_atomic", power_cut_at_the_yaml)
    with pytest.raises(OSError, match="power cut"):
        save_profile(profile("bold"), path)
    monkeypatch.undo()
    after = load_profile(path)
    assert after.spec == before.spec
    for kind in ("ranks", "suits"):
        old, new = getattr(before, kind), getattr(after, kind)
        assert old.keys() == new.keys() and all(np.array_equal(old[k], new[k]) for k in old)
    save_profile(profile("bold"), path)  # the next save clears the cut one's folder too
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 1


def test_an_image_file_is_private_and_never_half_written(tmp_path: Path, open_umask: None) -> None:
    target = tmp_path / "frame.jpg"
    write_image(target, np.full((40, 60, 3), 200, np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert mode(target) == 0o600 and target.read_bytes()[:2] == b"\xff\xd8"  # a whole JPEG
    with pytest.raises(OSError, match="frame.nope"):
        write_image(tmp_path / "frame.nope", np.zeros((4, 4, 3), np.uint8))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frame.jpg"]


def test_a_childs_log_is_private_and_a_servers_log_is_appended_to(tmp_path: Path, open_umask: None) -> None:
    log = tmp_path / "child.log"
    child = start_child(["--help"], log)
    assert child.wait(timeout=60) is not None
    assert mode(log) == 0o600 and log.stat().st_size > 0
    server = tmp_path / "server.log"
    for line in (b"first start\n", b"second start\n"):
        with open_log(server) as out:
            out.write(line)
    assert mode(server) == 0o600 and server.read_bytes() == b"first start\nsecond start\n"
    with open_log(log, append=False) as out:  # a child started again begins an empty log
        out.write(b"again\n")
    assert log.read_bytes() == b"again\n"

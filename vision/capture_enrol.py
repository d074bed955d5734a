"""Enrolment from a camera: the operator shows the 52 faces one by one when prompted.

For each card the prompt names it; after Enter (or at once with
``--no-prompt``) frames are read until one clean card outline is seen in
several frames running, and that frame is saved into the shots folder
(``QH-1.jpg``) beside a ``labels.csv``, so the enrolment can be re-run from
the saved photographs and a bad shot can be replaced by hand.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import cv2

from controller.cards import DECK, Card
from controller.daemon.private import make_dir, write_atomic
from controller.digits import whole_number
from vision.detect import find_card
from vision.enroll import EnrolError
from vision.image_file import write_image
from vision.profile import FACE_SIZE
from vision.recognise import Image
from vision.sources import CaptureSource, FrameSource, ReplaySource, SourceError

#: Frames in a row that must show one clean card before it is taken.
STEADY = 3
#: Seconds to wait for a card before giving up.
TIMEOUT = 30.0


def open_source(camera: str, size: tuple[int, int] = (640, 480)) -> FrameSource:
    """``0``/``/dev/video0``: a camera, asked for frames of ``size`` (the table file's width and height, as
    the daemon will see them); a folder or a video file: replayed (tests, recorded sessions)."""
    path = Path(camera)
    try:
        if (index := whole_number(camera, 3)) is not None:
            return CaptureSource(index, *size)
        if path.is_dir() or (path.is_file() and not str(path).startswith("/dev/")):
            return ReplaySource(path)
        return CaptureSource(camera, *size)
    except SourceError as exc:
        raise EnrolError(str(exc)) from None


def _steady_card(source: FrameSource, what: str, prompt: bool) -> Image:
    """A frame of a card read steadily (:data:`STEADY` frames running); ``what``: the card asked for, named
    when none comes."""
    run = 0
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        frame = source.read()
        if frame is None:
            if isinstance(source, ReplaySource):
                raise EnrolError(f"the replayed frames ran out while waiting for {what}"
                                 + ("" if prompt else " (without a prompt, each card is taken once the "
                                    "window has shown no card after the one before)"))
            time.sleep(0.05)
            continue
        run = run + 1 if find_card(frame, FACE_SIZE).status == "card" else 0
        if run >= STEADY:
            return frame
    raise EnrolError(f"no card seen steadily in the window for {TIMEOUT:g} s, waiting for {what}")


def shoot_deck(
    camera: str, folder: Path, shots: int = 1, prompt: bool = True, size: tuple[int, int] = (640, 480),
) -> list[tuple[Image, Card, str]]:
    """Prompt for each face, keep a steady frame of it, and return (frame, card, file) for enrolment."""
    make_dir(folder)
    source = open_source(camera, size)
    out: list[tuple[Image, Card, str]] = []
    rows = ["file,card"]
    try:
        for card in DECK:
            for k in range(shots):
                what = f"{card}" + (f" (shot {k + 1} of {shots})" if shots > 1 else "")
                if prompt:
                    print(f"Show {what} in the window, then press Enter: ", end="", flush=True)
                    if not sys.stdin.readline():
                        raise EnrolError("input ended before every card was shown")
                else:
                    print(f"Show {what} in the window...", flush=True)
                frame = _steady_card(source, what, prompt)
                name = f"{card.code}-{k + 1}.jpg"
                write_image(folder / name, frame, [cv2.IMWRITE_JPEG_QUALITY, 95])
                rows.append(f"{name},{card.code}")
                out.append((frame, card, name))
                if not prompt:  # the next card must not be taken from this one's frames
                    while (after := source.read()) is not None and find_card(
                        after, FACE_SIZE
                    ).status == "card":
                        pass
    finally:
        source.close()
        write_atomic(folder / "labels.csv", "\n".join(rows) + "\n")
    return out

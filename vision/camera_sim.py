"""The simulated camera's dealer side: shows each dealt card in the scan window, then clears it.

``croupier demo --camera-sim`` deals with this instead of the simulated shoe:
it draws the next card of a seeded shoe, renders a synthetic photograph of
it (:mod:`vision.synth`, the table's deck design) and writes it atomically
into the window file the daemon's camera reads (``camera.window``); before
each card it shows the empty window long enough for the camera to see it
empty, as a dealer's hand sliding one card out and the next in. So the demo's
cards go through the real recognition, stable reads, audit frames and journal.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path

import cv2

from controller.cards import Card
from controller.daemon.private import write_atomic
from controller.simulation.shoe_shuffle import ShuffledShoe
from vision.synth import DESIGNS, FELTS, STUDIO, Conditions, scene


class SimulatedCamera:
    """A seeded shoe whose cards appear in the camera's window file (``remaining``/``shuffle``/``deal``)."""

    def __init__(
        self,
        window: Path,
        *,
        decks: int,
        seed: int,
        design: str = "classic",
        fps: float = 15.0,
        stable_frames: int = 3,
        cond: Conditions = STUDIO,
        size: tuple[int, int] = (640, 480),
        photos: dict[Card | None, bytes] | None = None,
    ) -> None:
        self.window = window
        #: How the demo's dealer deals from it: draws each card, like a plain card-reading shoe.
        self.mode = "camera"
        self.design = DESIGNS[design]
        self.shoe = ShuffledShoe(decks, seed, 0)
        self.rng = random.Random(seed)
        self.hold = (stable_frames + 2) / fps
        self.cond = cond
        #: The table's felt (vision.synth.FELTS), one for every frame: a table's felt does not change.
        self.felt = random.Random(seed).randrange(len(FELTS))
        self.size = size
        self.shown: Card | None = None
        #: Given: each card's photograph (PNG), rendered once and kept there (tests that deal hundreds of
        #: cards spend their time on the camera's side, not on painting); else every showing is a new one.
        self.photos = photos
        self.show(None)

    @property
    def remaining(self) -> int:
        return len(self.shoe.cards)

    def shuffle(self) -> None:
        self.shoe.shuffle()

    def show(self, card: Card | None) -> None:
        """Put ``card`` (None: nothing) in the window, atomically (the camera never sees half a file)."""
        write_atomic(self.window, self.photo(card))
        self.shown = card

    def photo(self, card: Card | None) -> bytes:
        """A photograph of ``card`` on the felt (None: the empty window), PNG: a new one, or the kept one."""
        photo = None if self.photos is None else self.photos.get(card)
        if photo is None:
            img = scene(card, self.design, self.rng.randrange(1 << 30), self.size, self.cond, self.felt)
            ok, encoded = cv2.imencode(".png", img)
            if not ok:
                raise OSError(f"cannot encode the photograph of {card} for {self.window}")
            photo = encoded.tobytes()
            if self.photos is not None:
                self.photos[card] = photo
        return photo

    def deal(self, seen_empty: Callable[[], object] | None = None) -> Card:
        """Clear the window, wait until the camera has seen it empty, then show the next card.

        The wait is ``hold`` (K + 2 frames at the camera's rate), then ``seen_empty()`` if given: a
        dealer who watches the table waits there until its camera has read the window empty, since a
        camera that missed the empty window (starved of CPU) takes an identical next card for the one
        still lying there, and never reports it.
        """
        card = self.shoe.draw()
        self.show(None)
        time.sleep(self.hold)
        if seen_empty is not None:
            seen_empty()
        self.show(card)
        return card

    def close(self) -> None:
        """Take the camera away (no window file: no frames)."""
        self.window.unlink(missing_ok=True)


def wait_frames_read(
    frames: Callable[[], int | None], count: int, *, timeout: float, stop: Callable[[], bool]
) -> bool:
    """Wait until the table's camera has read ``count`` more frames than at the first answer.

    ``frames()`` is the running table's count of frames read (its status), None when it did not
    answer. Called right after the window was cleared: a frame read before the clearing may be
    counted after the first answer, so ``count`` is K + 1 for K stable frames. Why a dealer waits
    here: a camera that missed the empty window (its daemon starved of CPU) takes an identical next
    card for the one still lying there, and rightly never reports it. True once read; False when
    ``stop()`` is true or ``timeout`` seconds passed first (the caller says which is an error).
    """
    first: int | None = None
    deadline = time.monotonic() + timeout
    while not stop():
        read = frames()
        if read is not None:
            if first is None:
                first = read
            elif read >= first + count:
                return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return False

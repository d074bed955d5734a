"""Labelled frame folders: ``labels.csv`` (``file,card``; ``none`` for a frame that must read as no card).

The same format serves ``croupier vision test`` (any photographs a house
labels), the synthetic sets written by ``croupier vision scenes`` and the
benchmark, so a real-camera set and a synthetic one are measured alike.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import cv2

from controller.cards import DECK, Card, CardError, parse_card
from controller.daemon.private import make_dir, write_atomic
from vision.enroll import EnrolError, check_images, read_labels
from vision.image_file import read_image, write_image
from vision.recognise import Image
from vision.synth import FLOOR, NEGATIVES, STUDIO, Design, negative_scene, scene


class DatasetError(ValueError):
    """A labels file or image that cannot be used; the message names the file and line."""


def labelled_rows(folder: Path) -> list[tuple[int, str, Card | None]]:
    """(line, file, its card or None) of every row of ``folder/labels.csv``, checked, no image read."""
    labels = folder / "labels.csv"
    if not labels.is_file():
        raise DatasetError(f"{labels}: no labels file (CSV rows file,card; card 'none' for no card)")
    rows = []
    try:
        for lineno, file, text in read_labels(labels):
            try:
                card = None if text.lower() == "none" else parse_card(text)
            except CardError as exc:
                raise DatasetError(f"{labels}: line {lineno}: {exc} (or 'none')") from None
            rows.append((lineno, file, card))
        check_images(labels, folder, ((lineno, file) for lineno, file, _ in rows))
    except EnrolError as exc:
        raise DatasetError(str(exc)) from None
    return rows


def labelled_frames(folder: Path) -> Iterator[tuple[Image, Card | None, str]]:
    """(frame, its card or None, file name) for every row of ``folder/labels.csv``, read one at a time."""
    labels = folder / "labels.csv"
    for lineno, file, card in labelled_rows(folder):
        img = read_image(folder / file)
        if isinstance(img, str):
            raise DatasetError(f"{labels}: line {lineno}: cannot read the image {folder / file}: {img}")
        yield img, card, file


def _write(folder: Path, name: str, img: Image) -> None:
    write_image(folder / name, img, [cv2.IMWRITE_JPEG_QUALITY, 95])


def write_enrolment_set(
    folder: Path, design: Design, seed: int, size: tuple[int, int] = (640, 480), shots: int = 1
) -> int:
    """Near-studio photographs of the 52 faces, named by card (``QH-1.jpg``)."""
    make_dir(folder)
    rows = ["file,card"]
    for i, card in enumerate(DECK):
        for k in range(shots):
            name = f"{card.code}-{k + 1}.jpg"
            _write(folder, name, scene(card, design, seed * 1_000_003 + i * 31 + k, size, STUDIO))
            rows.append(f"{name},{card.code}")
    write_atomic(folder / "labels.csv", "\n".join(rows) + "\n")
    return len(rows) - 1


def held_out_set(
    design: Design, seed: int, count: int, negatives: int, size: tuple[int, int] = (640, 480)
) -> Iterator[tuple[Image, Card | None, str]]:
    """``count`` floor-condition frames (every card equally often, in a seeded order) and ``negatives``
    frames without a card (the kinds of :data:`vision.synth.NEGATIVES` in turn)."""
    rng = random.Random(seed)
    cards = [DECK[i % 52] for i in range(count)]
    rng.shuffle(cards)
    for i, card in enumerate(cards):
        yield scene(card, design, seed * 1_000_003 + i, size, FLOOR), card, f"{i:05d}-{card.code}.jpg"
    for i in range(negatives):
        kind = NEGATIVES[i % len(NEGATIVES)]
        yield (
            negative_scene(kind, design, seed * 1_000_003 + count + i, size, FLOOR),
            None,
            f"{count + i:05d}-{kind}.jpg",
        )


def write_test_set(
    folder: Path, design: Design, seed: int, count: int, negatives: int, size: tuple[int, int] = (640, 480)
) -> int:
    make_dir(folder)
    rows = ["file,card"]
    for img, card, name in held_out_set(design, seed, count, negatives, size):
        _write(folder, name, img)
        rows.append(f"{name},{card.code if card else 'none'}")
    write_atomic(folder / "labels.csv", "\n".join(rows) + "\n")
    return len(rows) - 1

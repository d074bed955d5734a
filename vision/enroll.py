"""Enrolment: photographs of the house's own 52 faces in, a checked deck profile out.

Each photograph goes through the same detection and warp as a live frame,
so the templates are what the camera will really see. The index box is
measured (the corner that holds the index, and the box around rank and suit
on every face, padded), then each rank's and each suit's glyphs are averaged
into a template. The profile then checks itself before anyone relies on it:
every photograph must read back as its own card, and no two templates may be
so alike that a smudge could turn one into the other; the result names the
cards to photograph again.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from controller.cards import DECK, RANKS, SUITS, Card, CardError, parse_card
from vision.colour import RED_SUITS, out_of_line, thresholds
from vision.compare import differ_mask
from vision.enrol_photo import PhotoFace, flush_fits, index_seen, photo_face, slant_fits
from vision.enrol_window import index_place
from vision.glyphs import Glyphs
from vision.matching import RANK_FILL, SUIT_FILL, aspect_of, normalise
from vision.profile import (
    FACE_SIZE,
    RANK_SIZE,
    SUIT_SIZE,
    AcceptSpec,
    ColourSpec,
    DeckProfile,
    Glyph,
    IndexSpec,
    ProfileFile,
)
from vision.recognise import Image, recognise_face
from vision.sources import IMAGE_SUFFIXES

#: Two templates correlating above this are too alike to be told apart safely...
MAX_LIKENESS = 0.97
#: ...and so are two whose clear differences (ink :data:`vision.compare.DIFFER` apart) cover less than
#: this share of the box.
MIN_DIFFERENCE = 0.02

#: What to do about a photograph whose index cannot be split into rank and suit.
REMEDY_INDEX = "re-shoot it in focus, the index free of glare and shadow"
#: What to do about a card left without a usable photograph.
REMEDY_CARD = "re-shoot it, or add photographs of it with another --images folder"



class EnrolError(ValueError):
    """Enrolment cannot start (no images, a bad labels file); the message names the file."""


@dataclass
class EnrolResult:
    """The profile (None when it could not be built) and what is wrong with the photographs."""

    profile: DeckProfile | None
    problems: list[str] = field(default_factory=list)
    #: Photographs set aside (their card has another usable one): worth re-shooting, not blocking.
    warnings: list[str] = field(default_factory=list)
    reshoot: set[str] = field(default_factory=set)
    #: Cards without a usable photograph read by the rest of the deck's templates (``stand_ins``).
    stand_ins: set[str] = field(default_factory=set)
    images: int = 0

    @property
    def ok(self) -> bool:
        return self.profile is not None and not self.problems


def labelled_images(folder: Path, labels: Path | None = None,
                    warn: Callable[[str], None] = lambda _: None) -> list[tuple[Path, Card]]:
    """The images of ``folder`` and their cards: from a ``file,card`` CSV, or from names like ``QH-2.png``.
    A folder with no photograph is an error (a wrong path, a copy not finished); images a CSV leaves out
    are named to ``warn`` (a photograph added and not labelled)."""
    if not folder.is_dir():
        raise EnrolError(f"{folder}: not a folder")
    if labels is None and (folder / "labels.csv").is_file():
        labels = folder / "labels.csv"
    out: list[tuple[Path, Card]] = []
    if labels is not None:
        lines = []
        for lineno, file, text in read_labels(labels):
            try:
                card = parse_card(text)
            except CardError as exc:
                raise EnrolError(f"{labels}: line {lineno}: {exc}") from None
            out.append((folder / file, card))
            lines.append((lineno, file))
        check_images(labels, folder, lines)
        named = {path.resolve() for path, _ in out}
        left = [p.name for p in sorted(folder.iterdir())
                if p.suffix.lower() in IMAGE_SUFFIXES and p.resolve() not in named]
        if left:
            warn(f"{folder}: {len(left)} image(s) not named in {labels}, not used: {_listed(left, ', ')}")
    else:
        out = _named_images(folder)
    if not out:
        raise EnrolError(f"{folder}: no photographs to enrol ({' '.join(IMAGE_SUFFIXES)} files, or a "
                         "labels.csv naming them)")
    return out


def check_images(labels: Path, folder: Path, lines: Iterable[tuple[int, str]]) -> None:
    """:class:`EnrolError` naming every image the ``labels`` rows (line, file) name that ``folder`` lacks:
    all at once, before any is read (a run is long)."""
    missing = [f"line {lineno}: {file}" for lineno, file in lines if not (folder / file).is_file()]
    if missing:
        raise EnrolError(f"{labels}: no image in {folder} for {_listed(missing, '; ')}")


def _listed(items: list[str], sep: str) -> str:
    """The first ten of ``items`` joined by ``sep``, and how many more there are."""
    more = f"{sep}and {len(items) - 10} more" if len(items) > 10 else ""
    return sep.join(items[:10]) + more


def _named_images(folder: Path) -> list[tuple[Path, Card]]:
    """The images of ``folder`` named by their card (``QH.png``, ``10d-2.jpg``)."""
    out: list[tuple[Path, Card]] = []
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() not in IMAGE_SUFFIXES:
            continue
        stem = path.stem.split("-")[0].split("_")[0]
        try:
            out.append((path, parse_card(stem)))
        except CardError:
            raise EnrolError(
                f"{path}: the name does not start with a card (QH.png, 10d-2.jpg) and there is no labels.csv"
            ) from None
    return out


def read_labels(path: Path) -> Iterable[tuple[int, str, str]]:
    """Rows of a ``file,card`` CSV (a header row is skipped); :class:`EnrolError` names the line."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark first (a spreadsheet's "CSV UTF-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EnrolError(f"{path}: cannot read: {exc}") from None
    for lineno, row in enumerate(csv.reader(text.splitlines()), 1):
        if not row or row[0].startswith("#"):
            continue
        if lineno == 1 and [c.strip().lower() for c in row] == ["file", "card"]:
            continue
        if len(row) != 2:
            raise EnrolError(f"{path}: line {lineno}: expected file,card, got {len(row)} fields")
        yield lineno, row[0].strip(), row[1].strip()


def enrol(shots: Iterable[tuple[Image | str, Card, str]], name: str, stand_ins: bool = False) -> EnrolResult:
    """Build and self-check a profile from (image, card, where it came from) photographs; in place of an
    image, why its file gives none (:func:`vision.image_file.read_image`).

    ``shots`` is read once, one photograph at a time: only the warped faces are kept, so a large set
    needs no more memory than its faces. A photograph that cannot be used (no card found, no index)
    is set aside with a warning when its card has another usable photograph; a card left with none
    is a problem that names the card and each photograph's reason, and nothing is written.

    ``stand_ins`` is for measuring a public photo set that lacks a card (``bench/vision_photos.py
    --stand-ins``), never for a table's deck: a card without a usable photograph is then a warning, and
    is read with the rank and suit templates the rest of the deck teaches, never checked against a
    photograph of its own. A rank or a suit with no photograph at all is still a problem.
    """
    result = EnrolResult(None)
    faces: list[tuple[Image, Card, str]] = []
    tight: list[tuple[PhotoFace, Card, str]] = []
    aspects: list[float] = []
    whole: list[PhotoFace] = []
    why: dict[str, list[str]] = defaultdict(list)
    for img, card, origin in shots:
        result.images += 1
        if isinstance(img, str):  # a file that gives no image, cut short or none: set aside as any unusable
            why[card.code].append(f"{origin}: {img}")
            continue
        found = photo_face(img)
        if found.face is None:
            why[card.code].append(f"{origin}: {found.reason}")
        elif found.how in ("tight", "slant"):  # judged against the deck's whole cards, once all are in
            tight.append((found, card, origin))
        else:
            faces.append((found.face, card, origin))
            aspects.append(found.aspect or 0.0)
            whole.append(found)
    deck_aspect = float(np.median(aspects)) if aspects else None
    for found, card, origin in tight:
        if (doubt := flush_fits(found, deck_aspect) or slant_fits(found, whole)) is not None:
            why[card.code].append(f"{origin}: {doubt}")
        elif found.face is not None:
            faces.append((found.face, card, origin))
    # A card without a face is named now, and the rest are still checked (their indices, their ink), so one
    # refusal names every card to re-shoot and why, not only the first kind found (a review, 2026-12-07).
    _every_card(faces, why, result, stand_ins)
    if not faces:
        return result
    place = index_place([face for face, _, _ in faces], [card.code for _, card, _ in faces])
    if place is None:
        result.problems.append(
            "no index found in the top corners of any face: photograph the faces square to the camera, "
            "in focus and evenly lit"
        )
        return result
    corner, boxes, area = place.window.corner, (place.box, place.area), place.area
    cut = {id(found.face): off for found, _, _ in tight if (off := index_seen(found, area)) is not None}
    read: list[tuple[list[Glyphs], tuple[Image, Card, str]]] = []
    for (face, card, origin), both in zip(faces, place.glyphs, strict=True):  # split while placing it
        if id(face) in cut:
            why[card.code].append(f"{origin}: {cut[id(face)]}")
            continue
        bad = [g for g in both if isinstance(g, str)]
        if bad:
            why[card.code].append(f"{origin}: index not readable: {bad[0]}: {REMEDY_INDEX}")
        else:
            read.append(([g for g in both if not isinstance(g, str)], (face, card, origin)))
    odd = out_of_line([(shot[1].suit in RED_SUITS, [g.chroma for g in gs]) for gs, shot in read])
    for i, reason in odd.items():
        why[read[i][1][1].code].append(f"{read[i][1][2]}: {reason}")
    read = [photo for i, photo in enumerate(read) if i not in odd]
    glyphs = [(g, shot[1], shot[2]) for gs, shot in read for g in gs]
    faces = [shot for _, shot in read]
    if not _every_card(faces, why, result, stand_ins):
        return result
    profile = _build(name, corner, boxes, glyphs, result.images, result)
    if profile is None:
        return result
    _self_check(profile, faces, result)
    result.profile = profile
    return result


def _every_card(
    faces: list[tuple[Image, Card, str]], why: dict[str, list[str]], result: EnrolResult, stand_ins: bool,
) -> bool:
    """Whether every card still has a usable photograph; the set-aside photographs of cards that do are
    warnings, a card without one is a problem naming each of its photographs' reasons (with
    ``stand_ins``, a warning while its rank and its suit each have a photograph of another card)."""
    have = {c.code for _, c, _ in faces}
    ranks, suits = {c.rank for _, c, _ in faces}, {c.suit for _, c, _ in faces}
    for card in DECK:
        reasons = why.get(card.code, [])
        if card.code in have:
            result.warnings.extend(
                f"{card} ({r}): set aside, the card has other photographs" for r in reasons
            )
            continue
        if card.code in result.stand_ins or card.code in result.reshoot:
            continue  # named when the first check found it without a photograph
        missing = f"{card}: no usable photograph ({'; '.join(reasons) or 'none given'})"
        if stand_ins and card.rank in ranks and card.suit in suits:
            result.warnings.append(f"{missing}; read by the rank and suit of the rest of the deck "
                                   "(stand-ins: a measurement, not a table's deck)")
            result.stand_ins.add(card.code)
        else:
            result.problems.append(f"{missing}; {REMEDY_CARD}")
            result.reshoot.add(card.code)
    why.clear()
    return not result.problems


Box = tuple[int, int, int, int]


def _build(
    name: str,
    corner: str,
    boxes: tuple[Box, Box],
    glyphs: list[tuple[Glyphs, Card, str]],
    images: int,
    result: EnrolResult,
) -> DeckProfile | None:
    ranks: dict[str, list[Glyph]] = defaultdict(list)
    suits: dict[str, list[Glyph]] = defaultdict(list)
    aspects: dict[str, list[float]] = defaultdict(list)
    red: list[float] = []
    black: list[float] = []
    rank_height = float(np.median([g.rank_height for g, _, _ in glyphs]))
    suit_height = float(np.median([g.suit_height for g, _, _ in glyphs]))
    for g, card, _ in glyphs:
        ranks[card.rank].append(normalise(g.rank, RANK_SIZE, rank_height, RANK_FILL))
        suits[card.suit].append(normalise(g.suit, SUIT_SIZE, suit_height, SUIT_FILL))
        aspects[f"rank:{card.rank}"].append(aspect_of(g.rank))
        aspects[f"suit:{card.suit}"].append(aspect_of(g.suit))
        aspects[f"offset:{card.rank}"].append(g.rank_offset)  # where the rank sits over its suit
        (red if card.suit in RED_SUITS else black).append(g.chroma)
    colour = thresholds(red, black)
    if isinstance(colour, str):
        result.problems.append(colour)
        return None
    spec = ProfileFile(
        deck=name,
        face=FACE_SIZE,
        index=IndexSpec(
            corner=corner,
            box=boxes[0],
            glyphs=boxes[1],
            rank_height=rank_height,
            suit_height=suit_height,
        ),
        colour=ColourSpec(red_min=colour[0], black_max=colour[1]),
        accept=AcceptSpec(),
        ranks={},
        suits={},
        enrolled={"images": images},
    )
    return DeckProfile(
        spec,
        {r: np.mean(ranks[r], axis=0).astype(np.float32) for r in RANKS},
        {s: np.mean(suits[s], axis=0).astype(np.float32) for s in SUITS},
        aspects={k: float(np.median(v)) for k, v in aspects.items()},
    )


def likeness(a: Glyph, b: Glyph) -> tuple[float, float]:
    """Two templates' correlation, and the share of their box where they clearly differ."""
    differ = cv2.countNonZero(differ_mask(a, b)) / a.size
    return float(cv2.matchTemplate(a, b, cv2.TM_CCOEFF_NORMED)[0, 0]), differ


def _self_check(profile: DeckProfile, faces: list[tuple[Image, Card, str]], result: EnrolResult) -> None:
    for face, card, origin in faces:
        reading = recognise_face(face, profile)
        if reading.card is not card:
            got = reading.card.code if reading.card else f"unknown: {reading.reason}"
            result.problems.append(
                f"{card} ({origin}) does not read as itself ({got}): check its label, or re-shoot it"
            )
            result.reshoot.add(card.code)

    def cards(kind: str, name: str) -> list[str]:
        return [name + s for s in SUITS] if kind == "ranks" else [r + name for r in RANKS]

    for kind, templates in (("ranks", profile.ranks), ("suits", profile.suits)):
        names = sorted(templates)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                like, differ = likeness(templates[a], templates[b])
                if like > MAX_LIKENESS or differ < MIN_DIFFERENCE:
                    result.problems.append(
                        f"{kind} {a} and {b} are too alike (correlation {like:.2f}, "
                        f"clearly different in {differ:.1%} of the glyph): re-shoot those cards in focus, "
                        "the card larger in the photograph"
                    )
                    result.reshoot.update(cards(kind, a) + cards(kind, b))

"""Deck profiles: one enrolled deck's index geometry, glyph templates and acceptance thresholds.

Why per deck: a corner index's glyphs differ from one manufacturer to the
next (font, weight, suit shapes), and templates taken from one deck read
another deck's cards at a few percent wrong. So the house enrols its own
deck (``croupier vision enroll``) and the camera recognises only against it.

The profile is a small YAML file; the templates are PNG files in a folder
beside it that the YAML names (``decks/house.yaml`` and
``decks/house.templates-<hash>/ranks/Q.png``), so an operator can look at
exactly what the camera compares against; a new save writes a new folder
before the YAML names it, so a save cut short never mixes two decks.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import cv2
import numpy as np
import yaml
from cv2.typing import MatLike
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from controller.cards import RANKS, SUITS
from controller.configfile import ConfigFileError, read_yaml, validation_problems
from controller.daemon.private import make_dir, write_atomic
from vision.stack import Stack

Glyph = MatLike
T = TypeVar("T")

#: The warped face every frame's card is brought to (63:88).
FACE_SIZE = (300, 420)
#: Glyph templates are compared at these sizes (w, h).
RANK_SIZE = (28, 40)
SUIT_SIZE = (28, 28)
#: The profile format: 4 measures ``colour`` against the card's paper (:mod:`vision.colour`), 3 added
#: the index's glyph area (``index.glyphs``), learned at enrolment, to which the index's ink is
#: trimmed. Older versions are refused (3: colour thresholds in the old units; 2: no glyph area;
#: 1: glyphs fitted by their bounding box): the deck must be enrolled again.
PROFILE_VERSION = 4


class ProfileError(ConfigFileError):
    """A deck profile that cannot be used: ``<file>: key '<key>': <reason>``."""


class IndexSpec(BaseModel):
    """Where the index is on the upright warped face, in its pixels; ``corner`` tl or tr."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    corner: str = Field(pattern="^(tl|tr)$")
    #: The crop searched for the index (the glyph area, padded).
    box: tuple[int, int, int, int]
    #: Where the deck's rank and suit glyphs lie (x0, y0, x1, y1), tight: ink outside it (a court
    #: card's frame line, a corner pip, the table past the card's edge) is trimmed away.
    glyphs: tuple[int, int, int, int]
    #: Median glyph heights in face pixels, used to refuse blobs of the wrong size (a card back's pattern).
    rank_height: float = Field(gt=0)
    suit_height: float = Field(gt=0)


class ColourSpec(BaseModel):
    """What separates red suits from black ones: the spread of the suit ink's reflectance against the
    card's paper (max - min over blue, green and red of ink / paper, :mod:`vision.colour`); red ink
    must also be red-led."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    red_min: float = Field(ge=0, le=1)
    black_max: float = Field(ge=0, le=1)


class AcceptSpec(BaseModel):
    """When a read is a card: each glyph's best correlation, and how much closer it is than the runner-up.

    The lead is a ratio of distances (1 - correlation), as in Lowe's ratio test: 0.6 means the best
    template is closer than 0.6 of the next one's distance, whatever the absolute level of the scores.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_score: float = Field(default=0.80, ge=0, le=1)
    max_ratio: float = Field(default=0.6, gt=0, le=1)
    #: How many of the card's two indices must read the same card: 2 (the default) is two independent
    #: reads agreeing; 1 reads a card whose other index is covered or glared, at more risk.
    indices: int = Field(default=2, ge=1, le=2)


class ProfileFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    deck: str = Field(min_length=1)
    version: int = Field(default=PROFILE_VERSION, ge=PROFILE_VERSION, le=PROFILE_VERSION)
    face: tuple[int, int] = FACE_SIZE
    index: IndexSpec
    colour: ColourSpec
    accept: AcceptSpec = Field(default_factory=AcceptSpec)
    #: Rank/suit -> PNG file, relative to the profile's folder.
    ranks: dict[str, str]
    suits: dict[str, str]
    enrolled: dict[str, Any] = Field(default_factory=dict)


@dataclass
class DeckProfile:
    """A loaded profile: its settings and the templates as float images in [0, 1]."""

    spec: ProfileFile
    ranks: dict[str, Glyph]
    suits: dict[str, Glyph]
    path: Path | None = None
    #: Width / height of each template's glyph as enrolled (a glyph far off this is not that glyph),
    #: and (``offset:R``) where each rank's centre sits across from its suit's, over the rank's height.
    aspects: dict[str, float] = field(default_factory=dict)
    #: The templates' stacks for :func:`vision.compare.correlations`, by kind and names: built on first
    #: use (:meth:`stack`), never saved, and no part of the profile's equality.
    _stacks: dict[tuple[str, ...], Stack] = field(default_factory=dict, init=False, repr=False, compare=False)
    #: What :meth:`kept` made from the settings and aspects, by name, with the settings and a copy of the
    #: aspects it was made from: never saved, and no part of the profile's equality.
    _kept: dict[str, tuple[ProfileFile, dict[str, float], Any]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # A profile's templates are frozen: the kept stacks (:meth:`stack`) know a template by its
        # identity, so one changed in place would leave a stale stack. Replace a template, never edit it.
        for glyph in (*self.ranks.values(), *self.suits.values()):
            glyph.setflags(write=False)

    def __eq__(self, other: object) -> bool:
        """The same deck: the same settings, templates (pixel for pixel) and glyph shapes. Where it was
        loaded from and where its template files lie are no part of it, nor are the kept stacks (a
        dataclass's ``==`` compared arrays with ``==`` and raised ``ValueError`` for two loads)."""
        if not isinstance(other, DeckProfile):
            return NotImplemented
        return (_settings(self.spec) == _settings(other.spec) and self.aspects == other.aspects
                and _same_glyphs(self.ranks, other.ranks) and _same_glyphs(self.suits, other.suits))

    def __getstate__(self) -> dict[str, Any]:
        """What pickle keeps: all but what :meth:`kept` made (made again when next asked for), so what it
        kept never changes a profile's pickle (the template stacks it made do, as before)."""
        return {k: v for k, v in self.__dict__.items() if k != "_kept"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._kept = {}

    @property
    def name(self) -> str:
        return self.spec.deck

    def stack(self, kind: str, names: Sequence[str] | None = None) -> Stack:
        """The ``rank`` or ``suit`` templates ``names`` (all by default), in that order, stacked for
        correlation once and kept; built again if a template was replaced since (templates are never
        changed in place)."""
        of_kind = self.ranks if kind == "rank" else self.suits
        names = list(of_kind) if names is None else names
        templates = [of_kind[name] for name in names]
        key = (kind, *names)
        stack = self._stacks.get(key)
        if stack is None or not stack.built_from(templates):
            stack = self._stacks[key] = Stack.of(templates)
        return stack

    def aspects_of(self, kind: str) -> Mapping[str, float]:
        """``rank`` or ``suit``: template name -> its enrolled width/height (keys ``rank:Q``, ``suit:H``),
        made once (:meth:`kept`): read-only."""
        return self.kept(f"aspects:{kind}", lambda: {
            k.split(":", 1)[1]: v for k, v in self.aspects.items() if k.startswith(kind + ":")})

    def kept(self, name: str, make: Callable[[], T]) -> T:
        """``make()``, a value made from the settings and the aspects alone (never the templates), made once
        and kept under ``name`` while both are as they were (the same settings object, a frozen model; the
        aspects equal to a copy taken then): the value for the profile as it is, never a stale one. The
        value is shared: read it, never change it. Why: each glyph matched took its kind's aspects from
        every aspect's key again (0.03 ms a frame, about five matches), and each candidate index looked at
        took the deck's glyph anchors from a median of the offsets."""
        hit = self._kept.get(name)
        if hit is not None and hit[0] is self.spec and hit[1] == self.aspects:
            return cast(T, hit[2])
        spec, aspects = self.spec, dict(self.aspects)  # taken before make(): what the value is made from
        value = make()
        self._kept[name] = (spec, aspects, value)
        return value


def _settings(spec: ProfileFile) -> ProfileFile:
    """The spec without its template files' names (storage, not the deck)."""
    return spec.model_copy(update={"ranks": {}, "suits": {}})


def _same_glyphs(a: Mapping[str, Glyph], b: Mapping[str, Glyph]) -> bool:
    """The same names, each pair of templates equal pixel for pixel."""
    return a.keys() == b.keys() and all(np.array_equal(a[name], b[name]) for name in a)


def template_folder(path: Path, templates: Sequence[bytes] = ()) -> Path:
    """Where ``decks/house.yaml`` keeps its templates: ``decks/house.templates-<hash>/``, the hash of the
    encoded ``templates`` (so a save never writes into the folder the profile on disk reads)."""
    digest = hashlib.sha256(b"".join(hashlib.sha256(t).digest() for t in templates)).hexdigest()[:12]
    return path.with_name(f"{path.stem}.templates-{digest}")


def _png(glyph: MatLike) -> bytes:
    ok, data = cv2.imencode(".png", np.clip(glyph * 255, 0, 255).astype(np.uint8))
    if not ok:
        raise OSError("cannot encode a template as PNG")
    return bytes(data.tobytes())


def save_profile(profile: DeckProfile, path: Path) -> Path:
    """Write the YAML and its template PNGs, whole or not at all: the templates go into a new folder
    named by their content (:func:`template_folder`, 0700, each PNG 0600 and fsynced), then the YAML,
    which names them, replaces the old one atomically (0600); only then are the folders of earlier
    saves removed. A save cut short (a power cut, a full disk) leaves the profile on disk loading
    exactly as before it, never the old YAML over new templates (a mixed deck that could misread).
    Returns the templates' folder."""
    pngs = {("ranks", name): _png(glyph) for name, glyph in profile.ranks.items()}
    pngs.update({("suits", name): _png(glyph) for name, glyph in profile.suits.items()})
    folder = template_folder(path, [pngs[k] for k in sorted(pngs)])
    ranks: dict[str, str] = {}
    suits: dict[str, str] = {}
    for (sub, name), png in pngs.items():
        make_dir(folder / sub)
        write_atomic(folder / sub / f"{name}.png", png)
        (ranks if sub == "ranks" else suits)[name] = f"{folder.name}/{sub}/{name}.png"
    spec = profile.spec.model_copy(update={"ranks": ranks, "suits": suits})
    data = spec.model_dump(mode="json")
    data["enrolled"] = {
        **data.get("enrolled", {}),
        "aspects": {k: round(v, 4) for k, v in profile.aspects.items()},
    }
    header = (
        f"# Deck profile {spec.deck!r}: written by `croupier vision enroll` (docs/vision.md).\n"
        f"# Templates are the PNG files in {folder.name}/; re-enrol rather than edit them.\n"
    )
    write_atomic(path, header + yaml.safe_dump(data, sort_keys=False))
    _remove_earlier(path, folder)
    profile.path = path
    return folder


def _remove_earlier(path: Path, kept: Path) -> None:
    """The template folders of ``path``'s earlier saves, now that the YAML names ``kept``: this layout's
    (``house.templates-*``) and the PNGs of the layout before it (``house/ranks``, ``house/suits``)."""
    for old in path.parent.glob(f"{glob.escape(path.stem)}.templates-*"):
        if old != kept and old.is_dir():
            shutil.rmtree(old)
    legacy = path.with_suffix("")
    for sub in ("ranks", "suits"):
        for png in (legacy / sub).glob("*.png"):
            png.unlink()
        with contextlib.suppress(OSError):  # not there, or holding something not ours: left as it is
            (legacy / sub).rmdir()
    with contextlib.suppress(OSError):
        legacy.rmdir()


def load_profile(path: Path | str) -> DeckProfile:
    """Read a profile and its templates; :class:`ProfileError` names the file, key and reason."""
    path = Path(path)
    raw = read_yaml(path, ProfileError)
    if isinstance(raw, dict) and "deck" not in raw and {"table", "game"} <= raw.keys():
        why = ("a table file, not a deck profile: give the deck's profile (written by croupier vision "
               "enroll; the table file's camera.deck names it)")
        raise ProfileError(path, [(None, why)])
    if isinstance(raw, dict) and raw.get("version", 1) != PROFILE_VERSION:
        raise ProfileError(
            path,
            [
                (
                    "version",
                    f"version {raw.get('version', 1)!r}: this recogniser reads version {PROFILE_VERSION} "
                    "profiles only; enrol the deck again (croupier vision enroll, docs/vision.md)",
                )
            ],
        )
    try:
        spec = ProfileFile.model_validate(raw)
    except ValidationError as exc:
        raise ProfileError(path, validation_problems(exc)) from None
    problems = _geometry_problems(spec)
    ranks = _templates(path, spec.ranks, RANKS, "ranks", RANK_SIZE, problems)
    suits = _templates(path, spec.suits, SUITS, "suits", SUIT_SIZE, problems)
    aspects = _aspects(spec.enrolled.get("aspects", {}), problems)
    if problems:
        raise ProfileError(path, problems)
    return DeckProfile(spec, ranks, suits, path, aspects)


def _aspects(raw: object, problems: list[tuple[str | None, str]]) -> dict[str, float]:
    """``enrolled.aspects``: name -> a finite number, each bad one a problem naming its key.

    Why here: ``enrolled`` is free-form in :class:`ProfileFile` (enrolment's notes), but the recogniser
    compares glyphs against these numbers; a hand-edited ``null``, ``""`` or ``1e999`` otherwise escaped
    as TypeError, ValueError or OverflowError, or read every glyph as unlike its template (NaN, infinity).
    """
    if not isinstance(raw, dict):
        problems.append(("enrolled.aspects", f"a mapping of glyph -> width/height (rank:Q: 0.7), "
                         f"got {repr(raw)[:40]}"))
        return {}
    out: dict[str, float] = {}
    for key, value in raw.items():
        number = None
        if isinstance(value, int | float) and not isinstance(value, bool):
            with contextlib.suppress(OverflowError):  # an int past float's range (10**400)
                number = float(value)
        if number is None or not np.isfinite(number):
            problems.append((f"enrolled.aspects.{key}", f"a finite number, got {repr(value)[:40]}"))
            continue
        out[str(key)] = number
    return out


def _geometry_problems(spec: ProfileFile) -> list[tuple[str | None, str]]:
    """A hand-edited index box or glyph area that does not fit: each named, before a frame is read.

    Why: a box reaching past the face would read the table beside the card as index ink, and a glyph
    area outside the box would trim every glyph away; neither can come from enrolment.
    """
    width, height = spec.face
    box, area = spec.index.box, spec.index.glyphs
    problems: list[tuple[str | None, str]] = []
    if not (0 <= box[0] < box[2] <= width and 0 <= box[1] < box[3] <= height // 2):
        problems.append(("index.box", f"{list(box)} is not x0 < x1 <= {width}, y0 < y1 <= {height // 2} "
                         "from 0 (the index lies in the face's upper half); enrol the deck again"))
    elif not (box[0] <= area[0] < area[2] <= box[2] and box[1] <= area[1] < area[3] <= box[3]):
        problems.append(("index.glyphs", f"{list(area)} is not inside the index box {list(box)}; "
                         "enrol the deck again"))
    heights = (("index.rank_height", spec.index.rank_height), ("index.suit_height", spec.index.suit_height))
    for key, glyph in heights:
        if glyph > box[3] - box[1]:
            problems.append((key, f"{glyph:g} px is taller than the index box ({box[3] - box[1]} px)"))
    return problems


def _templates(
    path: Path,
    files: dict[str, str],
    names: str,
    key: str,
    size: tuple[int, int],
    problems: list[tuple[str | None, str]],
) -> dict[str, Glyph]:
    out: dict[str, Glyph] = {}
    missing = [n for n in names if n not in files]
    if missing:
        problems.append((key, f"no template for {', '.join(missing)} (enrol all 52 faces)"))
    for name, rel in files.items():
        if name not in names:
            problems.append((f"{key}.{name}", f"not one of {names}"))
            continue
        img = cv2.imread(str(path.parent / rel), cv2.IMREAD_GRAYSCALE)
        if img is None:
            problems.append((f"{key}.{name}", f"cannot read the template {path.parent / rel}"))
            continue
        if (img.shape[1], img.shape[0]) != size:
            problems.append(
                (f"{key}.{name}", f"template is {img.shape[1]}x{img.shape[0]}, not {size[0]}x{size[1]}")
            )
            continue
        out[name] = img.astype(np.float32) / 255.0
    return out

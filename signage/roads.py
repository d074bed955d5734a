"""Baccarat road maps (the scoreboard) computed from a shoe's results.

Pure and deterministic: a list of results in, five roads out. The page draws
exactly what this module computes and ``croupier roads`` prints it, so a
scoreboard can be checked cell by cell without a browser. The rules are in
docs/roads.md; the names here follow them:

* a *result* is one round: winner (``banker``, ``player``, ``tie``) and the two pair flags;
* the *logical* big road is a list of columns (streaks), each a list of
  non-tie results; derived roads read only these true column lengths;
* the *display* grid puts logical cells on 6 rows, turning right along the
  last free row when a streak runs past the bottom or meets an occupied cell
  (the dragon tail).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Winner = Literal["banker", "player", "tie"]
Colour = Literal["red", "blue", "green"]

ROWS = 6
#: Offsets of the derived roads: Big Eye Boy looks one column back, Small Road two, Cockroach Pig three.
DERIVED = {"big_eye_boy": 1, "small_road": 2, "cockroach_pig": 3}
ROAD_NAMES = ("bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig")
_COLOUR: dict[str, Colour] = {"banker": "red", "player": "blue", "tie": "green"}


class RoadError(ValueError):
    """A result that cannot be placed on a road (names the round and the field)."""


@dataclass(frozen=True, slots=True)
class Result:
    """One round of the shoe, as the scoreboard needs it."""

    winner: Winner
    player_pair: bool = False
    banker_pair: bool = False

    @classmethod
    def from_record(cls, record: Mapping[str, Any], where: str = "result") -> Result:
        """From a ``round_result`` record (docs/rules/baccarat.md); :class:`RoadError` names the key."""
        winner = record.get("winner")
        if winner not in _COLOUR:
            raise RoadError(f"{where}: winner must be banker, player or tie, not {winner!r}")
        flags = {}
        for key in ("player_pair", "banker_pair"):
            value = record.get(key, False)
            if not isinstance(value, bool):
                raise RoadError(f"{where}: {key} must be true or false, not {value!r}")
            flags[key] = value
        return cls(winner, flags["player_pair"], flags["banker_pair"])


@dataclass(frozen=True, slots=True)
class Cell:
    """One drawn cell; ``row`` and ``col`` count from 0 on the display grid.

    ``streak`` is the logical column (from 0) the cell belongs to, so a reader never has to
    rebuild streaks from the drawn grid, where a dragon's tail runs along a row; the bead
    plate has no streaks (None).
    """

    row: int
    col: int
    colour: Colour
    ties: int = 0
    player_pair: bool = False
    banker_pair: bool = False
    streak: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "row": self.row,
            "col": self.col,
            "streak": self.streak,
            "colour": self.colour,
            "ties": self.ties,
            "player_pair": self.player_pair,
            "banker_pair": self.banker_pair,
        }


@dataclass(slots=True)
class _BigEntry:
    winner: Winner
    player_pair: bool
    banker_pair: bool
    ties: int = 0


def bead_plate(results: Sequence[Result]) -> list[Cell]:
    """One cell per round, ties included, top to bottom in columns of 6."""
    return [
        Cell(i % ROWS, i // ROWS, _COLOUR[r.winner], 0, r.player_pair, r.banker_pair)
        for i, r in enumerate(results)
    ]


def logical_columns(results: Sequence[Result]) -> tuple[list[list[_BigEntry]], int]:
    """The big road's streaks; also the ties seen before the first non-tie result."""
    columns: list[list[_BigEntry]] = []
    leading_ties = 0
    for r in results:
        if r.winner == "tie":
            if columns:
                columns[-1][-1].ties += 1
            else:
                leading_ties += 1
            continue
        entry = _BigEntry(r.winner, r.player_pair, r.banker_pair)
        if columns and columns[-1][0].winner == r.winner:
            columns[-1].append(entry)
        else:
            if not columns:
                entry.ties = leading_ties
            columns.append([entry])
    return columns, leading_ties


def lay_out(columns: Sequence[Sequence[Any]]) -> list[tuple[int, int, Any]]:
    """Place logical columns on the 6-row display grid with dragon tails: ``(row, col, item)``."""
    taken: set[tuple[int, int]] = set()
    placed: list[tuple[int, int, Any]] = []
    start = 0
    for column in columns:
        # A new column starts at the first display column whose top row is free.
        while (0, start) in taken:
            start += 1
        row, col = 0, start
        turned = False
        for i, item in enumerate(column):
            if i > 0:
                if not turned and row + 1 < ROWS and (row + 1, col) not in taken:
                    row += 1
                else:
                    turned = True  # the dragon tail: turn right and stay on this row
                    col += 1
            taken.add((row, col))
            placed.append((row, col, item))
        start += 1
    return placed


def streaks(columns: Sequence[Sequence[Any]]) -> list[int]:
    """The logical column of each item, in the order :func:`lay_out` places them."""
    return [i for i, column in enumerate(columns) for _ in column]


def big_road(results: Sequence[Result]) -> list[Cell]:
    columns, _ = logical_columns(results)
    return [
        Cell(row, col, _COLOUR[e.winner], e.ties, e.player_pair, e.banker_pair, streak)
        for (row, col, e), streak in zip(lay_out(columns), streaks(columns), strict=True)
    ]


def derived_marks(lengths: Sequence[int], k: int) -> list[list[Colour]]:
    """A derived road's logical columns from the big road's true column lengths.

    The big road is replayed entry by entry (column ``c``, row ``r``, from 1);
    each entry from the road's start on adds one mark, and marks of the same
    colour stack in one logical column as on the big road.
    """
    marks: list[Colour] = []
    for c0, length in enumerate(lengths):
        c = c0 + 1
        for r in range(1, length + 1):
            mark = _derived_mark(lengths, c, r, k)
            if mark is not None:
                marks.append(mark)
    out: list[list[Colour]] = []
    for m in marks:
        if out and out[-1][0] == m:
            out[-1].append(m)
        else:
            out.append([m])
    return out


def _derived_mark(lengths: Sequence[int], c: int, r: int, k: int) -> Colour | None:
    """The mark of big-road entry (c, r) on the road with offset ``k``, or None before its start."""

    def length(col: int) -> int:
        return lengths[col - 1] if 1 <= col <= len(lengths) else 0

    # The road starts at (k+1, 2), or at (k+2, 1) if column k+1 has no row 2.
    if c < k + 1 or (c == k + 1 and r < 2):
        return None
    if r == 1:
        return "red" if length(c - 1) == length(c - 1 - k) else "blue"
    return "blue" if length(c - k) == r - 1 else "red"


def derived_road(results: Sequence[Result], k: int) -> list[Cell]:
    columns, _ = logical_columns(results)
    lengths = [len(c) for c in columns]
    marks = derived_marks(lengths, k)
    return [
        Cell(row, col, colour, streak=streak)
        for (row, col, colour), streak in zip(lay_out(marks), streaks(marks), strict=True)
    ]


def ask_road(results: Sequence[Result]) -> dict[str, dict[str, Colour | None]]:
    """For a next Banker and a next Player: the mark each derived road would add (None: that win would not
    start the road either; a road not started yet has a colour when the win would start it)."""
    return {
        winner: {name: None if (cell := cells[name]) is None else cell.colour for name in DERIVED}
        for winner, cells in preview(results).items()
    }


#: The roads a next result adds one mark to (the bead plate simply takes the next cell).
PREVIEW_ROADS = ("big_road", "big_eye_boy", "small_road", "cockroach_pig")


def preview(results: Sequence[Result]) -> dict[str, dict[str, Cell | None]]:
    """For a next Banker and a next Player: the cell each road would add, where it would go.

    The ask road says only a derived road's colour; a scoreboard also shows the mark in place
    (where a dragon turns, where a new column starts). Laying out never moves an earlier cell,
    so the cell a next result adds is the last one of the road computed with it (None when the
    road would add none: a derived road that the win would not start).
    """
    rs = list(results)

    def roads(shoe: Sequence[Result]) -> dict[str, list[Cell]]:
        return {"big_road": big_road(shoe), **{name: derived_road(shoe, k) for name, k in DERIVED.items()}}

    now = {name: len(cells) for name, cells in roads(rs).items()}
    out: dict[str, dict[str, Cell | None]] = {}
    next_winners: tuple[Winner, Winner] = ("banker", "player")
    for winner in next_winners:
        after = roads([*rs, Result(winner)])
        out[winner] = {
            name: after[name][-1] if len(after[name]) > now[name] else None for name in PREVIEW_ROADS
        }
    return out


@dataclass(frozen=True)
class Roads:
    """The five roads of one shoe, the ask-road preview and the shoe's counts."""

    bead_plate: list[Cell]
    big_road: list[Cell]
    big_eye_boy: list[Cell]
    small_road: list[Cell]
    cockroach_pig: list[Cell]
    ask: dict[str, dict[str, Colour | None]]
    counts: dict[str, int] = field(default_factory=dict)

    def road(self, name: str) -> list[Cell]:
        cells: list[Cell] = getattr(self, name)
        return cells

    def to_dict(self) -> dict[str, Any]:
        return {
            **{name: [c.to_dict() for c in self.road(name)] for name in ROAD_NAMES},
            "ask": self.ask,
            "counts": self.counts,
        }


def compute(results: Iterable[Result]) -> Roads:
    """All five roads of one shoe (results in order, ties included)."""
    rs = list(results)
    counts = {
        "rounds": len(rs),
        "banker": sum(r.winner == "banker" for r in rs),
        "player": sum(r.winner == "player" for r in rs),
        "tie": sum(r.winner == "tie" for r in rs),
        "banker_pair": sum(r.banker_pair for r in rs),
        "player_pair": sum(r.player_pair for r in rs),
    }
    return Roads(
        bead_plate=bead_plate(rs),
        big_road=big_road(rs),
        big_eye_boy=derived_road(rs, 1),
        small_road=derived_road(rs, 2),
        cockroach_pig=derived_road(rs, 3),
        ask=ask_road(rs),
        counts=counts,
    )


def grid_text(cells: Sequence[Cell], tie_marks: bool = False) -> list[str]:
    """A road as 6 text lines: ``B``/``P``/``T`` for red/blue/green, ``.`` for empty.

    With ``tie_marks`` (the big road) a cell with ties is lower-case (``b``, ``p``).
    """
    width = max((c.col for c in cells), default=-1) + 1
    grid = [["."] * width for _ in range(ROWS)]
    letter = {"red": "B", "blue": "P", "green": "T"}
    for c in cells:
        ch = letter[c.colour]
        grid[c.row][c.col] = ch.lower() if tie_marks and c.ties else ch
    return ["".join(row) for row in grid]

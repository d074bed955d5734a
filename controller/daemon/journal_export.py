"""What ``croupier journal export`` writes: a header line (whose rows, played under what), then the rows.

Why a header: the journal holds inputs, not outcomes, and a row replays to
what was published and paid only under the game, options, rules version and
limits it was played under. The limits of row N are the journal header's with
every ``limits`` row before N applied (controller.daemon.journal_limits), so
rows alone, replayed under today's table file, settle every round before the
first ``limits`` row wrongly, and an export from row 1000 does not even say
which table, game or rules it belongs to. The first line says all of it (the
table and ``journal_id``, as every reply and the floor name a journal); a
third party replays the rows with ``Table(game, limits).apply`` alone when
they start at row 1 or the header says ``standalone`` (the limits are not
the table's state: money held, a device offline, the shoe; docs/daemon.md,
"Old journals"). docs/schema/journal-export.schema.json is
generated here (``python -m controller.daemon.contract``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any, Final

from controller.cards import RANKS, SUITS
from controller.daemon import checkpoint
from controller.daemon.journal_read import LIMITS_KEY, Entry, JournalError, read_entries
from controller.daemon.journal_schema import tables
from controller.game_base import Game
from controller.games import GAMES, game_class
from controller.inputs import INPUT_TYPES
from controller.limits import TableLimits
from controller.rules_version import UNRECORDED
from controller.table import Table

#: Told of a replay as it goes: (the first row replayed, rows replayed so far, rows to replay).
ReplayProgress = Callable[[int, int, int], None]
EXPORT_NAME: Final = "journal-export.schema.json"
#: The header line's ``header`` value: what tells it from a row (rows have no ``header`` key).
HEADER: Final = "croupier journal export"
#: The export's format number: 1 is the first with a header line (rows alone before it).
EXPORT_VERSION: Final = 1
#: An input field's annotation -> its JSON Schema (a card is its code, ``AS``).
_FIELD_TYPES: Final[dict[str, dict[str, Any]]] = {
    "int": {"type": "integer"}, "str": {"type": "string"}, "bool": {"type": "boolean"},
    "int | None": {"type": ["integer", "null"]},
    "Card": {"type": "string", "pattern": f"^[{RANKS}][{SUITS}]$"},
}


def game_of(header: dict[str, str], path: Path) -> Game:
    """A new game as the journal's header names it (game and options), as the daemon built it."""
    try:
        cls = game_class(header["game"])
        return cls(cls.options_model.model_validate_json(header.get("options", "{}")))
    except (KeyError, ValueError) as exc:
        raise JournalError(path, f"bad header: game {header.get('game')!r}: {exc}") from None


def table_before(conn: sqlite3.Connection, path: Path, header: dict[str, str], row: int,
                 progress: ReplayProgress | None = None) -> Table | None:
    """The table as it stood just before row ``row``: the header's limits, with each row before it
    taken as the engine took it (from the newest usable checkpoint before it, as the daemon's start and
    the uplink do, else from row 1), so a refused ``limits`` row changes nothing. None: the header
    records no limits (a journal written before limits were recorded that no daemon has opened since:
    its rows were played under the table file's limits of the time, which the journal does not say).
    ``progress`` hears of the replay before its first row and after each (a long one is worth saying)."""
    recorded = header.get(LIMITS_KEY)
    if recorded is None:
        return None
    table, done = Table(game_of(header, path), TableLimits.model_validate_json(recorded)), 0
    if row > 1 and "checkpoints" in tables(conn):
        saved = checkpoint.load(conn, path, row - 1)
        if saved is not None:
            table, done = saved.table, saved.row
    total = max(row - 1 - done, 0)
    if progress is not None:
        progress(done + 1, 0, total)
    for n, entry in enumerate(read_entries(conn, path, done + 1, row - 1), 1):
        table.apply(entry.input)
        if progress is not None:
            progress(done + 1, n, total)
    return table


def replays_alone(before: Table, new: Table, rows: Iterator[Entry]) -> bool:
    """Whether ``rows`` replayed on ``new`` (``Table(game, limits)``) give what they gave on ``before``,
    the table as it stood: it holds no money and plays no round, no tilt or device offline stops it, its
    game's state across rounds (a Designated Player) is a new game's, and its shoe is unused or is
    shuffled before the next card (else a card the table found impossible is taken). Round and shoe
    numbers, the meters and the dealer in are not compared: they count, they do not pay."""
    def state(table: Table) -> tuple[object, ...]:  # a seat cashed out to nothing holds no money
        held = {seat: credit for seat, credit in table.credits.items() if credit}
        return table.phase, held, table.staked, table.tilt, table.offline, table.burn_next, table.game.view()

    if state(before) != state(new):
        return False
    if before.composition.to_dict() == new.composition.to_dict():
        return True
    # A game whose every round is dealt from a fresh shoe (2WayWinner) refuses a close on a used one: on
    # the new table it would be taken (a review, 2026-12-07).
    stops = ("new_shoe", "card") + (("close_betting",) if before.game.fresh_shoe_every_round else ())
    return next((e.input.kind == "new_shoe" for e in rows if e.input.kind in stops), True)


def header_line(conn: sqlite3.Connection, path: Path, header: dict[str, str], first: int,
                last: int, progress: ReplayProgress | None = None) -> dict[str, Any]:
    """The export's first line for rows ``first``..``last`` (none if ``last`` < ``first``); ``progress``
    hears of the replay that finds the table before ``first`` (:func:`table_before`)."""
    if "id" not in header or "game" not in header:
        raise JournalError(path, "bad header: no journal id or game")
    before = table_before(conn, path, header, min(first, last + 1), progress)
    alone = before is not None and replays_alone(
        before, Table(game_of(header, path), before.limits), read_entries(conn, path, first, last))
    return {"header": HEADER, "version": EXPORT_VERSION, "table": header.get("table", ""),
            "journal_id": header["id"], "game": header["game"],
            "options": json.loads(header.get("options", "{}")),
            "rules": int(header.get("rules", UNRECORDED)), "from": first, "to": last,
            "limits": None if before is None else before.limits.model_dump(), "standalone": alone}


def row_line(entry: Entry) -> dict[str, Any]:
    """One exported row, as it is journaled."""
    return {"row": entry.id, "at": entry.at, "source": entry.source, "input": entry.input.to_dict(),
            "ref": entry.ref}


def _input_schema(kind: str) -> dict[str, Any]:
    cls = INPUT_TYPES[kind]
    props: dict[str, Any] = {"input": {"const": kind}}
    props.update((f.name, _FIELD_TYPES[str(f.type)]) for f in fields(cls))
    required = ["input", *(f.name for f in fields(cls) if f.default is MISSING)]
    about = (cls.__doc__ or kind).strip().splitlines()[0]
    return {"title": kind, "description": about, "type": "object", "properties": props, "required": required,
            "additionalProperties": False}


def schema() -> dict[str, Any]:
    """JSON Schema 2020-12 of one line of ``croupier journal export`` (the header, or a row)."""
    limits = {**TableLimits.model_json_schema(), "required": list(TableLimits.model_fields)}  # all, always
    header = {
        "description": "The first line: who answers and what the rows are played under.",
        "type": "object", "additionalProperties": False,
        "required": ["header", "version", "table", "journal_id", "game", "options", "rules", "from", "to",
                     "limits", "standalone"],
        "properties": {
            "header": {"const": HEADER, "description": "tells the header from a row (rows have no such key)"},
            "version": {"const": EXPORT_VERSION, "description": "the export's format"},
            "table": {"type": "string", "description": "the table's id (its table file's table:)"},
            "journal_id": {"type": "string", "minLength": 1,
                           "description": "the journal's id, as replies, heartbeats and floor rows give it"},
            "game": {"enum": sorted(GAMES)},
            "options": {"type": "object", "description": "the game options, every one (defaults included)"},
            "rules": {"type": "integer", "minimum": 1,
                      "description": "the rules version the rows were played under"},
            "from": {"type": "integer", "minimum": 1, "description": "the first row asked for"},
            "to": {"type": "integer", "minimum": 0,
                   "description": "the last row exported (before from: none)"},
            "limits": {"oneOf": [{"$ref": "#/$defs/Limits"}, {"type": "null"}],
                       "description": "the limits in force just before row from: the journal's starting "
                       "limits with every limits row before it applied; null: the journal records none"},
            "standalone": {"type": "boolean",
                           "description": "whether the rows replay alone, on a new Table(game, limits), to "
                           "what they gave on the table (false: replay them from row 1)"},
        },
    }
    row = {
        "description": "One journaled input, in row order.",
        "type": "object", "additionalProperties": False, "required": ["row", "at", "source", "input", "ref"],
        "properties": {
            "row": {"type": "integer", "minimum": 1}, "at": {"type": "number", "description": "Unix time"},
            "source": {"type": "string", "description": "who gave it: shoe, camera, command:BY, config, ..."},
            "input": {"oneOf": [{"$ref": f"#/$defs/input.{kind}"} for kind in sorted(INPUT_TYPES)]},
            "ref": {"type": ["string", "null"], "description": "the idempotency key it was sent with"},
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": EXPORT_NAME,
        "title": "croupier journal export: one JSON line",
        "description": "Generated by python -m controller.daemon.contract from "
                       "controller/daemon/journal_export.py; do not edit. The first line is a Header, every "
                       "other line a Row (docs/daemon.md, \"Old journals\").",
        "oneOf": [{"$ref": "#/$defs/Header"}, {"$ref": "#/$defs/Row"}],
        "$defs": {"Header": header, "Row": row, "Limits": limits,
                  **{f"input.{kind}": _input_schema(kind) for kind in sorted(INPUT_TYPES)}},
    }


def rendered() -> str:
    """The committed text of docs/schema/journal-export.schema.json."""
    return json.dumps(schema(), indent=1) + "\n"

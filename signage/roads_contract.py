"""The roads' JSON for third parties: its JSON Schema and golden vectors, generated from :mod:`signage.roads`.

Why: a scoreboard written in another language reads ``croupier roads --json`` or
the screen's ``roads`` and must know exactly what each cell says (its logical
column included, so nobody rebuilds streaks from the drawn grid), and must be
able to check its own road code cell by cell. ``python -m signage.roads_contract
schema > docs/schema/roads.schema.json`` and ``... vectors > docs/roads-vectors.json``
regenerate the committed files; tests/test_roads_contract.py fails when they are stale.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from signage.roads import DERIVED, ROAD_NAMES, Result, compute

#: One letter per round: B, P, T; ``+`` after a letter adds a Banker pair, ``*`` a Player pair.
NOTATION = "B Banker, P Player, T Tie; '+' after a letter: Banker pair, '*': Player pair"
#: Shoes that exercise every rule of docs/roads.md, by name.
SHOES = {
    "bead plate with ties and pairs": "BPTB+P*BPB",
    "ties mark the circle they follow": "BBPTTPBTB",
    "ties before the first result": "TTTP",
    "a long dragon and its tail": "BBBBBBBBBPTB",
    "a tail turning under another tail": "BBBBBBBPPPPPPPB",
    "derived roads by hand": "BBPBBBPP",
    "small road and cockroach pig by hand": "BPPBPBBB",
    "derived roads read true lengths": "BBBBBBBPPPPPPB",
}
_WINNERS: dict[str, Any] = {"B": "banker", "P": "player", "T": "tie"}


def results(letters: str) -> list[Result]:
    """A shoe from the vectors' notation (:data:`NOTATION`)."""
    out: list[Result] = []
    for ch in letters:
        if ch in _WINNERS:
            out.append(Result(_WINNERS[ch]))
        elif ch in "+*" and out:
            last = out[-1]
            out[-1] = Result(last.winner, last.player_pair or ch == "*", last.banker_pair or ch == "+")
        else:
            raise ValueError(f"{letters!r}: {ch!r} is not a round ({NOTATION})")
    return out


def _cell() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "One drawn cell: row and col from 0 on the 6-row grid; streak, the logical column "
        "(from 0) it belongs to, null on the bead plate (docs/roads.md).",
        "required": ["row", "col", "streak", "colour", "ties", "player_pair", "banker_pair"],
        "additionalProperties": False,
        "properties": {
            "row": {"type": "integer", "minimum": 0, "maximum": 5},
            "col": {"type": "integer", "minimum": 0},
            "streak": {"type": ["integer", "null"], "minimum": 0},
            "colour": {"enum": ["red", "blue", "green"]},
            "ties": {"type": "integer", "minimum": 0},
            "player_pair": {"type": "boolean"},
            "banker_pair": {"type": "boolean"},
        },
    }


def schema() -> dict[str, Any]:
    """JSON Schema 2020-12 of ``croupier roads --json`` (a ``Shoe`` is the screen's ``roads``, numbered)."""
    mark = {"enum": ["red", "blue", None]}
    ask_side = {"type": "object", "additionalProperties": False, "required": list(DERIVED),
                "properties": {name: mark for name in DERIVED}}
    counts = ["rounds", "banker", "player", "tie", "banker_pair", "player_pair"]
    shoe = {
        "type": "object",
        "additionalProperties": False,
        "required": ["shoe", "rounds", *ROAD_NAMES, "ask", "counts"],
        "properties": {
            "shoe": {"type": "integer", "minimum": 0,
                     "description": "The table's own shoe number, the new_shoe event's shoe_number (the "
                     "daemon's snapshot and the signage show the same): 1 for the first new shoe, 0 for "
                     "rounds before any."},
            "rounds": {"type": "integer", "minimum": 0},
            **{name: {"type": "array", "items": {"$ref": "#/$defs/Cell"}} for name in ROAD_NAMES},
            "ask": {"type": "object", "additionalProperties": False, "required": ["banker", "player"],
                    "description": "The mark each derived road would add after a Banker or a Player win "
                    "(null: the road would add none, not started even by that win; a road not started yet "
                    "still shows the mark a win that starts it would add).",
                    "properties": {"banker": ask_side, "player": ask_side}},
            "counts": {"type": "object", "additionalProperties": False, "required": counts,
                       "properties": {k: {"type": "integer", "minimum": 0} for k in counts}},
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "croupier roads --json",
        "type": "object",
        "additionalProperties": False,
        "required": ["shoes"],
        "properties": {"shoes": {"type": "array", "items": {"$ref": "#/$defs/Shoe"}}},
        "$defs": {"Cell": _cell(), "Shoe": shoe},
    }


def vectors() -> dict[str, Any]:
    """Each shoe of :data:`SHOES` with its roads as ``croupier roads --json`` prints them."""
    return {
        "about": "Golden vectors of the Baccarat roads (docs/roads.md): each shoe in letters and its roads "
        "as croupier roads --json prints one shoe. Regenerate: python -m signage.roads_contract vectors",
        "notation": NOTATION,
        "vectors": [
            {"name": name, "results": letters, "roads": {"shoe": 1, "rounds": len(results(letters)),
                                                         **compute(results(letters)).to_dict()}}
            for name, letters in SHOES.items()
        ],
    }


def rendered(what: str) -> str:
    """The committed text of ``schema`` (docs/schema/roads.schema.json) or ``vectors``
    (docs/roads-vectors.json)."""
    return json.dumps(schema() if what == "schema" else vectors(), indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m signage.roads_contract", description=__doc__)
    parser.add_argument("what", choices=["schema", "vectors"])
    print(rendered(parser.parse_args(argv).what), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

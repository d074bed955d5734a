"""``croupier roads FILE [--json]``: the five roads of each shoe, from a scenario file or a table's journal.

The same :mod:`signage.roads` code the display uses, so what a signage screen
draws can be checked without a browser. A scenario file is played through the
rules engine (shoes split where a round has ``shuffle: true``); a journal
(``journal.sqlite3``, its state directory, or a table file naming it) is
replayed through a fresh table built from the journal's own header, read only.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from controller.configfile import ConfigFileError, read_yaml
from controller.daemon.config import TableFileError, load_table
from controller.daemon.journal import JOURNAL_NAME, JournalError, open_readonly, read_entries, starting_limits
from controller.events import Event
from controller.games import GAMES
from controller.limits import TableLimits
from controller.scenario import ScenarioError, load_scenario, run_scenario
from controller.table import Table
from signage.roads import ROAD_NAMES, Result, RoadError, compute, grid_text

TEXT_LEGEND = "B red (Banker), P blue (Player), T green (Tie), . empty; big road: lower case = ties marked"


class RoadsInputError(RuntimeError):
    """A file that gives no Baccarat shoe: the message names the file and why."""


def shoes_from_events(events: Iterable[dict[str, Any]], where: str) -> list[tuple[int, list[Result]]]:
    """Split ``round_result`` records into shoes at each ``new_shoe`` event, each with the table's number.

    The number is the ``new_shoe`` event's ``shoe_number`` (what the daemon's snapshot, the journal and
    the signage show), so rounds dealt before any new shoe are shoe 0, as the table counts them.
    """
    shoes: list[tuple[int, list[Result]]] = []
    for event in events:
        if event["event"] == "new_shoe":
            shoes.append((int(event["shoe_number"]), []))
        elif event["event"] == "round_result":
            if not shoes:
                shoes.append((0, []))
            shoes[-1][1].append(Result.from_record(event["result"], f"{where}: round {event['round']}"))
    return shoes


def _journal_events(path: Path) -> Iterator[dict[str, Any]]:
    state_dir = path.parent if path.name == JOURNAL_NAME else path
    conn, jpath, last = open_readonly(state_dir)
    try:
        header = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        game = header.get("game")
        if game not in GAMES:
            raise RoadsInputError(f"{jpath}: journal header names no known game ({game!r})")
        cls = GAMES[game]
        game_rules = cls(cls.options_model.model_validate(json.loads(header.get("options", "{}"))))
        table = Table(game_rules, starting_limits(header, TableLimits(seats=game_rules.default_seats)))
        for entry in read_entries(conn, jpath, 1, last):
            for event in table.apply(entry.input):
                yield event.to_dict()
    except sqlite3.DatabaseError as exc:
        raise RoadsInputError(f"{jpath}: not a readable journal: {exc}") from None
    finally:
        conn.close()


def _source_events(path: Path) -> tuple[str, Iterator[dict[str, Any]]]:
    """(game, events) from a scenario file, a table file, a journal or a state directory."""
    if path.is_dir() or path.name == JOURNAL_NAME:
        events = list(_journal_events(path))
        return _game_of(events, path), iter(events)
    try:
        raw = read_yaml(path, ConfigFileError)
    except ConfigFileError as exc:
        if not exc.not_yaml:
            raise RoadsInputError(str(exc)) from None  # "<file>: cannot read: ..."
        raise RoadsInputError(f"{path}: neither YAML (a scenario or table file) nor a journal "
                              f"({exc.problems[0][1]})") from None
    if isinstance(raw, dict) and "state_dir" in raw and "rounds" not in raw:
        config = load_table(path)
        if config.game_name != "baccarat":  # before its journal: a table never started has none
            return config.game_name, iter(())
        events = list(_journal_events(config.state_dir))
        return config.game_name, iter(events)
    scenario = load_scenario(path)

    def played(evs: Iterable[Event]) -> Iterator[dict[str, Any]]:
        for e in evs:
            yield e.to_dict()

    return scenario.game.name, played(run_scenario(scenario))


def _game_of(events: list[dict[str, Any]], path: Path) -> str:
    for e in events:
        if "game" in e:
            return str(e["game"])
    return "baccarat"  # a journal with no round yet has nothing to draw either way


def shoe_json(number: int, results: list[Result]) -> dict[str, Any]:
    roads = compute(results)
    return {"shoe": number, "rounds": len(results), **roads.to_dict()}


def shoe_text(number: int, results: list[Result]) -> str:
    roads = compute(results)
    c = roads.counts
    rounds = f"{c['rounds']} round{'' if c['rounds'] == 1 else 's'}"
    lines = [
        f"shoe {number}: {rounds}, Banker {c['banker']}, Player {c['player']}, Tie {c['tie']}, "
        f"Banker pairs {c['banker_pair']}, Player pairs {c['player_pair']}"
    ]
    for name in ROAD_NAMES:
        lines.append(f"  {name.replace('_', ' ')}:")
        lines.extend(f"    {row}" for row in grid_text(roads.road(name), tie_marks=name == "big_road"))
    for winner in ("banker", "player"):
        marks = ", ".join(f"{k.replace('_', ' ')} {v or '-'}" for k, v in roads.ask[winner].items())
        lines.append(f"  if {winner}: {marks}")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a Baccarat scenario file, a table file, a journal or a state directory")
    parser.add_argument("--json", action="store_true", help="cells as JSON (row, col, colour, ties, pairs)")
    parser.add_argument(
        "--shoe", type=int, default=None,
        help="only shoe N, the table's own shoe number (0: rounds before any new shoe; -1: the last); "
        "default every shoe"
    )


def run(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        game, events = _source_events(path)
        if game != "baccarat":
            raise RoadsInputError(f"{path}: roads are the Baccarat scoreboard; this is a {game} table")
        shoes = shoes_from_events(events, str(path))
    except (RoadsInputError, RoadError, ScenarioError, JournalError, TableFileError) as exc:
        print(f"croupier roads: {exc}", file=sys.stderr)
        return 2
    numbered = shoes or [(0, [])]
    if args.shoe is not None:
        if args.shoe < 0:  # counted from the end: -1 the last shoe
            chosen = numbered[args.shoe:][:1] if -len(numbered) <= args.shoe else []
        else:
            chosen = [(n, rs) for n, rs in numbered if n == args.shoe]
        if not chosen:
            have = ", ".join(str(n) for n, _ in numbered)
            print(f"croupier roads: {path} has shoe(s) {have}, no shoe {args.shoe}", file=sys.stderr)
            return 2
        numbered = chosen
    if args.json:
        print(json.dumps({"shoes": [shoe_json(n, rs) for n, rs in numbered]}))
    else:
        print(TEXT_LEGEND)
        for n, rs in numbered:
            print(shoe_text(n, rs))
    return 0

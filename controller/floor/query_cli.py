"""The floor's read-only commands: ``croupier floor tables``, ``recall`` and ``export``, from PostgreSQL.

Apart from the services in controller/floor/cli.py: these only read (the reader role is enough), and
each says in one line what it cannot show rather than a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Final

NO_SCHEMA: Final = "croupier floor {}: this database has no floor tables yet (a recorder creates them)"


def run_tables(args: argparse.Namespace) -> int:
    import psycopg

    from controller.floor import queries

    try:
        conn = psycopg.connect(args.db, connect_timeout=5)
    except psycopg.OperationalError as exc:  # the operator's first look when the floor's database is down
        print(f"croupier floor tables: the floor database does not answer ({str(exc).splitlines()[0]}): "
              "nothing to show; the tables deal on and the stream keeps their rows for the recorders",
              file=sys.stderr)
        return 2
    with conn:
        try:
            rows = queries.tables(conn, args.offline_after)
        except psycopg.errors.UndefinedTable:
            print(NO_SCHEMA.format("tables"), file=sys.stderr)
            return 1
    if not args.json:
        print(queries.tables_text(rows))
    for r in rows if args.json else ():  # JSON lines: none at all for no table (not an empty line)
        print(json.dumps(r))
    return 0


def run_export(args: argparse.Namespace) -> int:
    import psycopg

    from controller.floor import queries

    try:
        start, end = queries.parse_when(args.start), queries.parse_when(args.end)
    except ValueError as exc:
        print(f"croupier floor export: {exc}", file=sys.stderr)
        return 2
    with psycopg.connect(args.db, connect_timeout=5) as conn:
        try:
            for row in queries.export(conn, args.table, start, end):
                print(json.dumps(row))
        except psycopg.errors.UndefinedTable:
            print(NO_SCHEMA.format("export"), file=sys.stderr)
            return 1
    return 0


def run_recall(args: argparse.Namespace) -> int:
    import psycopg

    from controller.floor import queries

    with psycopg.connect(args.db, connect_timeout=5) as conn:
        try:
            journal, rounds = queries.recall(conn, args.table, args.last, args.round)
        except psycopg.errors.UndefinedTable:
            print(NO_SCHEMA.format("recall"), file=sys.stderr)
            return 1
    if not journal:
        print(f"croupier floor recall: no table {args.table!r} recorded", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"table": args.table, "journal": journal["journal_id"], "rounds": rounds}))
    else:
        print(queries.recall_text(journal, rounds))
    return 0

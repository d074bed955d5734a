"""The floor's read-only commands: ``croupier floor tables``, ``recall`` and ``export``, from PostgreSQL.

Apart from the services in controller/floor/cli.py: these only read (the reader role is enough), and
each says in one line what it cannot show rather than a traceback (:func:`read_floor`, which
``floor report`` and ``floor verify`` use too).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    import psycopg

NO_SCHEMA: Final = "croupier floor {}: this database has no floor tables yet (a recorder creates them)"

Read = TypeVar("Read")

#: psycopg's lead-in to why a connection failed: the DSN the line names already says where.
_WHERE_FAILED: Final = re.compile(r"^(connection failed: )?(connection to server at .*? failed: )?")
#: A password in a key=value DSN (``password=s3cret`` or ``password = 'it s'``).
_KEYWORD_PASSWORD: Final = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)")
#: A password in a URL's ``user:password@`` that is no URL to urlsplit (``postgres//`` mistyped).
_USER_PASSWORD: Final = re.compile(r"([^\s:/@\"']+):[^\s/@\"']*@")


class FloorUnreadable(Exception):
    """Why a query command cannot read the floor's database: one line for stderr, and the exit code
    (2: the database cannot be reached, or the --db URL is wrong; 1: it answered but refused)."""

    def __init__(self, line: str, code: int) -> None:
        super().__init__(line)
        self.line = line
        self.code = code

    def tell(self) -> int:
        """Print the line on stderr; the command's exit code."""
        print(self.line, file=sys.stderr)
        return self.code


def shown_dsn(dsn: str) -> str:
    """The DSN as the operator gave it, with its password (if any) as ``***``: it goes on a terminal
    and into logs, which the password must not."""
    url = urlsplit(dsn)
    if url.scheme in ("postgresql", "postgres") and dsn.startswith(f"{url.scheme}://"):
        user, at, hosts = url.netloc.rpartition("@")
        if at and ":" in user:
            user = user.split(":", 1)[0] + ":***"
        query = re.sub(r"(^|&)password=[^&]*", r"\1password=***", url.query)
        shown = urlunsplit(url._replace(netloc=f"{user}{at}{hosts}", query=query))
        # urlunsplit drops the // of a URL with no host (a Unix socket's: postgresql:///floor?host=/run)
        return shown if url.netloc else f"{url.scheme}://{shown[len(url.scheme) + 1:]}"
    return _hidden(dsn)


def _hidden(text: str) -> str:
    """``text`` (a DSN that is no URL, or psycopg's reason quoting it) with any password as ``***``."""
    return _USER_PASSWORD.sub(r"\1:***@", _KEYWORD_PASSWORD.sub(r"\1***", text))


def _why(exc: Exception) -> str:
    """psycopg's reason, on one line, without the lead-in that repeats the server's address."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return _hidden(" ".join(_WHERE_FAILED.sub("", first).split()))


def read_floor(command: str, dsn: str, read: Callable[[psycopg.Connection[Any]], Read],
               no_schema: str = "") -> Read:
    """``read(conn)`` on one connection to the floor's database at ``dsn``, or :class:`FloorUnreadable`
    naming what failed (connecting, the query, the schema) and the DSN, its password hidden.

    ``no_schema``: the line when the database has no floor tables yet (default :data:`NO_SCHEMA`).
    """
    import psycopg

    where = shown_dsn(dsn)
    try:
        conn = psycopg.connect(dsn, connect_timeout=5)
    except psycopg.OperationalError as exc:  # down, the wrong host or port, no such database or role
        raise FloorUnreadable(f"croupier floor {command}: cannot connect to the floor database {where}: "
                              f"{_why(exc)}", 2) from exc
    except psycopg.ProgrammingError as exc:  # a --db that is no PostgreSQL URL or key=value string
        raise FloorUnreadable(f"croupier floor {command}: --db {where} is not a PostgreSQL URL: "
                              f"{_why(exc)}", 2) from exc
    try:
        with conn:
            return read(conn)
    except psycopg.errors.UndefinedTable as exc:
        raise FloorUnreadable(no_schema or NO_SCHEMA.format(command), 1) from exc
    except psycopg.errors.InsufficientPrivilege as exc:  # a role that may not read these tables
        raise FloorUnreadable(f"croupier floor {command}: the floor database {where} refused the query: "
                              f"{_why(exc)}", 1) from exc
    except psycopg.OperationalError as exc:  # it stopped (or the line broke) while we read
        raise FloorUnreadable(f"croupier floor {command}: the floor database {where} stopped answering: "
                              f"{_why(exc)}", 2) from exc


def run_tables(args: argparse.Namespace) -> int:
    from controller.floor import queries

    try:
        rows = read_floor("tables", args.db, lambda conn: queries.tables(conn, args.offline_after))
    except FloorUnreadable as exc:
        return exc.tell()
    if not args.json:
        print(queries.tables_text(rows))
    for r in rows if args.json else ():  # JSON lines: none at all for no table (not an empty line)
        print(json.dumps(r))
    return 0


def run_export(args: argparse.Namespace) -> int:
    from controller.floor import queries

    try:
        start, end = queries.parse_when(args.start), queries.parse_when(args.end)
    except ValueError as exc:
        print(f"croupier floor export: {exc}", file=sys.stderr)
        return 2

    def export(conn: psycopg.Connection[Any]) -> None:
        for row in queries.export(conn, args.table, start, end):
            print(json.dumps(row))

    try:
        read_floor("export", args.db, export)
    except FloorUnreadable as exc:
        return exc.tell()
    return 0


def run_recall(args: argparse.Namespace) -> int:
    from controller.floor import queries

    try:
        journal, rounds = read_floor("recall", args.db,
                                     lambda conn: queries.recall(conn, args.table, args.last, args.round))
    except FloorUnreadable as exc:
        return exc.tell()
    if not journal:
        print(f"croupier floor recall: no table {args.table!r} recorded", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"table": args.table, "journal": journal["journal_id"], "rounds": rounds}))
    else:
        print(queries.recall_text(journal, rounds))
    return 0

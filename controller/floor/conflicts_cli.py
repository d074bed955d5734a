"""``croupier floor conflicts``: rows kept apart as another history's, beside the record, and settling them.

The recorder keeps a row that came again with another body than the one recorded (and the other history's
rows that follow it) in ``conflicts``, and the alert service raises ``conflicting_rows`` until the rows are
gone (docs/floor.md, "A row sent again with another body"). The floor cannot know which history is the
table's: a person compares the Pis' journals. Before this command they read and removed the rows by hand in
SQL, with nothing left to say who did it or why. Now they list them with what differs, and settle a journal
in one transaction that marks its rows settled (who, when, why) and appends a ``conflicts_settled`` entry to
the significant-event log, so that the alert's clearing has a cause an auditor can read. Marked, not removed:
the recorder's rule of followers reads the other body of the row before in ``conflicts``, and with it gone
the other history's next row (its Pi still sending) was recorded on top of the first's (a review).
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from controller.floor.query_cli import FloorUnreadable, read_floor

if TYPE_CHECKING:
    import psycopg

#: The fields of a journal row the recorder compares (store._CONFLICTS): what can differ between bodies.
FIELDS: Final = ("at", "source", "ref", "input")

DOC = """The journal rows the floor kept apart as another history's (docs/floor.md, "A row sent again with
another body"): each with its recorded row's fields beside the other body's, and which differ. A row with
no recorded row beside it was kept apart as following the other history. Lists every table's, or TABLE's,
not settled yet (--all: settled ones too, with who settled them, when and why).

With --settle JOURNAL (and TABLE, --reason), once a person has compared the Pis' journals: the journal's
rows not settled yet are marked settled and a conflicts_settled entry (the rows, the reason, the system and
database users) is appended to the significant-event log, in one transaction; the conflicting_rows alert
then clears. The rows stay: the recorder still keeps apart the other history's rows that follow them.
Needs a role that may update conflicts (the recorder's). Exit 0; 1 when there was nothing of that journal
to settle, or the database refused; 2 when it cannot be reached."""

_LIST = """
SELECT c.table_id, c.journal_id, c.row, c.detected_at, c.settled_at, c.settled_by, c.settled_reason, c.body,
       i.row IS NOT NULL AS recorded, i.at, i.source, i.ref, i.input
FROM conflicts c LEFT JOIN inputs i USING (table_id, journal_id, row)
WHERE (%(table)s::text IS NULL OR c.table_id = %(table)s) AND (%(all)s OR c.settled_at IS NULL)
ORDER BY c.table_id, c.journal_id, c.row, c.detected_at, c.digest
"""


def register(floor_sub: argparse._SubParsersAction[argparse.ArgumentParser], example_db: str) -> None:
    """Add ``croupier floor conflicts`` to ``croupier floor``'s subcommands."""
    p = floor_sub.add_parser(
        "conflicts", help="rows kept apart as another history's: list them, or settle a journal's",
        description=DOC + "\n\nExample:\n  croupier floor conflicts --db " + example_db
        + "\n  croupier floor conflicts baccarat_1 --settle 7f3e... --reason 'Pi B was a restored copy' --db "
        + example_db)
    p.add_argument("table", nargs="?", help="this table's only (needed with --settle)")
    p.add_argument("--db", required=True, help="PostgreSQL URL (the reader's role lists; --settle needs the "
                                               "recorder's)")
    p.add_argument("--json", action="store_true", help="one JSON object per row kept apart, for programs")
    p.add_argument("--all", action="store_true", help="the settled rows too")
    p.add_argument("--settle", metavar="JOURNAL", help="mark the journal's rows settled, log who and why")
    p.add_argument("--reason", help="with --settle: what the person found (logged)")
    p.set_defaults(func=run)


def listed(conn: psycopg.Connection[Any], table: str | None = None, settled: bool = False
           ) -> list[dict[str, Any]]:
    """Every row in ``conflicts`` (of ``table``; not settled, unless ``settled``), oldest key first: its key,
    when it was kept apart, the recorded row's fields (None: no row of that key is recorded) and the other
    body's, which differ, and its settling (``settled``: None, or when, by whom and why)."""
    out = []
    query = conn.execute(_LIST, {"table": table, "all": settled})
    for table_id, journal_id, row, detected, when, by, why, body, recorded, *fields in query:
        mine = dict(zip(FIELDS, fields, strict=True)) if recorded else None
        other = {name: body.get(name) for name in FIELDS}
        # As JSON, not as Python values: true and 1 are equal in Python, not to the recorder (jsonb).
        differ = [name for name in FIELDS if mine is None or _shown(mine[name]) != _shown(other[name])]
        out.append({"table": table_id, "journal": journal_id, "row": int(row),
                    "detected_at": detected.timestamp(), "recorded": mine, "other": other, "differ": differ,
                    "settled": None if when is None else {"at": when.timestamp(), "by": by, "reason": why}})
    return out


def text(rows: list[dict[str, Any]]) -> str:
    """One block a row: its key and time, then each differing field, recorded and other."""
    if not rows:
        return "no conflicting rows"
    lines = []
    for r in rows:
        when = datetime.fromtimestamp(r["detected_at"], UTC).isoformat(timespec="seconds")
        lines.append(f"{r['table']} journal {r['journal']} row {r['row']} (kept apart {when})")
        if r["settled"] is not None:
            at = datetime.fromtimestamp(r["settled"]["at"], UTC).isoformat(timespec="seconds")
            lines.append(f"  settled {at} by {r['settled']['by']}: {r['settled']['reason']}")
        if r["recorded"] is None:
            lines.append("  no row of this key is recorded: kept apart as following the other history")
        for name in r["differ"]:
            mine = "-" if r["recorded"] is None else _shown(r["recorded"][name])
            lines.append(f"  {name:<6} recorded {mine}")
            lines.append(f"  {'':<6} other    {_shown(r['other'][name])}")
    return "\n".join(lines)


def _shown(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def settle(conn: psycopg.Connection[Any], table: str, journal: str, reason: str, by: str) -> list[int]:
    """Mark ``journal``'s rows in ``conflicts`` settled and log it (:data:`DOC`); the rows settled, [] when
    it had none not settled (nothing logged). Under the journal's ``tables`` row lock, as the recorder
    writes: a conflict a recorder is adding is either settled with the others or added whole after."""
    from controller.floor import eventlog

    with conn.transaction(), conn.cursor() as cur:
        key = (table, journal)
        cur.execute("SELECT 1 FROM tables WHERE table_id = %s AND journal_id = %s FOR UPDATE", key)
        role = cur.execute("SELECT current_user").fetchone()
        db_user = None if role is None else str(role[0])
        cur.execute("UPDATE conflicts SET settled_at = now(), settled_by = %s, settled_reason = %s "
                    "WHERE table_id = %s AND journal_id = %s AND settled_at IS NULL RETURNING row",
                    (f"{by} ({db_user})", reason, *key))
        rows = sorted({int(row) for (row,) in cur.fetchall()})
        if rows:
            eventlog.append(cur, table_id=table, kind="conflicts_settled",
                            origin=f"conflicts_settled:{table}:{journal}:{uuid.uuid4()}",
                            body={"journal": journal, "rows": rows, "reason": reason, "by": by,
                                  "db_user": db_user})
    return rows


def run(args: argparse.Namespace) -> int:
    if args.settle is None:
        if args.reason is not None:
            return _usage("--reason goes with --settle JOURNAL")
        try:
            rows = read_floor("conflicts", args.db, lambda conn: listed(conn, args.table, args.all))
        except FloorUnreadable as exc:
            return exc.tell()
        if not args.json:
            print(text(rows))
        for r in rows if args.json else ():
            print(json.dumps(r))
        return 0
    if args.table is None or not (args.reason or "").strip():
        return _usage("--settle JOURNAL needs the TABLE and a --reason (the significant-event log keeps it)")
    try:
        settled = read_floor("conflicts", args.db,
                          lambda conn: settle(conn, args.table, args.settle, args.reason, getpass.getuser()))
    except FloorUnreadable as exc:
        return exc.tell()
    if not settled:
        print(f"croupier floor conflicts: table {args.table} journal {args.settle} has no conflicting rows "
              "not settled: nothing settled")
        return 1
    print(f"settled: table {args.table} journal {args.settle} rows {', '.join(map(str, settled))} marked "
          "settled in conflicts; logged as conflicts_settled")
    return 0


def _usage(why: str) -> int:
    """A usage error, as argparse says one: on stderr, exit 2."""
    print(f"croupier floor conflicts: {why}", file=sys.stderr)
    return 2

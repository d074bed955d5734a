"""``croupier floor verify``: walk the significant-event log's hash chain and name its first broken row.

Exit 0 when every row follows from the one before it, 1 when one does not (or the database has no
log): what an auditor's script or a monitoring check needs. Only reads, so the reader role is enough.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

DOC = """Check the significant-event log (docs/floor.md, "Significant-event log"): every row's hash must
follow from the previous row's hash and its own fields, ids 1, 2, 3 ... without a hole. Prints the
rows checked and "intact", or the first broken row and why; exit 0 intact, 1 broken."""


def register(floor_sub: argparse._SubParsersAction[argparse.ArgumentParser], example_db: str) -> None:
    """Add ``croupier floor verify`` to ``croupier floor``'s subcommands."""
    v = floor_sub.add_parser("verify", help="check the significant-event log's hash chain, name a broken row",
                             description=DOC + "\n\nExample:\n  croupier floor verify --db " + example_db)
    v.add_argument("--db", required=True, help="PostgreSQL URL (a read-only role is enough)")
    v.add_argument("--json", action="store_true", help='one JSON object: {"rows", "intact", "broken_id", '
                                                       '"reason"}')
    v.set_defaults(func=run)


def verdict_text(rows: int, broken_id: int | None, reason: str) -> str:
    """``intact: 57 rows checked`` or ``BROKEN at row 3: why (rows before it: 2 checked)``."""
    if broken_id is None:
        return f"intact: {rows} rows checked"
    return f"BROKEN at row {broken_id}: {reason} (rows before it: {rows} checked)"


def run(args: argparse.Namespace) -> int:
    from controller.floor import eventlog
    from controller.floor.query_cli import FloorUnreadable, read_floor

    try:
        verdict = read_floor("verify", args.db, eventlog.verify, no_schema=(
            "croupier floor verify: this database has no event log yet (a recorder creates it)"))
    except FloorUnreadable as exc:
        return exc.tell()
    report: dict[str, Any] = {"rows": verdict.rows, "intact": verdict.intact, "broken_id": verdict.broken_id,
                              "reason": verdict.reason}
    print(json.dumps(report) if args.json else verdict_text(verdict.rows, verdict.broken_id, verdict.reason))
    return 0 if verdict.intact else 1

#!/usr/bin/env python3
"""Check a Croupier floor's significant-event log, written only from docs/floor.md (psycopg, no Croupier).

    python examples/verify_event_log.py --db postgresql://auditor@floor1:5432/floor

Reads ``event_log`` in id order, every column as text, and recomputes each row's hash by the rule in
docs/floor.md ("Significant-event log", "The hash rule"):

    hash = SHA-256(previous hash || UTF-8 of the JSON array [id, logged_at, table_id, kind, origin, body])

with the JSON written with object keys sorted, no spaces, non-ASCII characters as themselves, and
``logged_at`` in UTC as ``YYYY-MM-DDTHH:MM:SS.ffffff+00:00``; the first row's previous hash is 32 zero
bytes, and ids run 1, 2, 3 ... without a hole. Prints ``intact: N rows checked`` (exit 0) or
``BROKEN at row ID: why (rows before it: N checked)`` (exit 1), as ``croupier floor verify`` does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterable

import psycopg

QUERY = """
SELECT id, to_char(logged_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"'), table_id, kind,
       origin, body::text, encode(prev_hash, 'hex'), encode(hash, 'hex')
FROM event_log ORDER BY id
"""


def row_hash(prev: bytes, row_id: int, logged_at: str, table_id: str | None, kind: str, origin: str,
             body_text: str) -> bytes:
    fields = [row_id, logged_at, table_id, kind, origin, json.loads(body_text)]
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(prev + text.encode("utf-8")).digest()


Row = tuple[int, str, str | None, str, str, str, str, str]


def check(rows: Iterable[Row]) -> tuple[int, int | None, str]:
    """(rows checked, the first broken id or None, why)."""
    prev, expected = bytes(32), 1
    for row_id, logged_at, table_id, kind, origin, body, prev_hex, hash_hex in rows:
        if row_id != expected:
            return expected - 1, row_id, f"row {expected} is missing before row {row_id}"
        if bytes.fromhex(prev_hex) != prev:
            return expected - 1, row_id, "its previous hash is not the hash of the row before"
        digest = row_hash(prev, row_id, logged_at, table_id, kind, origin, body)
        if digest != bytes.fromhex(hash_hex):
            return expected - 1, row_id, "its fields do not give its hash (the row was changed)"
        prev, expected = digest, expected + 1
    return expected - 1, None, ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="PostgreSQL URL of the floor's database (read access)")
    args = parser.parse_args(argv)
    with psycopg.connect(args.db) as conn, conn.cursor(name="verify") as rows:  # streamed, not all in memory
        rows.execute(QUERY)
        checked, broken, why = check(rows)
    if broken is None:
        print(f"intact: {checked} rows checked")
        return 0
    print(f"BROKEN at row {broken}: {why} (rows before it: {checked} checked)")
    return 1


if __name__ == "__main__":
    sys.exit(main())

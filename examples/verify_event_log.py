#!/usr/bin/env python3
"""Check a Croupier floor's significant-event log, written only from docs/floor.md (psycopg, no Croupier).

    python examples/verify_event_log.py --db postgresql://auditor@floor1:5432/floor

Reads ``event_log`` in id order, every column as text, and recomputes each row's hash by the rule in
docs/floor.md ("Significant-event log", "The hash rule"):

    hash = SHA-256(previous hash || UTF-8 of the JSON array [id, logged_at, table_id, kind, origin, body])

with the JSON written with object keys sorted, no spaces, non-ASCII characters as themselves, and
``logged_at`` in UTC as ``YYYY-MM-DDTHH:MM:SS.ffffff+00:00``; the body written in it is the row's
``body_text`` exactly as stored, which must parse to the same JSON value as ``body`` (numbers equal as
exact decimals); a row without ``body_text`` (written before migration 0006) has ``body`` written
in it as that JSON. The first row's previous hash is 32 zero bytes, and ids run 1, 2, 3 ... without a
hole. Prints ``intact: N rows checked`` (exit 0) or ``BROKEN at row ID: why (rows before it: N
checked)`` (exit 1), as ``croupier floor verify`` does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterable
from decimal import Decimal

import psycopg

QUERY = """
SELECT id, to_char(logged_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"'), table_id, kind,
       origin, body::text, body_text, encode(prev_hash, 'hex'), encode(hash, 'hex')
FROM event_log ORDER BY id
"""


def canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def exact(text: str) -> object:
    """The JSON value with its numbers as exact decimals, as PostgreSQL's jsonb keeps them."""
    return json.loads(text, parse_float=Decimal, parse_int=Decimal)


def same(a: object, b: object) -> bool:
    """One JSON value: same types (in Python ``True == Decimal(1)``), keys, items and numbers."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(same, a, b))
    return bool(a == b)


def body_written(body: str, body_text: str | None) -> str | None:
    """The body's text as the hash covers it, or None if body_text does not parse to body."""
    if body_text is None:  # a row from before migration 0006
        return canonical(json.loads(body))
    try:
        return body_text if same(exact(body_text), exact(body)) else None
    except ValueError:
        return None


def row_hash(prev: bytes, row_id: int, logged_at: str, table_id: str | None, kind: str, origin: str,
             body_text: str) -> bytes:
    head = canonical([row_id, logged_at, table_id, kind, origin])  # the array without its body ...
    text = head[:-1] + "," + body_text + "]"  # ... which goes last, as written
    return hashlib.sha256(prev + text.encode("utf-8")).digest()


Row = tuple[int, str, str | None, str, str, str, str | None, str, str]


def check(rows: Iterable[Row]) -> tuple[int, int | None, str]:
    """(rows checked, the first broken id or None, why)."""
    prev, expected = bytes(32), 1
    for row_id, logged_at, table_id, kind, origin, body, body_text, prev_hex, hash_hex in rows:
        if row_id != expected:
            return expected - 1, row_id, f"row {expected} is missing before row {row_id}"
        if bytes.fromhex(prev_hex) != prev:
            return expected - 1, row_id, "its previous hash is not the hash of the row before"
        written = body_written(body, body_text)  # None: body_text does not parse to body
        digest = b"" if written is None else row_hash(prev, row_id, logged_at, table_id, kind, origin,
                                                      written)
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

"""The floor database's schema: plain SQL migrations in this package, applied in order, once each.

``migrations/NNNN_name.sql`` is version NNNN. :func:`migrate` applies every file newer than the
highest version in ``schema_version``, each in its own transaction together with its
``schema_version`` row, under a transaction-scoped advisory lock so that recorders starting
together do not apply a file twice. A file once released is never edited: a change is a new file.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, Final

import psycopg

log = logging.getLogger("croupier.floor")

MIGRATIONS: Final = Path(__file__).with_name("migrations")
#: Any constant shared by every recorder: the key of the advisory lock taken while migrating.
_LOCK: Final = 0x43524F55  # "CROU"
_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


def migration_files() -> list[tuple[int, Path]]:
    """(version, file), in order; a badly named file is an error rather than skipped."""
    found = []
    for path in sorted(MIGRATIONS.iterdir()):
        if path.suffix != ".sql":
            continue
        match = _NAME.match(path.name)
        if match is None:
            raise ValueError(f"{path}: a migration is named NNNN_words.sql")
        found.append((int(match.group(1)), path))
    versions = [v for v, _ in found]
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"{MIGRATIONS}: migration versions must run 1, 2, 3 ... without holes: {versions}")
    return found


def migrate(conn: psycopg.Connection[Any]) -> int:
    """Bring the database to the newest schema; the version it is at."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version "
                     "(version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
    current = 0
    for version, path in migration_files():
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
            row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()
            current = int(row[0]) if row else 0
            if version <= current:
                continue
            conn.execute(path.read_text(encoding="utf-8").encode())  # our own file: a script, no parameters
            conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
            log.info("floor schema: applied %s", path.name)
            current = version
    return current

"""The floor's migrations: applied in order on an empty database, once each, with the indexes the
queries need (bench/floor_recall.py times those queries over a large history)."""

from __future__ import annotations

import psycopg
import pytest
from floor_support import postgres  # noqa: F401 (fixture)

from controller.floor import queries
from controller.floor.local import Postgres
from controller.floor.schema import migrate, migration_files

pytestmark = pytest.mark.timeout(60)


def test_migrations_apply_in_order_on_an_empty_database_once_each(postgres: Postgres) -> None:  # noqa: F811
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS migrated_here")
        conn.execute("CREATE DATABASE migrated_here")  # empty, whatever the shared server holds
    dsn = postgres.dsn.rsplit("/", 1)[0] + "/migrated_here"
    versions = [v for v, _ in migration_files()]
    with psycopg.connect(dsn) as conn:
        assert migrate(conn) == versions[-1] >= 3
        applied = conn.execute("SELECT version FROM schema_version ORDER BY applied_at, version").fetchall()
        assert [v for (v,) in applied] == versions
        assert migrate(conn) == versions[-1]  # a second start applies nothing again
        assert conn.execute("SELECT COUNT(*) FROM schema_version").fetchone() == (len(versions),)

        # Each query reads through an index (seq scans ruled out, as a large history rules them out).
        conn.execute("SET enable_seqscan = off")
        plans = {name: "\n".join(r for (r,) in conn.execute(f"EXPLAIN {sql}", args).fetchall())
                 for name, sql, args in [
                     ("journal", queries.NEWEST_JOURNAL, ("t",)),
                     ("recall", queries.RECALL, ("t", "j", None, None, 10)),
                     ("export", queries.EXPORT, ("t", 0.0, 86_400.0))]}
        assert "Seq Scan" not in "".join(plans.values()), plans
        assert "inputs_by_time" in plans["export"] and "events_pkey" in plans["export"], plans["export"]
        assert "rounds_pkey" in plans["recall"], plans["recall"]

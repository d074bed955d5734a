"""The floor's query commands with their database down, stopped or misnamed: one line, never a traceback.

``croupier floor tables``, ``recall``, ``export``, ``report``, ``verify`` and ``conflicts`` (none of them
needs NATS) run as the operator runs them (the command line's ``main``; once as a process of its own),
against a port nobody listens on, a real PostgreSQL stopped, a database or role that is not there, a role
that may not read, and a --db that is no URL. Each says what failed and where, the password hidden
(docs/floor.md, "What an operator sees when each part is down").
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from controller.cli import main as cli_main
from controller.floor.local import Postgres, free_port
from controller.floor.query_cli import FloorUnreadable, read_floor, shown_dsn
from controller.floor.schema import migrate
from tests.floor_support import own_postgres, postgres  # noqa: F401 (fixtures)
from tests.server_fixtures import FloorDatabase

ROOT = Path(__file__).resolve().parents[1]
FROM_TO = ["--from", "2026-12-01", "--to", "2026-12-02"]
#: Each query command's arguments before ``--db``.
COMMANDS = {"tables": ["tables"], "recall": ["recall", "baccarat_1"],
            "export": ["export", "baccarat_1", *FROM_TO], "report": ["report", *FROM_TO],
            "verify": ["verify"], "conflicts": ["conflicts"]}


def one_line(capsys: pytest.CaptureFixture[str], command: str, dsn: str, code: int) -> str:
    """Run ``croupier floor COMMAND ... --db DSN``: its exit code is ``code`` and it printed one line on
    stderr (returned), nothing on stdout."""
    assert cli_main(["floor", *COMMANDS[command], "--db", dsn]) == code
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.splitlines()) == 1 and "Traceback" not in out.err, out
    return out.err.strip()


@pytest.mark.parametrize("command", COMMANDS)
def test_nobody_listening_is_one_line_naming_the_database_without_its_password_exit_2(
        capsys: pytest.CaptureFixture[str], command: str) -> None:
    port = free_port()
    line = one_line(capsys, command, f"postgresql://croupier_reader:s3cret@127.0.0.1:{port}/floor", 2)
    assert line == (f"croupier floor {command}: cannot connect to the floor database "
                    f"postgresql://croupier_reader:***@127.0.0.1:{port}/floor: Connection refused")


def test_no_schema_exit_1_and_a_wrong_database_role_or_url_exit_2_each_one_line(
        capsys: pytest.CaptureFixture[str], postgres: FloorDatabase) -> None:  # noqa: F811
    for command in COMMANDS:  # a database the recorders have not made a floor of yet: exit 1
        what = "event log" if command == "verify" else "floor tables"
        assert one_line(capsys, command, postgres.dsn, 1).startswith(
            f"croupier floor {command}: this database has no {what} yet")
    where = postgres.dsn.rsplit("/", 1)[0]  # postgresql://croupier@127.0.0.1:PORT
    for command in COMMANDS:
        line = one_line(capsys, command, f"{where}/no_such_floor", 2)
        assert line == (f"croupier floor {command}: cannot connect to the floor database "
                        f'{where}/no_such_floor: FATAL: database "no_such_floor" does not exist'), line
    nobody = postgres.dsn.replace("croupier@", "nobody:pw@")
    assert one_line(capsys, "recall", nobody, 2).endswith(
        f'{shown_dsn(nobody)}: FATAL: role "nobody" does not exist')
    assert "nobody:***@" in shown_dsn(nobody)
    port = where.rsplit(":", 1)[1]
    keywords = f"host=127.0.0.1 port={port} dbname=no_such_floor password='it s3cret'"
    line = one_line(capsys, "tables", keywords, 2)
    assert f"host=127.0.0.1 port={port} dbname=no_such_floor password=***:" in line and "s3cret" not in line
    assert one_line(capsys, "export", "floor", 2) == (
        'croupier floor export: --db floor is not a PostgreSQL URL: missing "=" after "floor" in connection '
        "info string")


@pytest.mark.timeout(60)
def test_a_role_that_may_not_read_exit_1_then_the_database_stopped_exit_2(
        capsys: pytest.CaptureFixture[str], own_postgres: Postgres) -> None:  # noqa: F811
    with psycopg.connect(own_postgres.dsn, autocommit=True) as admin:
        migrate(admin)
        admin.execute("CREATE ROLE clerk LOGIN")  # may log in, may read none of the floor's tables
    clerk = own_postgres.dsn.replace("croupier@", "clerk@")
    for command in COMMANDS:
        line = one_line(capsys, command, clerk, 1)
        assert line.startswith(f"croupier floor {command}: the floor database {clerk} refused the query: "
                               "permission denied for table "), line
    with pytest.raises(FloorUnreadable) as lost:  # the server ends the session mid-read (as a shutdown does)
        read_floor("export", own_postgres.dsn,
                   lambda conn: conn.execute("SELECT pg_terminate_backend(pg_backend_pid())"))
    assert (lost.value.code, lost.value.line) == (2, (
        f"croupier floor export: the floor database {own_postgres.dsn} stopped answering: "
        "terminating connection due to administrator command"))
    own_postgres.stop()
    for command in COMMANDS:
        assert one_line(capsys, command, own_postgres.dsn, 2) == (
            f"croupier floor {command}: cannot connect to the floor database {own_postgres.dsn}: "
            "Connection refused")
    done = subprocess.run(  # the command as a process of its own: its exit code, nothing else printed
        [sys.executable, "-m", "controller.cli", "floor", "recall", "baccarat_1", "--db", own_postgres.dsn],
        cwd=ROOT, capture_output=True, text=True, timeout=50, check=False)
    refused = f"cannot connect to the floor database {own_postgres.dsn}: Connection refused"
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"croupier floor recall: {refused}\n")


def test_a_url_mistyped_into_no_url_still_hides_its_password_and_a_socket_url_is_shown_whole(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``postgres//`` for ``postgres://``: psycopg quotes the whole string it could not read in its
    reason, and the line names the --db as given; neither may show the password."""
    for typo in ("postgres//alice:s3cret@127.0.0.1:1/floor", "postgresql:/alice:s3cret@127.0.0.1:1/floor"):
        line = one_line(capsys, "tables", typo, 2)
        assert "is not a PostgreSQL URL" in line and "alice:***@" in line and "s3cret" not in line, line
    socket = "postgresql:///floor?host=/run/postgresql&password=s3cret&sslmode=disable"  # no host: kept whole
    assert shown_dsn(socket) == "postgresql:///floor?host=/run/postgresql&password=***&sslmode=disable"

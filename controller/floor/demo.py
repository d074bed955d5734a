"""``croupier floor demo``: the whole floor on one machine in one command, to see it work and query it.

Why these parts: they are the real ones, each its own process as on a floor. A nats-server and a
PostgreSQL 15 in a private temporary folder on free loopback ports (controller.floor.local), one
``croupier floor record``, the pit's ``croupier floor alerts``, and per game its shipped simulated
table (``croupier demo --table <game>_sim.yaml``: daemon, simulated shoe, dealer and players) with
its ``croupier uplink`` reading the table's journal. It prints the commands that query the floor
while it runs. Ctrl-C (SIGTERM, SIGHUP) stops everything and deletes the folder; killed outright,
its children go with it (the servers by the kernel's death signal, the commands by
``--exit-with-parent``). With ``--rounds N`` each table stops after N rounds, and the demo shows
``floor tables`` once the floor has every row. The pit board (``croupier floor serve``) runs beside
them on a free loopback port, with one operator. So that a pit's alerts can be tried by hand, each
table's simulated shoe has its control socket open (``croupier demo --shoe-control``) and the demo
prints how to pull that shoe, open its lid and stop its daemon; without ``--rounds`` a table whose
demo ended (its daemon stopped) is started again ``RESTART_DELAY`` later, so the alert clears.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import psycopg

from controller.daemon.config import FIRMWARE_CONFIGS, TableConfig, load_table
from controller.daemon.journal import JournalError
from controller.daemon.private import open_log, write_atomic
from controller.floor import queries
from controller.floor.derive import JournalSource
from controller.floor.local import NatsServer, Postgres, ServerMissing, free_port
from controller.tools.children import croupier_command, start_child
from controller.tools.demo_ports import PORTS_PER_TABLE
from controller.tools.demo_setup import STOP_SIGNALS, _interrupt, demo_endpoints

#: Bounds: a table's journal to appear (its daemon starting), and the floor to catch up at the end.
START_TIMEOUT = 60.0
CATCH_UP_TIMEOUT = 120.0
#: Seconds from a table's demo ending (its daemon stopped) to its start again: long enough for the
#: pit's "daemon stopped" alert to be seen, short enough that it clears soon after.
RESTART_DELAY = 3.0


@dataclasses.dataclass
class Table:
    config: TableConfig
    state: Path
    file: Path
    shoe_control: int  # the port of its simulated shoe's control socket, the same across restarts

    @property
    def table_id(self) -> str:
        return self.config.table_id

    def journal_rows(self) -> int | None:
        """Rows in its journal, read-only as its uplink reads it; None while there is none yet."""
        try:
            source = JournalSource(dataclasses.replace(self.config, state_dir=self.state))
        except JournalError:
            return None
        try:
            return source.last_row()
        finally:
            source.close()


def _ports(args: argparse.Namespace, i: int) -> int | None:
    """The first of table ``i``'s ports with ``--ports``, else None (the table file's)."""
    return None if args.ports is None else args.ports + PORTS_PER_TABLE * i


def _table_args(args: argparse.Namespace, i: int) -> list[str]:
    extra: list[str] = []
    for flag, value in (("--rounds", args.rounds), ("--seed", args.seed), ("--delay", args.delay),
                        ("--ports", _ports(args, i))):
        if value is not None:
            extra += [flag, str(value)]
    return extra


def _wait(what: str, check: bool, deadline: float, services: Sequence[subprocess.Popen[bytes]],
          others: Sequence[subprocess.Popen[bytes]] = ()) -> bool:
    """False while waiting for ``what``; RuntimeError past ``deadline`` or if a part has ended.

    A service (the recorder, the alert service, the pit board, an uplink: each in its own session, out
    of a terminal's Ctrl-C) must never end while the floor runs, so any exit of one fails, 0 included:
    a recorder that stopped quietly would leave the floor behind for ever. Of ``others`` only a failure
    counts: a table's demo ends 0 once its rounds are dealt, and the servers share our process group,
    so a terminal's Ctrl-C may end them (0) an instant before it interrupts us.
    """
    if check:
        return True
    ended = [c.args for c in services if c.poll() is not None]
    ended += [c.args for c in others if c.poll() not in (None, 0)]
    if ended or time.monotonic() > deadline:
        raise RuntimeError(f"{what}: {'a process failed: ' + str(ended[0]) if ended else 'timed out'}")
    time.sleep(0.2)
    return False


def run(args: argparse.Namespace) -> int:
    games = [g for g in args.games.split(",") if g]
    files = [FIRMWARE_CONFIGS / "tables" / f"{g}_sim.yaml" for g in games]
    missing = [str(f) for f in files if not f.exists()]
    if missing or not games:
        print(f"croupier floor demo: no simulated table for {missing or 'no game'}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="croupier-floor-demo-"))
    servers: list[NatsServer | Postgres] = []
    children: list[subprocess.Popen[bytes]] = []
    demos: list[subprocess.Popen[bytes]] = []  # the tables' demos, apart: one may end and start again
    one_shots: list[subprocess.Popen[bytes]] = []  # commands that end by themselves (0 when they did it)
    failed = False  # then the folder stays, the servers' logs copied into it, for the message's "logs:"
    handlers = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    try:
        for sig in handlers:
            signal.signal(sig, _interrupt)
        nats, pg = NatsServer(), Postgres()
        servers += [nats.start(), pg.start()]
        # The servers are watched with the commands (stopped apart, after them): one that ends is "a
        # process failed", not a wait that runs out while every client retries for ever.
        watched = [server.proc for server in servers if server.proc is not None]
        children.append(start_child(["floor", "record", "--nats", nats.url, "--db", pg.dsn],
                                    work / "recorder.log"))
        children.append(start_child(["floor", "alerts", "--nats", nats.url, "--db", pg.dsn],
                                    work / "alerts.log"))  # the pit's alerts (docs/floor.md, "Alerts")
        board, operator_added = _pit_board(work, nats.url, pg.dsn)
        children.append(board)
        one_shots.append(operator_added)  # stopped in `finally` if still running
        watched.append(operator_added)  # it ends, 0 once it has added the operator: only a failure counts
        tables = [Table(load_table(f), work / f.stem, f, free_port()) for f in files]
        for i, t in enumerate(tables):
            demos.append(_deal(work, t, _table_args(args, i)))
            deadline = time.monotonic() + START_TIMEOUT
            while not _wait(f"{t.table_id}'s journal", t.journal_rows() is not None, deadline,
                            children, [*demos, *watched]):
                pass
            pub = demo_endpoints(t.config, _ports(args, i))["pub"]  # where the uplink hears its daemon
            children.append(start_child(["uplink", str(t.file), "--state-dir", str(t.state), "--pub", pub,
                                         "--nats", nats.url], work / f"{t.table_id}.uplink.log"))
        c, ids = croupier_command(), [t.table_id for t in tables]
        deadline = time.monotonic() + START_TIMEOUT
        while not _wait("the pit board", "pit board: http" in _text(work / "pitboard.log")
                        and "token" in _text(work / "operator.log"), deadline, children, [*demos, *watched]):
            pass
        pids = [_daemon_pid(work, t, demo) for t, demo in zip(tables, demos, strict=True)]
        address = _text(work / "pitboard.log").split("pit board: ", 1)[1].split()[0]
        token = _text(work / "operator.log").split()[-1]
        print(f"The floor: nats-server {nats.url}, PostgreSQL {pg.dsn}, a recorder, the alert service; "
              f"tables {', '.join(ids)} dealing, each with its uplink (logs in {work}).\n"
              f"Query it while it runs:\n"
              f"  {c} floor tables --db {pg.dsn}\n  {c} floor recall {ids[0]} --last 3 --db {pg.dsn}\n"
              f"  {c} floor export {ids[0]} --from {time.time() - 60:.0f} --to {time.time() + 86400:.0f} "
              f"--db {pg.dsn}\n  {c} floor verify --db {pg.dsn}\n"
              f"The pit board: {address} (operator pit_boss, token {token})\n"
              f"Its alerts by hand (docs/floor.md, \"Alerts\"), per table:\n"
              + "".join(_by_hand(c, t, pid, not args.rounds) for t, pid in zip(tables, pids, strict=True))
              + ("" if args.rounds else "Ctrl-C stops it all.\n"), flush=True)
        if not args.rounds:
            _supervise(work, tables, demos, [_table_args(args, i) for i in range(len(tables))],
                       children, watched)
        while any(p.poll() is None for p in demos):  # each table deals its rounds
            _wait("the tables' rounds", False, float("inf"), children, [*demos, *watched])
        deadline = time.monotonic() + CATCH_UP_TIMEOUT
        while True:
            behind = _behind(pg.dsn, tables)
            if _wait(f"the floor to catch up ({behind})", not behind, deadline, children, watched):
                break
        with psycopg.connect(pg.dsn, connect_timeout=5) as conn:
            print(queries.tables_text(queries.tables(conn, 15.0)))
        return 0
    except KeyboardInterrupt:
        return 0
    except (RuntimeError, ServerMissing) as exc:
        failed = not isinstance(exc, ServerMissing)  # a missing server: nothing ran, no log to keep
        print(f"croupier floor demo: {exc}" + (f" (logs: {work})" if failed else ""), file=sys.stderr)
        return 1
    finally:
        children += demos + one_shots
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in children:
            try:
                child.wait(30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        for server in servers:
            server.stop()
            if failed:
                _keep_log(server, work)
            server.remove()
        if not failed:
            shutil.rmtree(work, ignore_errors=True)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def _deal(work: Path, t: Table, extra: list[str]) -> subprocess.Popen[bytes]:
    """The table's ``croupier demo``, its journal in ``t.state`` (where its uplink reads it)."""
    return start_child(["demo", "--table", str(t.file), "--plain", "--no-lamps", "--no-display",
                        "--state-dir", str(t.state), "--shoe-control", str(t.shoe_control), *extra],
                       work / f"{t.table_id}.demo.log")


def _daemon_pid(work: Path, t: Table, demo: subprocess.Popen[bytes]) -> int | None:
    """The pid of the table's daemon as its demo says it; None if the demo ended first."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        said = re.search(r"^Shoe control: .*the daemon: pid (\d+)", _text(work / f"{t.table_id}.demo.log"),
                         re.M)
        if said is not None:
            return int(said.group(1))
        if not _wait(f"{t.table_id}'s daemon", demo.poll() is not None, deadline, []):
            continue
        return None


def _by_hand(c: str, t: Table, pid: int | None, restart: bool) -> str:
    """How to pull the table's shoe, open its lid and stop its daemon, as lines to paste."""
    sim = f"{c} shoe sim-control 127.0.0.1:{t.shoe_control}"
    return (f"  {t.table_id}: pull its shoe for 5 s: {sim} disconnect 5\n"
            f"  {t.table_id}: open its lid: {sim} lid open   (and close it: {sim} lid closed)\n"
            f"  {t.table_id}: stop its daemon: kill {pid}"
            + (f"   (started again {RESTART_DELAY:g} s after it stops)\n" if restart else "\n"))


def _supervise(work: Path, tables: list[Table], demos: list[subprocess.Popen[bytes]], extra: list[list[str]],
               children: list[subprocess.Popen[bytes]], others: list[subprocess.Popen[bytes]]) -> None:
    """Until Ctrl-C: a table whose demo ended (its daemon stopped) is started again, said on stdout with
    its daemon's new pid; RuntimeError if a part of the floor itself ends (``children``, the services:
    any end; ``others``, the servers and the one-shot operator command: a failure, as :func:`_wait`)."""
    while True:
        _wait("the floor", False, float("inf"), children, others)
        for i, t in enumerate(tables):
            if demos[i].poll() is None:
                continue
            print(f"{t.table_id}: its table stopped (its demo exited {demos[i].returncode}); "
                  f"starting it again in {RESTART_DELAY:g} s", flush=True)
            time.sleep(RESTART_DELAY)
            demos[i] = _deal(work, t, extra[i])
            pid = _daemon_pid(work, t, demos[i])
            if pid is not None:
                print(f"{t.table_id}: dealing again; stop its daemon: kill {pid}", flush=True)


def _pit_board(work: Path, nats: str, dsn: str) -> tuple[subprocess.Popen[bytes], subprocess.Popen[bytes]]:
    """``croupier floor serve`` on a free loopback port, and ``floor operator add pit_boss`` (its one
    operator, the token in ``operator.log``), both started now: the board reads the file only to act."""
    operators = work / "operators.json"
    with open_log(work / "operator.log", append=False) as out:
        made = subprocess.Popen([sys.executable, "-m", "controller.cli", "floor", "operator", "add",
                                 "pit_boss", "--operators", str(operators)],
                                stdout=out, stderr=subprocess.STDOUT)
    board = start_child(["floor", "serve", "--listen", "127.0.0.1:0", "--nats", nats, "--db", dsn,
                         "--operators", str(operators)], work / "pitboard.log")
    return board, made


def _keep_log(server: NatsServer | Postgres, work: Path) -> None:
    """A copy of the stopped server's log in the demo's folder (the server's own folder is deleted)."""
    name = "nats.log" if isinstance(server, NatsServer) else "pg.log"
    with contextlib.suppress(OSError):  # it never started: there is no log to keep
        write_atomic(work / name, (server.folder / name).read_bytes())


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def _behind(dsn: str, tables: list[Table]) -> str:
    """"" once every table's journal is in PostgreSQL to its last row; else what is missing, as the
    timeout's message says it ("baccarat_sim: 40 of 52 rows recorded")."""
    try:
        with psycopg.connect(dsn, connect_timeout=5) as conn:
            recorded = {r["table"]: r["recorded_row"] for r in queries.tables(conn, 15.0)}
    except psycopg.Error as exc:
        return f"PostgreSQL: {str(exc).strip() or type(exc).__name__}"
    behind = []
    for t in tables:
        rows, got = t.journal_rows(), recorded.get(t.config.table_id)
        if got != rows:
            behind.append(f"{t.config.table_id}: {got or 0} of {rows} rows recorded")
    return "; ".join(behind)

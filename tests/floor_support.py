"""Shared set-up for the floor tests (no tests here): real nats-server and PostgreSQL, real processes.

The servers are the Debian packages' binaries started in private temporary folders on free
127.0.0.1 ports (controller.floor.local) and stopped even when a test fails; their fixtures are in
tests/server_fixtures.py. A missing server is a failure naming the packages, never a skip: `make test`
installs them (as root) first.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nats
import nats.js.errors
import psycopg
import pytest
from test_daemon_support import baccarat_play, config_for

from controller.daemon import faults
from controller.daemon.client import CommandClient, DaemonUnavailable, Subscriber, local_key
from controller.daemon.config import TableConfig
from controller.daemon.journal import open_readonly, read_entries
from controller.floor.local import NatsServer, Postgres
from controller.floor.wire import MSG_ID, STREAM, journals_of, parse_msg_id
from controller.inputs import Input
from tests.server_fixtures import nats_server, own_postgres, postgres, serve  # noqa: F401 (re-exported)


class Proc:
    """A ``croupier`` command as its own process, its output in a log file; SIGKILL and restart it.
    It ends with the test run, even one cut short (``--exit-with-parent``)."""

    def __init__(self, log: Path, *args: str, fault: str = "") -> None:
        self.args = [sys.executable, "-m", "controller.cli", *args, "--exit-with-parent", str(os.getpid())]
        self.log = log
        #: CROUPIER_FAULT for the first start only (controller.daemon.faults): it dies there, once.
        self.fault = fault
        self.proc: subprocess.Popen[bytes] | None = None
        self.kills = 0
        #: Where the log stood when the process last started (what this one said comes after).
        self.begun = 0

    def start(self) -> Proc:
        env = {k: v for k, v in os.environ.items() if k != faults.ENV}
        if self.fault:
            env[faults.ENV], self.fault = self.fault, ""
        with open(self.log, "ab") as out:
            self.begun = out.tell()
            self.proc = subprocess.Popen(self.args, stdout=out, stderr=out, start_new_session=True, env=env)
        return self

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        assert self.proc is not None and self.proc.poll() is None, self.text()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.kills += 1

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL if it has not ended within 15 s; its exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode

    def said(self, text: str) -> bool:
        """The running process (not an earlier one) has logged ``text``: it is up so far."""
        return text.encode() in self.log.read_bytes()[self.begun:]

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""


def wait_for(what: str, check: Callable[[], bool], timeout: float, *logs: Proc) -> None:
    """Until ``check()``; a failure names ``what`` and shows the processes' logs' tails."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    tails = "\n".join(f"--- {' '.join(p.args[3:5])}\n{p.text()[-3000:]}" for p in logs)
    pytest.fail(f"not within {timeout} s: {what}\n{tails}")


def run_until(what: str, check: Callable[[], bool], timeout: float, *procs: Proc) -> None:
    """:func:`wait_for` ``check``, then stop ``procs`` (also when it failed)."""
    try:
        wait_for(what, check, timeout, *procs)
    finally:
        for p in procs:
            p.stop()


def query(dsn: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """One read of the floor database (a connection of its own, closed after)."""
    try:
        with psycopg.connect(dsn, connect_timeout=5) as conn:
            return conn.execute(sql, args).fetchall()  # type: ignore[arg-type]
    except (psycopg.OperationalError, psycopg.errors.UndefinedTable):  # not up, or not migrated yet
        return []


def recorded_row(dsn: str, table_id: str) -> int:
    rows = query(dsn, "SELECT MAX(recorded_row) FROM tables WHERE table_id = %s", table_id)
    return int(rows[0][0]) if rows and rows[0][0] is not None else 0


def floor_tables(dsn: str) -> dict[str, dict[str, Any]]:
    """``croupier floor tables --json`` as an operator runs it (its own process), by table id."""
    out = subprocess.run([sys.executable, "-m", "controller.cli", "floor", "tables", "--json", "--db", dsn],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 or "no floor tables yet" in out.stderr, out.stderr
    return {t["table"]: t for t in map(json.loads, out.stdout.splitlines())}  # an empty line: an error


def stream_rows(url: str, table_id: str) -> list[tuple[str, int]]:
    """(journal, row) of every message the JetStream stream holds for the table, in the stream's order:
    the order its uplink's publishes were stored."""

    async def read() -> list[tuple[str, int]]:
        client = await nats.connect(url, connect_timeout=5)
        try:
            js, held, position = client.jetstream(), [], 1
            while True:
                try:
                    msg = await js.get_msg(STREAM, seq=position, subject=journals_of(table_id), next=True)
                except nats.js.errors.NotFoundError:
                    return held
                _, journal, row = parse_msg_id((msg.headers or {})[MSG_ID])
                held.append((journal, row))
                position = int(msg.seq or 0) + 1
        finally:
            await client.close()

    return asyncio.run(read())


def digest(value: Any) -> str:
    """A payload's hash, independent of how JSON was spaced or its object keys ordered."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def journal_rows(config: TableConfig) -> tuple[str, dict[int, tuple[float, str, str]]]:
    """The journal's id and, per row, (time, source, hash of the input as journaled)."""
    conn, path, last = open_readonly(config.state_dir)
    try:
        journal_id = str(conn.execute("SELECT value FROM meta WHERE key = 'id'").fetchone()[0])
        rows = {e.id: (e.at, e.source, digest(e.input.to_dict())) for e in read_entries(conn, path, 1, last)}
    finally:
        conn.close()
    return journal_id, rows


def assert_exactly_once(dsn: str, config: TableConfig, published: dict[int, dict[str, Any]]) -> int:
    """The floor holds every journal row once, equal to the journal, and every event the daemon
    published once, equal to it by seq; no gap. The number of rows."""
    table_id = config.table_id
    journal_id, rows = journal_rows(config)
    got = query(dsn, "SELECT row, at, source, input FROM inputs WHERE table_id = %s AND journal_id = %s "
                     "ORDER BY row", table_id, journal_id)
    assert [r[0] for r in got] == list(range(1, len(rows) + 1))
    assert {r[0]: (r[1], r[2], digest(r[3])) for r in got} == rows
    events = query(dsn, "SELECT seq, payload FROM events WHERE table_id = %s AND journal_id = %s "
                        "ORDER BY seq", table_id, journal_id)
    assert [s for s, _ in events] == sorted(published) == list(range(1, len(published) + 1))
    assert {s: digest(p) for s, p in events} == {s: digest(p) for s, p in published.items()}
    assert query(dsn, "SELECT * FROM gaps") == []
    assert query(dsn, "SELECT recorded_row FROM tables WHERE table_id = %s", table_id) == [(len(rows),)]
    return len(rows)


class Dealer:
    """A table's inputs sent to its daemon from a thread, ``chunk`` at a time with ``pause`` s between:
    the table deals while a test kills the floor's processes around it.

    Each input carries a ``ref`` (``<tag>:<index>``): when the daemon does not answer (killed, being
    restarted) the same input is sent again until it does, and a daemon that had journaled it answers
    its first reply again (docs/commands.md), so each input is journaled once whatever the kills.
    ``sent[i]`` is when input ``i`` was last sent and ``replies[i]`` its reply."""

    def __init__(self, client: CommandClient, inputs: list[Input], chunk: int = 20,
                 pause: float = 0.3, tag: str = "deal") -> None:
        self.done = threading.Event()
        self.sent: dict[int, float] = {}
        self.replies: dict[int, dict[str, Any]] = {}
        #: Sends that got no answer (the daemon away) and were sent again.
        self.resent = 0
        self.error: BaseException | None = None

        def send(i: int, inp: Input) -> None:
            while True:
                self.sent[i] = time.monotonic()
                try:
                    reply = client.call("input", input=inp.to_dict(), ref=f"{tag}:{i}")
                    break
                except DaemonUnavailable:
                    self.resent += 1
                    time.sleep(0.1)
            assert reply["ok"] or reply["refused"], reply
            self.replies[i] = reply

        def deal() -> None:
            try:
                for start in range(0, len(inputs), chunk):
                    for i in range(start, min(start + chunk, len(inputs))):
                        send(i, inputs[i])
                    time.sleep(pause)
            except BaseException as exc:  # noqa: BLE001 (the test's thread re-raises it in join)
                self.error = exc
            finally:
                self.done.set()

        self._thread = threading.Thread(target=deal, daemon=True)

    def start(self) -> Dealer:
        self._thread.start()
        return self

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)
        assert self.done.is_set() and not self._thread.is_alive(), "the dealer did not finish"
        if self.error is not None:
            raise self.error


class TableDaemon:
    """A table's daemon as its own process, ``croupier run TABLE --no-shoe`` (cards by command, as the
    bench's dealer sends them): SIGKILL it and start it again as systemd would; it continues its seq
    from its journal."""

    def __init__(self, config: TableConfig, log: Path, fault: str = "") -> None:
        self.config = config
        self.proc = Proc(log, "run", str(config.path), "--no-shoe", fault=fault)

    def start(self, timeout: float = 60) -> TableDaemon:
        """Started, and answering commands (its key folder made, its journal replayed)."""
        self.proc.start()
        deadline = time.monotonic() + timeout
        while True:
            try:
                probe = CommandClient(self.config.spec.zeromq.command, timeout=2, key=local_key(self.config))
                try:
                    probe.call("ping")
                    return self
                finally:
                    probe.close()
            except (DaemonUnavailable, OSError, ValueError):
                if not self.proc.running() or time.monotonic() > deadline:
                    raise AssertionError(f"the daemon did not come up:\n{self.proc.text()[-3000:]}") from None
                time.sleep(0.2)

    def client(self, timeout: float = 5) -> CommandClient:
        return CommandClient(self.config.spec.zeromq.command, timeout=timeout, key=local_key(self.config))

    def kill_and_restart(self) -> None:
        self.proc.kill()
        self.start()


class _Subscriber(Subscriber):
    """The project's subscriber (docs/zeromq.md's resync), counting the events a resync filled in:
    those the daemon published while this one was cut off (it was dead, or died before publishing)."""

    refilled = 0

    def _resync(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for kind, payload in super()._resync():
            self.refilled += kind == "event"
            yield kind, payload


class Capture:
    """Every event the daemon publishes, from seq 1, as a ZeroMQ subscriber receives it (a thread), with
    when it arrived. Across a daemon's restart the SUB reconnects by itself and the seqs it missed are
    filled by the documented resync (the snapshot socket's events since the last seq it has); a resync
    that could not fill them (a second snapshot: a redraw) fails the capture."""

    def __init__(self, config: TableConfig) -> None:
        z = config.spec.zeromq
        self.sub = _Subscriber(z.pub, z.snapshot, config.table_id, timeout=5)
        self.events: dict[int, dict[str, Any]] = {}
        self.received: dict[int, float] = {}
        self.snapshots = 0
        self.ready = threading.Event()
        self.done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self.ready.wait(15), "no snapshot from the daemon"

    @property
    def refilled(self) -> int:
        """Events the resync filled in (not received live)."""
        return self.sub.refilled

    def _run(self) -> None:
        while not self.done.is_set():
            for kind, payload in self.sub.events(timeout=0.5):
                if kind == "snapshot":
                    self.snapshots += 1
                    if payload["seq"] == 0 and self.snapshots == 1:
                        self.ready.set()
                elif kind == "event":
                    self.received[int(payload["seq"])] = time.monotonic()
                    self.events[int(payload["seq"])] = payload
                if self.done.is_set():
                    return

    def until(self, seq: int, timeout: float = 20) -> dict[int, dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.events) < seq and time.monotonic() < deadline:
            time.sleep(0.05)
        self.done.set()
        self._thread.join(5)
        self.sub.close()
        assert self.snapshots == 1, f"{self.snapshots} snapshots: it must start at seq 1, never redraw"
        assert len(self.events) == seq, f"captured {len(self.events)} events, the daemon is at seq {seq}"
        return self.events


#: Inputs a Baccarat round takes, about (credits aside): to size a bench's session to its length.
INPUTS_PER_ROUND = 9


@dataclass
class DealingTable:
    """One table of a floor bench: its daemon (a process), its seeded session, the client and dealer
    that send it, and the subscriber that captures what it publishes."""

    config: TableConfig
    inputs: list[Input]
    daemon: TableDaemon
    client: CommandClient
    capture: Capture
    dealer: Dealer


def dealing_tables(stack: ExitStack, work: Path, name: str, count: int, seconds: float, rate: float,
                   seed: int, chunk: int) -> list[DealingTable]:
    """``count`` Baccarat tables (``<name><i>``), each its daemon up with a session of about ``seconds``
    at ``rate`` inputs a second, ready to deal ``chunk`` inputs at a time; all stopped with ``stack``."""
    rounds = max(1, int(seconds * rate / INPUTS_PER_ROUND))
    tables = []
    for i in range(count):
        config = config_for(work, name=f"{name}{i}")
        daemon = TableDaemon(config, work / f"{config.table_id}.daemon.log").start()
        stack.callback(daemon.proc.stop)
        inputs, _ = baccarat_play(rounds, seed=seed * 100 + i)
        client = daemon.client()
        stack.callback(client.close)
        tables.append(DealingTable(config, inputs, daemon, client, Capture(config),
                                   Dealer(client, inputs, chunk=chunk, pause=chunk / rate)))
    return tables


def uplinks_for(stack: ExitStack, work: Path, tables: list[DealingTable], nats_url: str) -> list[Proc]:
    """Each table's ``croupier uplink`` (not started yet), stopped with ``stack``."""
    uplinks = [Proc(work / f"{t.config.table_id}.uplink.log", "uplink", str(t.config.path), "--nats",
                    nats_url) for t in tables]
    for p in uplinks:
        stack.callback(p.stop)
    return uplinks


def floor_servers(stack: ExitStack) -> tuple[NatsServer, Postgres]:
    """A bench's nats-server and PostgreSQL in temporary folders, started; removed with ``stack``."""
    nats, pg = NatsServer(), Postgres()
    stack.callback(nats.remove)
    stack.callback(pg.remove)
    return nats.start(), pg.start()


def table_options(parser: argparse.ArgumentParser) -> None:
    """A floor bench's dealing tables: how many, how fast, the sessions' seed."""
    parser.add_argument("--tables", type=int, default=4, help="dealing tables, each with its uplink (4)")
    parser.add_argument("--rate", type=float, default=10.0, help="inputs per second per table (10)")
    parser.add_argument("--seed", type=int, default=1)

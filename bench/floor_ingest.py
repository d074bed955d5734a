"""Floor ingest: K simulated uplinks into one nats-server and the recorders, rows per second into PostgreSQL.

Not a test: it prints its figures, the command, the machine and its load. One Baccarat journal is
written once through the daemon's own service and derived once into floor messages by the real
uplink code (controller.floor.derive: the events and round records exactly as ``croupier uplink``
sends them; that derive speed is printed as a figure of its own: it is the Pi's work). The K
*simulated uplinks* (``--tables``) are those messages rewritten under K new table ids and journal
ids and published by this process with the uplink's message ids, its ``Croupier-Stored`` header and
its discipline (per table in order, at most 128 publishes awaiting the stream's ack): cheap
publishers, so that the figure is the floor's ingest, not K Python processes replaying Baccarat on
the floor server's cores. Against a nats-server and a PostgreSQL 15 started here in temporary
folders (controller.floor.local):

* sustained, in two stages: the simulated uplinks publish ``--rows`` rows each into the stream
  (rows/s from the first publish to the last ack); then ``--recorders`` ``croupier floor record``
  processes drain the stream into PostgreSQL, rows/s from the first row recorded to the last, with
  the CPU seconds the recorders, PostgreSQL and nats-server used meanwhile (rows per CPU second:
  the figure that does not depend on what else a shared machine is running);
* latency at an offered rate: one more table's rows published at ``--rate`` rows/s for
  ``--seconds``, each timed from its publish to its transaction in PostgreSQL
  (``inputs.recorded_at`` is the transaction's start, a little before its commit).

    python bench/floor_ingest.py --tables 20 --rows 2000 --rate 1000 --seconds 10
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nats
import nats.js.errors
import psycopg
import yaml
from nats.js import JetStreamContext, api

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from daemon_replay import session  # noqa: E402

from controller.daemon.config import TableConfig, load_table  # noqa: E402
from controller.daemon.journal import JOURNAL_NAME, Journal  # noqa: E402
from controller.daemon.service import TableService  # noqa: E402
from controller.floor.cursor import STORED, Stored  # noqa: E402
from controller.floor.derive import JournalSource, Replay  # noqa: E402
from controller.floor.local import NatsServer, Postgres  # noqa: E402
from controller.floor.stream import ensure_stream  # noqa: E402
from controller.floor.wire import (  # noqa: E402
    MSG_ID,
    RECORD_BATCH,
    RECORD_WRITERS,
    STREAM,
    RowMessage,
    subject,
)


def table_file(work: Path, name: str) -> TableConfig:
    data = {"table": name, "game": "baccarat", "state_dir": str(work / name),
            "zeromq": {k: f"ipc://{work}/{name}.{k}" for k in ("pub", "snapshot", "command")}}
    path = work / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return load_table(path)


def journal_copies(work: Path, tables: int, rows: int, prefix: str = "t") -> list[TableConfig]:
    """The template journal, then one copy per table with its own table id and journal id."""
    template = table_file(work, "template")
    journal = Journal.open(template.state_dir, table="template", game="baccarat",
                           options=template.options_dict(), fsync=False)
    service = TableService(template, journal)
    service.replay()
    now = time.time()
    for i, inp in enumerate(session(rows, 1)):
        service.submit(inp, "bench", at=now + i * 0.001)
    journal.close()
    configs = []
    for n in range(tables):
        config = table_file(work, f"{prefix}{n:03d}")
        config.state_dir.mkdir()
        shutil.copy(template.state_dir / JOURNAL_NAME, config.state_dir / JOURNAL_NAME)
        conn = sqlite3.connect(config.state_dir / JOURNAL_NAME)
        conn.executemany("UPDATE meta SET value = ? WHERE key = ?",
                         [(config.table_id, "table"), (str(uuid.uuid4()), "id")])
        conn.commit()
        conn.close()
        configs.append(config)
    return configs


class Counter:
    """One connection that asks PostgreSQL how many rows are recorded, cheaply: the ``tables`` rows'
    ``recorded_row`` (every row up to it is there), not a ``count(*)`` scan of the growing ``inputs``
    nor a new connection (a new backend) ten times a second, which took the cores being measured."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.conn: psycopg.Connection[Any] | None = None

    def __call__(self, table_id: str | None = None) -> int:
        try:
            if self.conn is None:
                self.conn = psycopg.connect(self.dsn, autocommit=True)
            row = self.conn.execute(
                "SELECT COALESCE(sum(recorded_row), 0) FROM tables "
                "WHERE %(t)s::text IS NULL OR table_id = %(t)s",
                {"t": table_id}).fetchone()
            return int(row[0]) if row else 0
        except psycopg.Error:  # not migrated yet: the recorder makes the tables at its start
            self.close()
            return 0

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.conn = None


def rate_of(what: str, counter: Callable[[], int], total: int, sample: Callable[[], dict[str, float]],
            timeout: float = 600) -> tuple[float, float, dict[str, float]]:
    """(per second from the first to the last, seconds, each ``sample()`` figure's growth over that time)
    while ``counter()`` goes from 0 to ``total``."""
    first: tuple[float, int, dict[str, float]] | None = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        n, now = counter(), time.monotonic()
        if first is None and n > 0:
            first = (now, n, sample())
        if first is not None and n >= total:
            took, last = max(now - first[0], 1e-9), sample()
            return (total - first[1]) / took, took, {k: v - first[2][k] for k, v in last.items()}
        time.sleep(0.1)
    raise SystemExit(f"{what}: not all {total} within {timeout} s")


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds process ``pid`` used so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (PostgreSQL's backends are the postmaster's children)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def under(m: RowMessage, table_id: str, journal_id: str) -> RowMessage:
    """``m`` as another table's journal would send it (each event names its table)."""
    return dataclasses.replace(m, table_id=table_id, journal_id=journal_id,
                               events=[{**e, "table": table_id} for e in m.events])


def derived(work: Path, rows: int) -> tuple[list[RowMessage], float]:
    """One journal of ``rows`` rows derived by the uplink's code, and that derive's rows/s."""
    journal_copies(work, 0, rows)
    source = JournalSource(load_table(work / "template.yaml"))
    try:
        start = time.perf_counter()
        replay, last = Replay(source), source.last_row()
        messages = []
        for entry in source.entries(1, last):
            message = replay.message(entry, last)
            message.body()
            messages.append(message)
        return messages, len(messages) / (time.perf_counter() - start)
    finally:
        source.close()


async def publish(js: JetStreamContext, messages: list[RowMessage], rate: float | None = None,
                  sent: dict[int, float] | None = None, window: int = 128) -> None:
    """One table's rows as its uplink publishes them: in order, at most ``window`` awaiting the stream's
    ack, with the uplink's headers; at ``rate`` rows/s if given (each publish's time into ``sent``)."""
    stored, pending = Stored(), deque[tuple[int, asyncio.Future[api.PubAck]]]()
    bodies = [(m, m.body()) for m in messages]
    start = time.time()
    for n, (m, body) in enumerate(bodies):
        if rate is not None:
            await asyncio.sleep(max(0.0, start + n / rate - time.time()))
        if sent is not None:
            sent[m.row] = time.time()
        pending.append((m.row, asyncio.ensure_future(js.publish(
            subject(m.table_id, m.journal_id), body, stream=STREAM,
            headers={MSG_ID: m.id, STORED: stored.header()}))))
        while len(pending) >= window or (pending and n == len(bodies) - 1):
            row, ack = pending.popleft()
            stored.add(row, (await ack).seq)


def fill(nats_url: str, tables: list[list[RowMessage]]) -> tuple[float, float]:
    """Every table's rows into the stream at once: (rows/s from the first publish to the last ack, s)."""
    async def run() -> float:
        nc = await nats.connect(nats_url)
        try:
            js = nc.jetstream()
            await ensure_stream(js)
            start = time.perf_counter()
            await asyncio.gather(*(publish(js, rows) for rows in tables))
            return time.perf_counter() - start
        finally:
            await nc.close()

    took = asyncio.run(run())
    return sum(map(len, tables)) / took, took


def croupier(*args: str) -> list[str]:
    """A ``croupier`` command line that ends with this bench (no recorder left behind)."""
    return [sys.executable, "-m", "controller.cli", *args, "--exit-with-parent", str(os.getpid())]


def recorder(nats_url: str, dsn: str, batch: int, writers: int) -> list[str]:
    return croupier("floor", "record", "--nats", nats_url, "--db", dsn, "--batch", str(batch),
                    "--writers", str(writers))


def drain(work: Path, servers: tuple[NatsServer, Postgres], total: int, recorders: int,
          batch: int, writers: int) -> tuple[float, float, dict[str, float]]:
    """``recorders`` recorder processes (sharing the consumer) drain the stream into PostgreSQL:
    (rows/s, seconds, CPU seconds of the recorders, PostgreSQL and nats-server meanwhile)."""
    nats_server, pg = servers
    assert nats_server.proc is not None and pg.proc is not None
    log = open(work / "procs.log", "ab")  # noqa: SIM115
    procs = [subprocess.Popen(recorder(nats_server.url, pg.dsn, batch, writers), stdout=log, stderr=log)
             for _ in range(recorders)]
    postmaster, nats_pid = pg.proc.pid, nats_server.proc.pid

    def used() -> dict[str, float]:
        return {"recorders": sum(cpu_seconds(p.pid) for p in procs),
                "PostgreSQL": sum(cpu_seconds(pid) for pid in [postmaster, *children(postmaster)]),
                "nats-server": cpu_seconds(nats_pid)}

    counter = Counter(pg.dsn)
    try:
        return rate_of("PostgreSQL", counter, total, used)
    finally:
        counter.close()
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(20)
        log.close()


def latency(nats_url: str, dsn: str, messages: list[RowMessage], rate: float, seconds: float,
            batch: int, writers: int) -> list[float]:
    """One more table's rows published at ``rate`` per second; each row's publish-to-transaction time."""
    table_id = "paced"
    journal_id = str(uuid.uuid4())  # one journal (each row's own journal was a bench defect: a
    rows = [under(m, table_id, journal_id) for m in messages[:int(rate * seconds)]]  # new table row each)
    one = subprocess.Popen(recorder(nats_url, dsn, batch, writers), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    sent: dict[int, float] = {}
    counter = Counter(dsn)

    async def run() -> None:
        nc = await nats.connect(nats_url)
        js = nc.jetstream()
        while (await js.consumer_info(STREAM, "recorder")).num_waiting == 0:  # the recorder is pulling
            await asyncio.sleep(0.05)
        await publish(js, rows, rate, sent)
        await nc.close()

    try:
        asyncio.run(run())
        deadline = time.monotonic() + 120
        while counter(table_id) < len(sent):
            if time.monotonic() > deadline:
                raise SystemExit("the paced rows were not all recorded within 120 s")
            time.sleep(0.2)
    finally:
        counter.close()
        one.terminate()
        one.wait(20)
    with psycopg.connect(dsn) as conn:
        got = conn.execute("SELECT row, EXTRACT(EPOCH FROM recorded_at)::float8 FROM inputs "
                           "WHERE table_id = %s", (table_id,)).fetchall()
    return sorted(at - sent[row] for row, at in got)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tables", type=int, default=20, help="simulated uplinks, each its own table")
    parser.add_argument("--rows", type=int, default=2000, help="journal rows per table")
    parser.add_argument("--rate", type=float, default=1000.0, help="rows/s offered for the latency figure")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long rows are offered at --rate")
    parser.add_argument("--recorders", type=int, default=1,
                        help="recorder processes sharing the consumer for the sustained figure (1)")
    parser.add_argument("--batch", type=int, default=RECORD_BATCH,
                        help=f"each recorder's --batch ({RECORD_BATCH}, as croupier floor record's)")
    parser.add_argument("--writers", type=int, default=RECORD_WRITERS,
                        help=f"each recorder's --writers ({RECORD_WRITERS}, as croupier floor record's)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="croupier-floor-ingest-"))
    nats_server, pg = NatsServer(), Postgres()
    load = [os.getloadavg()[0]]
    try:
        nats_server.start()
        pg.start()
        template, derive_rate = derived(work, max(args.rows, int(args.rate * args.seconds)))
        tables = [[under(m, f"t{n:03d}", journal) for m in template[:args.rows]]
                  for n, journal in ((n, str(uuid.uuid4())) for n in range(args.tables))]
        assert nats_server.proc is not None
        nats_before = cpu_seconds(nats_server.proc.pid)
        up_rate, up_took = fill(nats_server.url, tables)
        nats_in = cpu_seconds(nats_server.proc.pid) - nats_before
        load.append(os.getloadavg()[0])
        db_rate, db_took, used = drain(work, (nats_server, pg), args.rows * args.tables, args.recorders,
                                       args.batch, args.writers)
        load.append(os.getloadavg()[0])
        waits = latency(nats_server.url, pg.dsn, template, args.rate, args.seconds, args.batch, args.writers)
        load.append(os.getloadavg()[0])
    finally:
        nats_server.remove()
        pg.remove()
        shutil.rmtree(work, ignore_errors=True)
    print("command:", "python bench/floor_ingest.py " + " ".join(sys.argv[1:]))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.platform()}; load average (1 min) {', '.join(f'{x:.1f}' for x in load)} "
          "(start, after each stage)")
    rows = args.tables * args.rows
    print(f"one uplink's derive (the Pi's work, not the floor's): {derive_rate:,.0f} rows/s")
    print(f"simulated uplinks into the stream: {args.tables} tables x {args.rows} rows = {rows} rows in "
          f"{up_took:.1f} s: {up_rate:,.0f} rows/s (one nats-server, which used {nats_in:.2f} CPU seconds)")
    print(f"recorders into PostgreSQL: the {rows} rows in {db_took:.1f} s: {db_rate:,.0f} rows/s "
          f"({args.recorders} recorder(s), batches of {args.batch}, {args.writers} writer(s) each)")
    total = sum(used.values())
    print("CPU seconds meanwhile: " + ", ".join(f"{k} {v:.2f}" for k, v in used.items()) +
          f"; {db_rate * db_took / max(total, 1e-9):,.0f} rows per CPU second in all")
    floor = (total + nats_in) / rows
    print(f"the floor server's CPU per row, all of it (nats-server taking it in and handing it out, the "
          f"recorders, PostgreSQL): {floor * 1e6:.0f} µs, so {os.cpu_count()} idle cores would take "
          f"{(os.cpu_count() or 1) / floor:,.0f} rows/s at most")
    p = statistics.quantiles(waits, n=100)
    print(f"publish to transaction (one recorder) at {args.rate:.0f} rows/s offered for {args.seconds:.0f} s "
          f"({len(waits)} rows): p50 {p[49] * 1000:.1f} ms, p99 {p[98] * 1000:.1f} ms, "
          f"max {waits[-1] * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

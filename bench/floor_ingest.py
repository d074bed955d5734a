"""Floor ingest: K uplinks into one nats-server and one recorder, rows per second into PostgreSQL.

Not a test: it prints its figures, the command and the machine. One Baccarat journal of ``--rows``
inputs is written once through the daemon's own service, then copied under ``--tables`` new table
ids (new journal ids too); ``croupier uplink`` runs for each copy and ``croupier floor record`` once,
each its own process, against a nats-server and a PostgreSQL 15 started here in temporary folders
(controller.floor.local). Two figures:

* sustained, in two stages (on 2 cores, K Python processes starting at once would measure their
  imports): the uplinks publish every row into the stream, rows/s from the first in the stream to
  the last; then one recorder drains the stream into PostgreSQL, rows/s from the first row
  recorded to the last;
* latency at an offered rate: this process publishes rows of one more table itself at ``--rate``
  rows/s and reads, for each, the time from its publish to its transaction in PostgreSQL
  (``inputs.recorded_at`` is the transaction's start, a little before its commit).

    python bench/floor_ingest.py --tables 20 --rows 2000 --rate 1000 --seconds 10
"""

from __future__ import annotations

import argparse
import asyncio
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
from collections.abc import Callable
from pathlib import Path

import nats
import nats.js.errors
import psycopg
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from daemon_replay import session  # noqa: E402

from controller.daemon.config import TableConfig, load_table  # noqa: E402
from controller.daemon.journal import JOURNAL_NAME, Journal  # noqa: E402
from controller.daemon.service import TableService  # noqa: E402
from controller.floor.cursor import STORED, Stored  # noqa: E402
from controller.floor.derive import JournalSource, Replay  # noqa: E402
from controller.floor.local import NatsServer, Postgres  # noqa: E402
from controller.floor.uplink import ensure_stream  # noqa: E402
from controller.floor.wire import MSG_ID, STREAM, subject  # noqa: E402


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


def count(dsn: str, sql: str) -> int:
    try:
        with psycopg.connect(dsn) as conn:
            return int(conn.execute(sql).fetchone()[0])  # type: ignore[index]
    except psycopg.Error:
        return 0


def stream_count(nats_url: str) -> int:
    async def ask() -> int:
        nc = await nats.connect(nats_url)
        try:
            return int((await nc.jetstream().stream_info(STREAM)).state.messages)
        except nats.js.errors.NotFoundError:
            return 0
        finally:
            await nc.close()

    return asyncio.run(ask())


def rate_of(what: str, counter: Callable[[], int], total: int, timeout: float = 600) -> tuple[float, float]:
    """(per second from the first to the last, seconds) while ``counter()`` goes from 0 to ``total``."""
    first: tuple[float, int] | None = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        n, now = counter(), time.monotonic()
        if first is None and n > 0:
            first = (now, n)
        if first is not None and n >= total:
            return (total - first[1]) / max(now - first[0], 1e-9), now - first[0]
        time.sleep(0.1)
    raise SystemExit(f"{what}: not all {total} within {timeout} s")


def croupier(*args: str) -> list[str]:
    """A ``croupier`` command line that ends with this bench (no uplink or recorder left behind)."""
    return [sys.executable, "-m", "controller.cli", *args, "--exit-with-parent", str(os.getpid())]


def recorder(nats_url: str, dsn: str, batch: int) -> list[str]:
    return croupier("floor", "record", "--nats", nats_url, "--db", dsn, "--batch", str(batch))


def sustained(
    work: Path, nats_url: str, dsn: str, configs: list[TableConfig], rows: int, recorders: int, batch: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Every uplink as a process into the stream, then ``recorders`` recorder processes (sharing the
    consumer) draining it into PostgreSQL: (rows/s, seconds) of each stage, first row to last
    (start-up left out)."""
    total = rows * len(configs)
    log = open(work / "procs.log", "ab")  # noqa: SIM115
    procs = [subprocess.Popen(croupier("uplink", str(c.path), "--nats", nats_url), stdout=log, stderr=log)
             for c in configs]
    try:
        into_stream = rate_of("the stream", lambda: stream_count(nats_url), total)
        procs += [subprocess.Popen(recorder(nats_url, dsn, batch), stdout=log, stderr=log)
                  for _ in range(recorders)]
        into_db = rate_of("PostgreSQL", lambda: count(dsn, "SELECT count(*) FROM inputs"), total)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(20)
        log.close()
    return into_stream, into_db


def latency(work: Path, nats_url: str, dsn: str, rate: float, seconds: float, batch: int) -> list[float]:
    """Publish one more table's rows at ``rate`` per second; each row's publish-to-transaction time."""
    paced = work / "paced"
    paced.mkdir()
    config = journal_copies(paced, 1, int(rate * seconds), prefix="paced")[0]
    one = subprocess.Popen(recorder(nats_url, dsn, batch), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    sent: dict[int, float] = {}

    async def publish() -> None:
        nc = await nats.connect(nats_url)
        js = nc.jetstream()
        await ensure_stream(js)
        while (await js.consumer_info(STREAM, "recorder")).num_waiting == 0:  # the recorder is pulling
            await asyncio.sleep(0.05)
        source = JournalSource(config)
        replay, last, stored = Replay(source), source.last_row(), Stored()
        start = time.time()
        acks = []
        for entry in source.entries(1, last):
            message = replay.message(entry, last)
            await asyncio.sleep(max(0.0, start + entry.id / rate - time.time()))
            sent[entry.id] = time.time()
            acks.append(asyncio.ensure_future(js.publish(
                subject(config.table_id), message.body(),
                headers={MSG_ID: message.id, STORED: stored.header()})))
        await asyncio.gather(*acks)
        source.close()
        await nc.close()

    try:
        asyncio.run(publish())
        deadline = time.monotonic() + 120
        while count(dsn, f"SELECT count(*) FROM inputs WHERE table_id = '{config.table_id}'") < len(sent):
            if time.monotonic() > deadline:
                raise SystemExit("the paced rows were not all recorded within 120 s")
            time.sleep(0.2)
    finally:
        one.terminate()
        one.wait(20)
    with psycopg.connect(dsn) as conn:
        got = conn.execute("SELECT row, EXTRACT(EPOCH FROM recorded_at)::float8 FROM inputs "
                           "WHERE table_id = %s", (config.table_id,)).fetchall()
    return sorted(at - sent[row] for row, at in got)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=20, help="uplinks, each its own table and process")
    parser.add_argument("--rows", type=int, default=2000, help="journal rows per table")
    parser.add_argument("--rate", type=float, default=1000.0, help="rows/s offered for the latency figure")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long rows are offered at --rate")
    parser.add_argument("--recorders", type=int, default=1,
                        help="recorder processes sharing the consumer for the sustained figure (1)")
    parser.add_argument("--batch", type=int, default=256,
                        help="each recorder's --batch (256, as croupier floor record's)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="croupier-floor-ingest-"))
    nats_server, pg = NatsServer(), Postgres()
    try:
        nats_server.start()
        pg.start()
        configs = journal_copies(work, args.tables, args.rows)
        (up_rate, up_took), (db_rate, db_took) = sustained(work, nats_server.url, pg.dsn, configs, args.rows,
                                                           args.recorders, args.batch)
        waits = latency(work, nats_server.url, pg.dsn, args.rate, args.seconds, args.batch)
    finally:
        nats_server.remove()
        pg.remove()
        shutil.rmtree(work, ignore_errors=True)
    print("command:", "python bench/floor_ingest.py " + " ".join(sys.argv[1:]))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.platform()}")
    rows = args.tables * args.rows
    print(f"uplinks into the stream: {args.tables} uplink processes x {args.rows} rows = {rows} rows in "
          f"{up_took:.1f} s: {up_rate:,.0f} rows/s (one nats-server)")
    print(f"recorders into PostgreSQL: the {rows} rows in {db_took:.1f} s: {db_rate:,.0f} rows/s "
          f"({args.recorders} recorder(s), batches of {args.batch})")
    p = statistics.quantiles(waits, n=100)
    print(f"publish to transaction (one recorder) at {args.rate:.0f} rows/s offered for {args.seconds:.0f} s "
          f"({len(waits)} rows): p50 {p[49] * 1000:.1f} ms, p99 {p[98] * 1000:.1f} ms, "
          f"max {waits[-1] * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

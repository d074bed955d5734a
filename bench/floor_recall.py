"""Floor recall timing over a large history: `floor recall` and `floor export` against many rounds.

Not a test: it prints its figures, the plans, the command and the machine. A PostgreSQL 15 is
started in a temporary folder (controller.floor.local) and migrated; one Baccarat journal of
``--template-rows`` inputs is written through the daemon's own service and turned into floor
messages by the uplink's own code (controller.floor.derive), as a recorder would store them. Those
rows, events and rounds are then repeated, whole rounds at a time, into one journal per table for
``--tables`` tables until ``--rounds`` rounds are stored, loaded with COPY: each repeat renumbered
(rows, seqs, rounds) and re-timed to ``--rounds-per-hour`` (table, seq and round numbers inside the
JSON payloads follow; the cards and amounts repeat). Then, after ANALYZE, the very queries of
controller.floor.queries are timed in this process (p50/p99 over random tables): one round
(``--round N``), the last 10 rounds (``--last 10``), one day's export, and one day's report of every
table (controller.floor.report, ``croupier floor report``'s query and aggregation); and ``croupier floor
recall TABLE --last 10`` is timed as a command (a new Python process each time). EXPLAIN ANALYZE
shows which index each query reads.

    python bench/floor_recall.py --rounds 100000 --tables 50
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from floor_ingest import journal_copies  # noqa: E402

from controller.floor import queries, report  # noqa: E402
from controller.floor.derive import JournalSource, Replay  # noqa: E402
from controller.floor.local import Postgres  # noqa: E402
from controller.floor.schema import migrate  # noqa: E402
from controller.floor.wire import RowMessage  # noqa: E402

#: Stand-ins put into the JSON payloads where each repeat's own value goes (then replaced as text).
MARKS = {"table": '"@@table@@"', "seq": "-900000001", "round": "-900000002", "first_seq": "-900000003",
         "last_seq": "-900000004", "opened_at": "-900000005", "ended_at": "-900000006"}
BASE_TIME = 1_767_225_600.0  # 2026-01-01 00:00 UTC
DAY = 86_400.0


def copy_text(value: str) -> str:
    """A value as COPY's text format wants it (our JSON has no raw tab or newline; only '\\' to double)."""
    return value.replace("\\", "\\\\")


def marked(payload: dict[str, Any]) -> str:
    """``payload`` as JSON with the MARKS' stand-ins for the keys it has."""
    return copy_text(json.dumps({k: json.loads(MARKS[k]) if k in MARKS else v for k, v in payload.items()},
                                separators=(",", ":")))


def fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(MARKS[key], value)
    return text


def template(rows: int) -> tuple[list[RowMessage], int]:
    """The template's messages up to the last one that ended a round, and its number of rounds."""
    work = Path(tempfile.mkdtemp(prefix="croupier-floor-recall-template-"))
    try:
        config = journal_copies(work, 1, rows)[0]
        source = JournalSource(config)
        replay, last = Replay(source), source.last_row()
        messages = [replay.message(entry, last) for entry in source.entries(1, last)]
        source.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ends = [n for n, m in enumerate(messages) if m.round is not None]
    return messages[:ends[-1] + 1], len(ends)


class Load:
    """The template repeated into ``tables`` journals of ``cycles`` repeats each, as COPY text lines."""

    def __init__(self, messages: list[RowMessage], cycles: int, row_gap: float) -> None:
        self.messages, self.cycles, self.row_gap = messages, cycles, row_gap
        self.n_rows = len(messages)
        self.n_seqs = max(m.first_seq + len(m.events) - 1 for m in messages)
        self.n_rounds = sum(1 for m in messages if m.round is not None)
        self.t0 = messages[0].at
        self.step = (messages[-1].at - self.t0) / max(self.n_rows - 1, 1)  # the template's time per row
        self.events = [[(int(e["seq"]), str(e["event"]), marked(e)) for e in m.events] for m in messages]
        self.inputs = [copy_text(json.dumps(m.input, separators=(",", ":"))) for m in messages]
        self.records = [marked(m.round) if m.round is not None else "" for m in messages]

    def when(self, old: float, cycle: int) -> float:
        """A template time moved to repeat ``cycle`` at the bench's pace."""
        return BASE_TIME + ((old - self.t0) / self.step + cycle * self.n_rows) * self.row_gap

    def lines(self, table: str, journal: str, kind: str) -> Iterator[str]:
        for cycle in range(self.cycles):
            rows, seqs, rounds = cycle * self.n_rows, cycle * self.n_seqs, cycle * self.n_rounds
            for n, m in enumerate(self.messages):
                row, at = rows + m.row, self.when(m.at, cycle)
                if kind == "inputs":
                    yield (f"{table}\t{journal}\t{row}\t{at!r}\t{m.source}\t\\N\t{self.inputs[n]}\t"
                           f"{seqs + m.first_seq}\t{len(m.events)}\n")
                elif kind == "events":
                    for seq, name, payload in self.events[n]:
                        text = fill(payload, {"table": f'"{table}"', "seq": str(seqs + seq)})
                        yield f"{table}\t{journal}\t{seqs + seq}\t{row}\t{name}\t{text}\n"
                elif m.round is not None:
                    r = m.round
                    values = {"table": f'"{table}"', "round": str(rounds + int(r["round"])),
                              "first_seq": str(seqs + int(r["first_seq"])),
                              "last_seq": str(seqs + int(r["last_seq"])),
                              "opened_at": repr(self.when(float(r.get("opened_at") or m.at), cycle)),
                              "ended_at": repr(self.when(float(r.get("ended_at") or m.at), cycle))}
                    yield (f"{table}\t{journal}\t{values['round']}\t{r['status']}\t{values['opened_at']}\t"
                           f"{values['ended_at']}\t{values['first_seq']}\t{values['last_seq']}\t"
                           f"{r.get('house_net') if r.get('house_net') is not None else chr(92) + 'N'}\t"
                           f"{fill(self.records[n], values)}\n")


COLUMNS = {
    "inputs": "table_id, journal_id, row, at, source, ref, input, first_seq, event_count",
    "events": "table_id, journal_id, seq, row, event, payload",
    "rounds": "table_id, journal_id, round, status, opened_at, ended_at, first_seq, last_seq, house_net, "
              "record",
}


def load(conn: psycopg.Connection[Any], plan: Load, tables: list[str]) -> dict[str, int]:
    """Every table's journal into PostgreSQL by COPY, one transaction; rows per relation."""
    counts = {}
    first = plan.messages[0]
    with conn.transaction(), conn.cursor() as cur:
        for t in tables:
            cur.execute("INSERT INTO tables (table_id, journal_id, game, options, currency, recorded_row, "
                        "journal_rows, last_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                        (t, f"{t}-journal", first.game, json.dumps(first.options), json.dumps(first.currency),
                         plan.cycles * plan.n_rows, plan.cycles * plan.n_rows,
                         plan.when(plan.messages[-1].at, plan.cycles - 1)))
        for kind, columns in COLUMNS.items():
            n = 0
            with cur.copy(f"COPY {kind} ({columns}) FROM STDIN") as copy:
                chunk: list[str] = []
                for t in tables:
                    for line in plan.lines(t, f"{t}-journal", kind):
                        chunk.append(line)
                        if len(chunk) == 5000:
                            copy.write("".join(chunk))
                            n += len(chunk)
                            chunk = []
                copy.write("".join(chunk))
                n += len(chunk)
            counts[kind] = n
    conn.execute("ANALYZE")
    return counts


def timed(repeat: int, run: Callable[[], object]) -> list[float]:
    took = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        took.append(time.perf_counter() - start)
    return sorted(took)


def figures(took: list[float]) -> str:
    p = statistics.quantiles(took, n=100) if len(took) > 1 else [took[0]] * 99
    return f"p50 {p[49] * 1000:.1f} ms, p99 {p[98] * 1000:.1f} ms ({len(took)} runs)"


def explain(conn: psycopg.Connection[Any], sql: str, args: tuple[Any, ...] | dict[str, Any]) -> str:
    plan = conn.execute(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) {sql}", args).fetchall()
    conn.rollback()
    return "\n".join(f"    {line}" for (line,) in plan)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1_000_000, help="rounds in the history (1,000,000)")
    parser.add_argument("--tables", type=int, default=100, help="tables sharing them (100)")
    parser.add_argument("--rounds-per-hour", type=float, default=60.0, help="each table's pace (60)")
    parser.add_argument("--template-rows", type=int, default=2000,
                        help="journal rows dealt once, then repeated (2000)")
    parser.add_argument("--repeat", type=int, default=200, help="timings of each recall query (200)")
    parser.add_argument("--exports", type=int, default=20, help="timings of a day's export (20)")
    parser.add_argument("--commands", type=int, default=5, help="timings of the recall command (5)")
    args = parser.parse_args()
    rng = random.Random(1)
    messages, per_template = template(args.template_rows)
    cycles = max(1, round(args.rounds / args.tables / per_template))
    row_gap = 3600.0 / args.rounds_per_hour * per_template / len(messages)  # seconds per row
    plan = Load(messages, cycles, row_gap)
    tables = [f"t{n:04d}" for n in range(args.tables)]
    pg = Postgres()
    try:
        pg.start()
        with psycopg.connect(pg.dsn) as conn:
            migrate(conn)
            start = time.monotonic()
            counts = load(conn, plan, tables)
            loaded = time.monotonic() - start
            size = conn.execute("SELECT pg_size_pretty(pg_database_size(current_database()))").fetchone()
            rounds_per_table = cycles * plan.n_rounds
            span = plan.when(messages[-1].at, cycles - 1) - BASE_TIME

            def one_round() -> object:
                return queries.recall(conn, rng.choice(tables), 1, rng.randint(1, rounds_per_table))

            def last_ten() -> object:
                return queries.recall(conn, rng.choice(tables), 10)

            exported: list[int] = []

            def a_day() -> object:
                day = BASE_TIME + rng.randrange(max(1, int(span // DAY))) * DAY
                rows = list(queries.export(conn, rng.choice(tables), day, day + DAY))
                exported.append(len(rows))
                return rows

            def a_day_s_report() -> object:  # every table's rounds of a day (croupier floor report)
                day = BASE_TIME + rng.randrange(max(1, int(span // DAY))) * DAY
                return report.aggregate(report.from_floor(conn, day, day + DAY), "table", day, day + DAY)

            results = {"--round N": timed(args.repeat, one_round), "--last 10": timed(args.repeat, last_ten),
                       "export, one day": timed(args.exports, a_day),
                       "report, one day, every table": timed(args.exports, a_day_s_report)}
            some = rng.choice(tables)
            plans = {"journal": explain(conn, queries.NEWEST_JOURNAL, (some,)),
                     "--last 10": explain(conn, queries.RECALL, (some, f"{some}-journal", None, None, 10)),
                     "--round N": explain(conn, queries.RECALL, (some, f"{some}-journal", 5, 5, 10)),
                     "export, one day": explain(conn, queries.EXPORT,
                                                (some, BASE_TIME, BASE_TIME + DAY)),
                     "report, one day, every table": explain(conn, report.ROUNDS, {
                         "start": BASE_TIME, "end": BASE_TIME + DAY, "table": None})}
        command = [sys.executable, "-m", "controller.cli", "floor", "recall", some, "--last", "10",
                   "--db", pg.dsn]
        wall = timed(args.commands, lambda: subprocess.run(command, check=True, capture_output=True))
    finally:
        pg.remove()
    print("command:", "python bench/floor_recall.py " + " ".join(sys.argv[1:]))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.platform()}, load average {os.getloadavg()[0]:.1f}")
    print(f"history: {args.tables} tables x {rounds_per_table:,} rounds = {args.tables * rounds_per_table:,} "
          f"rounds, {counts['inputs']:,} inputs, {counts['events']:,} events ({span / DAY:.1f} days per "
          f"table at {args.rounds_per_hour:g} rounds/h); database {size[0] if size else '?'}; "
          f"loaded by COPY in {loaded:.1f} s")
    for name, took in results.items():
        print(f"{name}: {figures(took)}")
    print(f"  (a day's export: {statistics.mean(exported):,.0f} rows on average)")
    print(f"croupier floor recall TABLE --last 10 as a command (Python start-up included): {figures(wall)}")
    for name, text in plans.items():
        print(f"EXPLAIN ANALYZE {name}:\n{text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

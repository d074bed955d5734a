"""Floor outage and backfill: nats-server down for minutes while the tables deal; the tables never notice.

Not a test (tests/test_floor_outage.py is the short one). ``--tables`` Baccarat daemons, each its own
process (``croupier run TABLE --no-shoe``), deal seeded sessions sent to their command sockets by
this script at ``--rate`` inputs a second, each followed by a ZeroMQ subscriber; each has its
``croupier uplink``, one ``croupier floor record`` writes to PostgreSQL. After ``--before`` seconds
nats-server is SIGKILLed, for ``--outage`` seconds (300), then started again; the tables deal on for
``--after`` seconds. Measured:

* card-to-subscriber latency: for every card (a ``card_seen`` input), the subscriber's receive time
  of the last event the card caused (its reply's ``seq``) minus the time this script sent the card's
  command (one clock, this process's), p50/p99/max per phase: before the outage, during it, during
  the backfill (until every uplink has sent what the outage gathered: the uplinks then compete with
  the daemons for the CPU, as on a Pi) and after it;
* how long each uplink took to backfill: until PostgreSQL held the rows its journal had when
  nats-server came back (PostgreSQL polled every 0.1 s);
* ``croupier floor tables --json`` run as its own process every ``--sample`` seconds (back to back
  during the backfill), printed (each table's recorded rows, lag and uplink state) with the table's
  own journal length beside it, until every table's lag is zero;
* at the end, per table: the stream holds the journal's rows in row order (the backfill was in order),
  PostgreSQL every row and event once, equal to the journal and to the subscriber's capture.

    python bench/floor_outage.py --outage 300 --tables 4
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from floor_support import (  # noqa: E402
    Proc,
    assert_exactly_once,
    dealing_tables,
    floor_servers,
    floor_tables,
    journal_rows,
    recorded_row,
    stream_rows,
    table_options,
    uplinks_for,
)

from controller import inputs as I  # noqa: E402

CHUNK = 5


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outage", type=float, default=300.0, help="seconds nats-server is down (300)")
    parser.add_argument("--before", type=float, default=60.0, help="seconds of dealing before it (60)")
    parser.add_argument("--after", type=float, default=60.0, help="seconds of dealing after it (60)")
    parser.add_argument("--sample", type=float, default=10.0, help="seconds between floor tables (10)")
    table_options(parser)
    return parser.parse_args()


def figures(values: list[float]) -> str:
    if len(values) < 2:
        return f"{len(values)} cards"
    cut = statistics.quantiles(values, n=100, method="inclusive")
    return (f"{len(values)} cards, p50 {cut[49] * 1000:.1f} ms, p99 {cut[98] * 1000:.1f} ms, "
            f"max {max(values) * 1000:.1f} ms")


class Backfill:
    """When each table's floor record reached the rows its journal held as nats-server came back (a
    thread polling PostgreSQL every 0.1 s): how long each uplink took to backfill the outage."""

    def __init__(self, dsn: str, backlog: dict[str, int], up: float) -> None:
        self.seconds: dict[str, float] = {}
        self.done = threading.Event()

        def watch() -> None:
            deadline = up + 600
            while len(self.seconds) < len(backlog) and time.monotonic() < deadline:
                for table, rows in backlog.items():
                    if table not in self.seconds and recorded_row(dsn, table) >= rows:
                        self.seconds[table] = time.monotonic() - up
                time.sleep(0.1)
            self.done.set()

        threading.Thread(target=watch, daemon=True).start()


def out_of_order(held: list[tuple[str, int]], journal: str, rows: int) -> str:
    """Where the stream's messages depart from rows 1..``rows`` of ``journal`` in order."""
    wrong = [(n, got) for n, got in enumerate(held, 1) if got != (journal, n)]
    n, got = wrong[0] if wrong else (len(held) + 1, None)
    around = [r for _, r in held[max(0, n - 4):n + 6]]
    return (f"{len(held)} messages for {rows} rows, {len(set(held))} distinct; message {n} holds {got}, "
            f"rows around it {around}")


def main() -> int:
    args = options()
    work = Path(tempfile.mkdtemp(prefix="croupier-floor-outage-"))
    seconds = args.before + args.outage + args.after
    samples: list[tuple[float, dict[str, dict[str, Any]], dict[str, int]]] = []
    with ExitStack() as stack:
        nats, pg = floor_servers(stack)
        recorder = Proc(work / "rec.log", "floor", "record", "--nats", nats.url, "--db", pg.dsn)
        stack.callback(recorder.stop)
        tables = dealing_tables(stack, work, "outage", args.tables, seconds, args.rate, args.seed, CHUNK)
        uplinks = uplinks_for(stack, work, tables, nats.url)
        for p in (recorder, *uplinks):
            p.start()
        started = time.monotonic()

        def sample() -> bool:
            """``floor tables`` once; whether every table's lag is zero and its journal all recorded."""
            shown = floor_tables(pg.dsn)
            own = {t.config.table_id: len(journal_rows(t.config)[1]) for t in tables}
            samples.append((time.monotonic(), shown, own))
            return all(shown.get(t, {}).get("behind") == 0 and shown[t]["recorded_row"] == n
                       for t, n in own.items())

        def sample_until(end: float) -> None:
            """``floor tables`` every ``--sample`` s until ``end`` (monotonic)."""
            while time.monotonic() < end:
                sample()
                time.sleep(max(0.0, min(args.sample, end - time.monotonic())))

        for t in tables:
            t.dealer.start()
        sample_until(started + args.before)
        down = time.monotonic()
        nats.kill()
        sample_until(down + args.outage)
        backlog = {t.config.table_id: len(journal_rows(t.config)[1]) for t in tables}
        nats.start()
        up = time.monotonic()
        backfilled = Backfill(pg.dsn, backlog, up)
        while not backfilled.done.is_set():  # back to back while the uplinks catch up: the lag falling
            sample()
        while not all(t.dealer.done.is_set() for t in tables):
            sample_until(time.monotonic() + args.sample)
        dealt = time.monotonic() - started
        deadline = time.monotonic() + 600
        while not sample() and time.monotonic() < deadline:
            time.sleep(1.0)
        caught_up = samples[-1][0] - up
        latency: dict[str, list[float]] = {"before the outage": [], "during the outage": [],
                                           "during the backfill": [], "after the backfill": []}
        filled = up + max(backfilled.seconds.values(), default=0.0)
        failed = 0
        results = []
        for table in tables:
            config, inputs, capture, dealer = table.config, table.inputs, table.capture, table.dealer
            dealer.join(60)
            published = capture.until(int(table.client.call("ping")["seq"]))
            for i, inp in enumerate(inputs):
                if isinstance(inp, I.CardSeen) and dealer.replies[i].get("ok"):
                    sent = dealer.sent[i]
                    phase = ("before the outage" if sent < down else "during the outage" if sent < up
                             else "during the backfill" if sent < filled else "after the backfill")
                    latency[phase].append(capture.received[int(dealer.replies[i]["seq"])] - sent)
            journal, rows = journal_rows(config)
            held = stream_rows(nats.url, config.table_id)
            in_order = held == [(journal, r) for r in range(1, len(rows) + 1)]
            order = "yes" if in_order else f"NO: {out_of_order(held, journal, len(rows))}"
            try:
                assert_exactly_once(pg.dsn, config, published)
                once = "every row and event once, equal to the journal and the capture"
            except AssertionError as exc:
                once, failed = f"NOT exactly once: {str(exc).splitlines()[0][:200]}", failed + 1
            failed += not in_order or dealer.resent > 0
            tid = config.table_id
            results.append(f"{tid}: {len(rows)} journal rows ({backlog[tid]} when nats-server came back, "
                           f"recorded {backfilled.seconds.get(tid, float('nan')):.1f} s later), "
                           f"inputs resent {dealer.resent}, stream in row order: {order}; {once}")
        print("command:", "python bench/floor_outage.py " + " ".join(sys.argv[1:]))
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
              f"load average {os.getloadavg()[0]:.1f}")
        print(f"{args.tables} tables at {args.rate:g} inputs/s each dealt for {dealt / 60:.1f} min; "
              f"nats-server down for {up - down:.0f} s from {down - started:.0f} s; the outage's rows "
              f"recorded {max(backfilled.seconds.values(), default=float('nan')):.1f} s after it came "
              f"back; every table recorded to its last row, lag 0, {caught_up:.1f} s after (dealing "
              f"ended {dealt - (up - started):.1f} s after)")
        print("card-to-subscriber latency (subscriber's receive time of the card's last event minus the card "
              "command's send time):")
        for phase, values in latency.items():
            print(f"  {phase:<19}: {figures(values)}")
        print("croupier floor tables --json over time (t: seconds after nats-server came back; per table "
              "recorded rows / behind / uplink online, [the journal's own rows]):")
        for at, shown, own in samples:
            cells = [f"{t} {s.get('recorded_row', '-')}/{s.get('behind', '-')}/"
                     f"{'on' if s.get('online') else 'OFF'} [{own[t]}]"
                     for t, s in ((t, shown.get(t, {})) for t in sorted(own))]
            print(f"  t={at - up:+7.1f}  " + "  ".join(cells))
        print("\n".join(results))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

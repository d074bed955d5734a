"""Floor chaos, the long run: tables dealing for minutes while the floor's processes are killed at random.

Not a test (tests/test_floor_chaos.py is the short, ordered one): it prints its summary. ``--tables``
Baccarat daemons, each its own process (``croupier run TABLE --no-shoe``), deal seeded sessions sent
to their command sockets by this script (each input with a ``ref``, sent again until the daemon
answers), each followed by a ZeroMQ subscriber that captures every event it publishes; each has its
``croupier uplink``, two ``croupier floor record`` share the consumer, one nats-server and one
PostgreSQL 15 run in temporary folders. Every ``--kill-every`` seconds on average (exponential) one
of them is chosen at random: a daemon, an uplink or a recorder SIGKILLed and restarted, nats-server
SIGKILLed and restarted, PostgreSQL stopped with ``pg_ctl stop -m immediate``'s signal and restarted.
A restarted daemon continues its seq from its journal; the subscriber reconnects by itself and fills
the seqs it missed by the documented resync (docs/zeromq.md), counted as "refilled". At the end, for
each table: its journal's rows (and the inputs dealt: a row journaled twice would show), what
PostgreSQL holds (losses: journal rows not there; duplicates: keys more than once; gaps recorded),
and whether the floor's events equal the subscriber's capture, seq for seq.

    python bench/floor_chaos.py --minutes 10 --tables 4 --kill-every 8
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from floor_support import (  # noqa: E402
    Proc,
    assert_exactly_once,
    dealing_tables,
    floor_servers,
    journal_rows,
    query,
    recorded_row,
    table_options,
    uplinks_for,
)

CHUNK = 20


def options() -> argparse.Namespace:
    """The run's length, size and violence, and its seed (the kills' and the sessions')."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="how long the tables deal (10)")
    parser.add_argument("--kill-every", type=float, default=8.0, help="mean seconds between kills (8)")
    table_options(parser)
    return parser.parse_args()


def main() -> int:
    args = options()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="croupier-floor-chaos-"))
    kills: Counter[str] = Counter()
    with ExitStack() as stack:
        nats, pg = floor_servers(stack)
        recorders = [Proc(work / f"rec{n}.log", "floor", "record", "--nats", nats.url, "--db", pg.dsn,
                          "--ack-wait", "5", "--gap-grace", "30") for n in (1, 2)]
        for p in recorders:
            stack.callback(p.stop)
        tables = dealing_tables(stack, work, "chaos", args.tables, args.minutes * 60, args.rate, args.seed,
                                CHUNK)
        uplinks = uplinks_for(stack, work, tables, nats.url)
        for p in (*recorders, *uplinks):
            p.start()
        started = time.monotonic()
        for t in tables:
            t.dealer.start()
        while not all(t.dealer.done.is_set() for t in tables):
            time.sleep(rng.expovariate(1 / args.kill_every))
            victim = rng.choice(["daemon", "uplink", "recorder", "nats", "postgres"])
            kills[victim] += 1
            if victim == "daemon":
                rng.choice(tables).daemon.kill_and_restart()
            elif victim in ("uplink", "recorder"):
                proc = rng.choice(uplinks if victim == "uplink" else recorders)
                if proc.running():
                    proc.kill()
                proc.start()
            elif victim == "nats":
                nats.kill()
                time.sleep(rng.uniform(0.1, 3.0))
                nats.start()
            else:
                pg.stop("immediate")
                time.sleep(rng.uniform(0.1, 3.0))
                pg.start()
        dealt = time.monotonic() - started
        for t in tables:
            t.dealer.join(60)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not all(
                recorded_row(pg.dsn, t.config.table_id) == len(journal_rows(t.config)[1]) for t in tables):
            time.sleep(0.5)
        print("command:", "python bench/floor_chaos.py " + " ".join(sys.argv[1:]))
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
              f"load average {os.getloadavg()[0]:.1f}")
        print(f"dealt for {dealt / 60:.1f} min; kills: {sum(kills.values())} "
              f"({', '.join(f'{k} {v}' for k, v in sorted(kills.items()))})")
        failed = 0
        for table in tables:
            config, inputs, capture, dealer = table.config, table.inputs, table.capture, table.dealer
            tid = config.table_id
            rows = len(journal_rows(config)[1])
            held = {r[0] for r in query(pg.dsn, "SELECT row FROM inputs WHERE table_id = %s", tid)}
            twice = query(pg.dsn, "SELECT count(*) - count(DISTINCT (journal_id, row)) FROM inputs "
                                  "WHERE table_id = %s", tid)[0][0]
            gaps = query(pg.dsn, "SELECT count(*) FROM gaps WHERE table_id = %s", tid)[0][0]
            lost = len(set(range(1, rows + 1)) - held)
            try:
                assert_exactly_once(pg.dsn, config, capture.until(int(table.client.call("ping")["seq"])))
                events = "equal to the capture"
            except AssertionError as exc:
                events, failed = f"NOT equal: {str(exc).splitlines()[0][:200]}", failed + 1
            failed += bool(lost or twice or gaps or rows != len(inputs))
            print(f"{tid}: daemon killed {table.daemon.proc.kills} times (inputs resent {dealer.resent}); "
                  f"inputs dealt {len(inputs)}, journal rows {rows}, recorded {len(held)}, losses {lost}, "
                  f"duplicates {twice}, gaps {gaps}; events {events} ({len(capture.events)}, "
                  f"{capture.refilled} of them filled by the resync)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

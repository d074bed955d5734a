"""The floor's command line: ``croupier uplink TABLE_FILE`` on the Pi, ``croupier floor ...`` on its servers.

The NATS and PostgreSQL clients are imported only when one of these commands runs, so the table
daemon and every other command start without them.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import signal
import ssl
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from controller.floor import conflicts_cli, verify_cli
from controller.floor.query_cli import run_export, run_recall, run_tables
from controller.floor.wire import RECORD_BATCH, RECORD_WRITERS
from controller.tools.demo_ports import PORTS_PER_TABLE
from pitboard import cmd as pitboard_cmd

#: How long a clean stop (SIGTERM, Ctrl-C) waits for publishes or a batch in hand before it gives up
#: (nothing is lost then: the stream, or the unacknowledged batch, is where the next start resumes).
STOP_GRACE = 10.0
EXAMPLE_DB = "postgresql://croupier@127.0.0.1:5432/floor"
#: ``croupier floor demo``'s tables: each game's shipped simulated table.
DEMO_GAMES = ("baccarat", "one_card_poker", "swap_hand", "two_way_winner")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``croupier uplink`` and ``croupier floor`` to the main parser."""
    p = sub.add_parser("uplink", help="carry a table's journal to the floor's NATS JetStream (docs/floor.md)",
                       description=UPLINK_DOC + "\n\nExample:\n  croupier uplink "
                       "/etc/croupier/tables/baccarat_1.yaml --nats nats://floor1:4222")
    p.add_argument("table_file", help="the table file (the same the daemon runs)")
    p.add_argument("--state-dir", help="the daemon's state dir, when it runs with `croupier run --state-dir`")
    p.add_argument("--pub", help="the daemon's PUB endpoint, when it runs with `croupier run --pub` (by "
                   "which the uplink hears it alive)")
    _nats_arguments(p)
    p.add_argument("--window", type=int, default=128, help="publishes awaiting their ack at once (128)")
    p.add_argument("--heartbeat", type=float, default=5.0,
                   help="seconds between heartbeats, by which the floor knows the table is online (5)")
    p.set_defaults(func=run_uplink)

    p = sub.add_parser("floor", help="the floor's history in PostgreSQL: record, tables, recall",
                       description="The floor's history of every table in PostgreSQL (docs/floor.md).\n\n"
                       "Example:\n  croupier floor record --nats nats://127.0.0.1:4222 --db " + EXAMPLE_DB)
    floor_sub = p.add_subparsers(dest="floor_command", required=True, metavar="COMMAND")
    r = floor_sub.add_parser("record", help="record the stream into PostgreSQL (any number may run)",
                             description=RECORDER_DOC + "\n\nExample:\n  croupier floor record --nats "
                             "nats://127.0.0.1:4222 --db " + EXAMPLE_DB)
    _nats_arguments(r)
    r.add_argument("--db", required=True, help="PostgreSQL URL, postgresql://user@host:port/dbname")
    r.add_argument("--batch", type=int, default=RECORD_BATCH,
                   help=f"messages per transaction, at most ({RECORD_BATCH})")
    r.add_argument("--writers", type=int, default=RECORD_WRITERS,
                   help=f"batches written at once, each on its own database connection ({RECORD_WRITERS})")
    r.add_argument("--durable", default="recorder", help="the shared consumer's name (recorder)")
    r.add_argument("--ack-wait", type=float, default=30.0,
                   help="seconds before a batch a recorder took and did not acknowledge goes to another (30)")
    r.add_argument("--gap-grace", type=float, default=60.0,
                   help="seconds a hole in a journal's rows may last, with nothing left to deliver, before "
                        "it is recorded as a gap (60)")
    r.set_defaults(func=run_record)

    a = floor_sub.add_parser("alerts", help="the pit's alert service: raise, store and publish alerts",
                             description=ALERTS_DOC + "\n\nExample:\n  croupier floor alerts --nats "
                             "nats://127.0.0.1:4222 --db " + EXAMPLE_DB)
    _nats_arguments(a)
    a.add_argument("--db", required=True, help="PostgreSQL URL, postgresql://user@host:port/dbname")
    a.add_argument("--durable", default="alerts", help="the service's own consumer's name (alerts)")
    a.add_argument("--recorder-durable", default="recorder",
                   help="the recorders' consumer (recorder): a first start judges the rows they have not "
                        "acknowledged, which PostgreSQL may not hold yet")
    a.add_argument("--feed-lost", type=float, default=10.0, metavar="SECONDS",
                   help="a table with no row and no heartbeat for this long has lost its feed (10)")
    a.add_argument("--drift-window", type=int, metavar="N",
                   help="rounds a table's results drift is judged over (52708: docs/floor.md)")
    a.set_defaults(func=run_alerts)

    t = floor_sub.add_parser("tables", help="every table the floor recorded: game, rows, how far behind",
                             description="Every table the floor recorded, from PostgreSQL.\n\nExample:\n"
                             "  croupier floor tables --db " + EXAMPLE_DB)
    t.add_argument("--db", required=True, help="PostgreSQL URL (a read-only role is enough)")
    t.add_argument("--json", action="store_true", help="one JSON object per table, for programs")
    t.add_argument("--offline-after", type=float, default=15.0,
                   help="seconds without a heartbeat after which a table is offline (15)")
    t.set_defaults(func=run_tables)
    c = floor_sub.add_parser("recall", help="a table's last rounds from the floor, as ctl recall shows them",
                             description="A table's last rounds from PostgreSQL: the same records as "
                             "croupier ctl recall.\n\nExample:\n  croupier floor recall baccarat_1 --last 10 "
                             "--db " + EXAMPLE_DB)
    c.add_argument("table", help="the table's id")
    c.add_argument("--last", type=int, default=10, help="how many rounds, newest last (10)")
    c.add_argument("--round", type=int, help="this round only (of the table's newest journal)")
    c.add_argument("--db", required=True, help="PostgreSQL URL (a read-only role is enough)")
    c.add_argument("--json", action="store_true", help="the journal and the round records as JSON")
    c.set_defaults(func=run_recall)
    e = floor_sub.add_parser("export", help="a table's rows and events between two times, as JSON lines",
                             description="A table's journal rows (every journal) journaled from --from up to "
                             "--to, each with its events, one JSON object a line.\n\nExample:\n  croupier "
                             "floor export baccarat_1 --from 2026-12-01 --to 2026-12-02 --db " + EXAMPLE_DB)
    e.add_argument("table", help="the table's id")
    e.add_argument("--from", dest="start", required=True,
                   help="from this time (ISO 8601, UTC unless it says its zone; or seconds since the epoch)")
    e.add_argument("--to", dest="end", required=True, help="up to (not including) this time, the same way")
    e.add_argument("--db", required=True, help="PostgreSQL URL (a read-only role is enough)")
    e.set_defaults(func=run_export)
    verify_cli.register(floor_sub, EXAMPLE_DB)
    conflicts_cli.register(floor_sub, EXAMPLE_DB)
    d = floor_sub.add_parser(
        "demo", help="the floor on this machine: servers, simulated tables, uplinks, a recorder",
        description="The whole floor on this machine, in a temporary folder: a nats-server and a PostgreSQL "
        "on free loopback ports, one simulated table per game (croupier demo) with its uplink, and a "
        "recorder. It prints the commands that query the floor; Ctrl-C stops it all and deletes the "
        "folder. Needs the Debian packages nats-server and postgresql (docs/floor.md).\n\nExample:\n"
        "  croupier floor demo\n  croupier floor demo --games baccarat --rounds 3")
    d.add_argument("--games", default=",".join(DEMO_GAMES),
                   help=f"comma-separated games, one simulated table each (default {','.join(DEMO_GAMES)})")
    d.add_argument("--rounds", type=int, metavar="N",
                   help="each table stops after N rounds; the demo then shows the floor caught up and ends "
                        "(default: until Ctrl-C)")
    d.add_argument("--seed", type=int, help="seed for the shoes and the players")
    d.add_argument("--delay", type=float, metavar="SECONDS", help="seconds between cards (the table files')")
    d.add_argument("--ports", type=int, metavar="N",
                   help=f"table i takes 127.0.0.1 ports N+{PORTS_PER_TABLE}i.. instead of its file's")
    d.set_defaults(func=run_demo)
    from controller.floor import report_format  # `croupier floor report` (docs/floor.md, "Reports")

    report_format.register(floor_sub)
    pitboard_cmd.register(floor_sub, _nats_arguments, nats_options)  # `floor serve`, `operator`: pitboard/


UPLINK_DOC = """Carry a table's journal to the floor's NATS JetStream, row by row, in order, exactly once.

Runs beside the daemon on the table's computer and reads its journal read-only (the daemon never
waits for it). One message per journal row on subject croupier.<table>.rows.<journal_id>: the input,
its source, its time and the events the daemon published for it. On start it resumes from what the stream
holds (the stream is the cursor); rows a crash left out are published again."""

RECORDER_DOC = """Record the floor's stream into PostgreSQL, once.

A durable pull consumer shared by every recorder: each batch is written in one transaction, with
the journal's own keys (a second write changes nothing), and acknowledged only after the commit.
Any number of recorders may run at once. Rows missing from a journal are recorded in gaps and
logged as an error, never skipped silently; a row sent again with another body is kept apart in
conflicts and logged as an error, the first staying the record."""


ALERTS_DOC = """Raise the pit's alerts from the floor's live feed, store them and publish them.

Reads every table's rows from the stream (its own durable consumer) and the uplinks' heartbeats,
and raises within seconds: feed lost, daemon stopped, journal fault, tilt, device offline, gap,
conflicting rows, clock skew, shoe integrity, false shuffle, results drift (docs/floor.md,
"Alerts"). Each alert is stored in PostgreSQL (with the significant-event log) and published on
croupier.alerts.<table>."""


def _nats_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nats", required=True,
                   help="NATS server URL, nats://host:4222; a cluster's, separated by commas")
    p.add_argument("--replicas", type=int, default=1,
                   help="copies of the stream (and of the recorders' consumer) if this creates it: 3 on a "
                        "cluster (1)")
    p.add_argument("--user", help="NATS user name (the table's own, docs/floor.md)")
    p.add_argument("--password-file", help="a file holding the NATS password (not on the command line)")
    p.add_argument("--nkey-seed", metavar="FILE",
                   help="a file holding the NATS user's nkey seed (SU...): signs the server's challenge, no "
                        "password sent (instead of --user/--password-file)")
    p.add_argument("--tls-ca", metavar="FILE",
                   help="TLS to NATS: trust this CA (PEM) for the server's certificate")
    p.add_argument("--tls-cert", metavar="FILE",
                   help="TLS to NATS: this client certificate (PEM), when the server verifies clients")
    p.add_argument("--tls-key", metavar="FILE", help="the private key (PEM) of --tls-cert")
    p.add_argument("--exit-with-parent", type=int, metavar="PID", help=argparse.SUPPRESS)


def connect_options(args: argparse.Namespace) -> dict[str, Any]:
    """nats-py's connect options from the command line: who we are (user and password, or an nkey
    seed) and TLS (the CA to trust, a client certificate). A file that cannot be read is an
    OSError here, before the network (see :func:`nats_options`)."""
    options: dict[str, Any] = {}
    if args.user:
        options["user"] = args.user
    if args.password_file:
        with open(args.password_file, encoding="utf-8") as fh:
            options["password"] = fh.read().strip()
    if args.nkey_seed:
        with open(args.nkey_seed, encoding="utf-8") as fh:
            options["nkeys_seed_str"] = fh.read().strip()
    if args.tls_ca or args.tls_cert:
        if bool(args.tls_cert) != bool(args.tls_key):
            raise OSError("--tls-cert and --tls-key go together")
        tls = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=args.tls_ca)
        if args.tls_cert:
            tls.load_cert_chain(args.tls_cert, args.tls_key)
        options["tls"] = tls
    return options


def nats_options(command: str, args: argparse.Namespace) -> dict[str, Any] | None:
    """:func:`connect_options`, or None after one line on stderr naming the file that is wrong."""
    try:
        return connect_options(args)
    except (OSError, ssl.SSLError) as exc:
        print(f"croupier {command}: {exc}", file=sys.stderr)
        return None


def _serve(name: str, start: Callable[[asyncio.Event], Awaitable[None]], parent: int | None = None) -> int:
    """Run ``start(stop)`` until it ends or SIGTERM/SIGINT sets ``stop`` (then at most STOP_GRACE s more).

    ``parent`` (``--exit-with-parent PID``, given by a test or a demo that starts us): stop as on
    SIGTERM when that process is gone, even if it was SIGKILLed, so no uplink or recorder outlives it
    reconnecting for ever to servers that went with it.
    """
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, force=True,
                        format=f"%(asctime)s {name} %(levelname)s %(message)s")

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        watch: list[asyncio.Future[None]] = []  # asyncio.run cancels it at the end
        if parent is not None:
            from controller.daemon.startup import watch_parent
            from controller.orphans import die_with_parent

            die_with_parent()  # the kernel's SIGTERM at once on Linux; the watch everywhere
            watch.append(asyncio.ensure_future(watch_parent(parent, stop.set)))
        task = asyncio.ensure_future(start(stop))
        await asyncio.wait([task, asyncio.ensure_future(stop.wait())], return_when=asyncio.FIRST_COMPLETED)
        from controller.floor.uplink import Stopped

        try:
            if task.done():
                task.result()
            else:
                await asyncio.wait_for(task, STOP_GRACE)
        except Stopped:
            pass
        except TimeoutError:
            if not task.cancelled():  # the task's own TimeoutError, not the grace running out
                raise
            logging.getLogger("croupier.floor").warning("%s: stopped with work in hand", name)

    asyncio.run(main())
    return 0


async def _close(nc: Any) -> None:
    """Close the NATS connection on the way out. A server already gone makes the close itself fail
    (the connection is reset while the last bytes drain): nothing is lost by it (every row is acked
    only after its commit), so a stop then is still a clean exit, not a traceback."""
    try:
        await nc.close()
    except OSError as exc:
        logging.getLogger("croupier.floor").info("the NATS connection was already lost at the stop: %s", exc)


def run_uplink(args: argparse.Namespace) -> int:
    from controller.daemon.config import TableFileError, load_table
    from controller.daemon.journal import JournalError, JournalMismatch
    from controller.floor import alive
    from controller.floor.daemon_watch import DaemonWatch
    from controller.floor.derive import JournalSource
    from controller.floor.uplink import Uplink

    try:
        config = load_table(args.table_file)
        if args.state_dir:
            config = dataclasses.replace(config, state_dir=Path(args.state_dir))
        if args.pub:
            zeromq = config.spec.zeromq.model_copy(update={"pub": args.pub})
            config = dataclasses.replace(config, spec=config.spec.model_copy(update={"zeromq": zeromq}))
        JournalSource(config).close()  # before the network: a wrong table file or state dir says so now
    except (TableFileError, JournalError) as exc:
        print(f"croupier uplink: {exc}", file=sys.stderr)
        # As the daemon's: 2 a bad table file, 3 a journal that is not this table's to uplink (another
        # table's, another rules version), both a person's to mend (the unit does not restart them); 1 a
        # journal not there yet (the daemon's first start makes it: restarted until it is).
        return 2 if isinstance(exc, TableFileError) else 3 if isinstance(exc, JournalMismatch) else 1
    options = nats_options("uplink", args)
    if options is None:
        return 1

    async def start(stop: asyncio.Event) -> None:
        uplink = Uplink(config, window=args.window, replicas=args.replicas)
        uplink.stop = stop
        nc = await uplink.connect(args.nats, **options)
        changed = asyncio.Event()
        daemon = DaemonWatch(config, changed)  # the daemon's own heartbeat, relayed (docs/floor.md, "Alerts")
        ear = asyncio.ensure_future(daemon.run(stop))
        heart = asyncio.ensure_future(alive.beat(nc, config.table_id, uplink, args.heartbeat, stop,
                                                 daemon.fields, changed))
        try:
            await uplink.run()
        finally:
            heart.cancel()
            ear.cancel()
            await _close(nc)

    try:
        return _serve(f"uplink {config.table_id}", start, args.exit_with_parent)
    except JournalError as exc:  # met while publishing: a journal restored from an older copy, say
        print(f"croupier uplink: {exc}", file=sys.stderr)
        return 3 if isinstance(exc, JournalMismatch) else 1


class _Worker(Protocol):
    stop: asyncio.Event

    async def run(self) -> None: ...


def _floor_worker(args: argparse.Namespace, name: str, make: Callable[[Any], _Worker]) -> int:
    """Run ``make(nats_client)`` (a recorder, the alert service) as ``croupier floor NAME`` until stopped."""
    from controller.floor.uplink import connect

    options = nats_options(f"floor {name}", args)
    if options is None:
        return 1

    async def start(stop: asyncio.Event) -> None:
        nc = await connect(args.nats, stop, **options)
        worker = make(nc)
        # Set the worker's own event, never replace it: its database connections were made with it
        # and give up retrying when it is set (controller.floor.database).
        relay = asyncio.ensure_future(stop.wait())
        relay.add_done_callback(lambda _: worker.stop.set())
        try:
            await worker.run()
        finally:
            relay.cancel()
            await _close(nc)

    return _serve("recorder" if name == "record" else name, start, args.exit_with_parent)


def run_record(args: argparse.Namespace) -> int:
    from controller.floor.recorder import Recorder

    return _floor_worker(args, "record", lambda nc: Recorder(
        nc, args.db, durable=args.durable, batch=args.batch, ack_wait=args.ack_wait, gap_grace=args.gap_grace,
        replicas=args.replicas, writers=args.writers))


def run_alerts(args: argparse.Namespace) -> int:
    from controller.floor.alerting.service import AlertService

    return _floor_worker(args, "alerts", lambda nc: AlertService(
        nc, args.db, durable=args.durable, replicas=args.replicas, drift_window=args.drift_window,
        feed_lost=args.feed_lost, recorder=args.recorder_durable))


def run_demo(args: argparse.Namespace) -> int:
    from controller.floor.demo import run

    return run(args)

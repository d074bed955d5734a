"""``croupier run TABLE.yaml``: the table daemon in the foreground (systemd runs exactly this)."""

from __future__ import annotations

import argparse
import logging
import sqlite3
import sys
from pathlib import Path

from pydantic import ValidationError

from controller.configfile import validation_problems
from controller.daemon.config import TableFileError, ZmqSpec, load_table
from controller.daemon.journal import JournalError
from controller.daemon.runner import run_foreground
from controller.daemon.selftest import HELLO_TIMEOUT
from controller.daemon.server import Daemon, DaemonError, OptionError
from controller.daemon.statelock import StateDirBusy
from controller.orphans import die_with_parent


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("table", help="table file (firmware_configs/tables/*.yaml)")
    parser.add_argument("--state-dir", type=Path, help="override the table file's state_dir")
    parser.add_argument("--keys", type=Path,
                        help="the table's key folder (override security.keys; docs/security.md)")
    parser.add_argument("--shoe-port", help="override the shoe profile's port (a pty of `croupier sim shoe`)")
    parser.add_argument("--no-shoe", action="store_true", help="run without the shoe (cards by command only)")
    parser.add_argument("--pub", help="override the PUB endpoint")
    parser.add_argument("--snapshot", help="override the snapshot endpoint")
    parser.add_argument("--command", dest="command_endpoint", help="override the command endpoint")
    parser.add_argument(
        "--gpio-control", help="override gpio.control: the mock panels' control socket (tcp://127.0.0.1:PORT)"
    )
    parser.add_argument(
        "--exit-with-parent", type=int, metavar="PID",
        help="stop (as on SIGTERM) once process PID is no longer this daemon's parent (croupier demo)",
    )
    parser.add_argument(
        "--no-fsync",
        action="store_true",
        help="BENCHMARKING ONLY: do not fsync the journal (a power cut can lose the last inputs)",
    )
    parser.add_argument(
        "--hello-timeout", type=float, default=HELLO_TIMEOUT, metavar="S",
        help=f"self-test: seconds to wait for the shoe's hello before halting the table with a fault "
        f"(default {HELLO_TIMEOUT:g})",
    )
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="least severe log lines written to stderr (default INFO)",
    )


def build_daemon(args: argparse.Namespace) -> Daemon:
    config = load_table(args.table)
    named = config.key_folder(args.state_dir)
    if args.keys is not None and named.resolve() != args.keys.resolve():
        # systemd's unit gives --keys; `croupier keys new/authorize --table FILE` goes by the file alone
        logging.getLogger("croupier.daemon").warning(
            "--keys %s is not the key folder %s names (%s): `croupier keys ... --table %s` reaches %s, which "
            "this daemon does not read; set security.keys: %s in it (docs/install.md)",
            args.keys, config.path, named, config.path, named, args.keys)
    spec = config.spec.zeromq
    overrides = {
        k: v
        for k, v in (("pub", args.pub), ("snapshot", args.snapshot), ("command", args.command_endpoint))
        if v
    }
    try:
        zmq_spec = ZmqSpec.model_validate({**spec.model_dump(), **overrides}) if overrides else spec
    except ValidationError as exc:
        raise OptionError("; ".join(f"--{p[0]}: {p[1]}" for p in validation_problems(exc))) from None
    return Daemon(
        config,
        state_dir=args.state_dir,
        fsync=not args.no_fsync,
        zmq_spec=zmq_spec,
        shoe_port=args.shoe_port,
        use_shoe=not args.no_shoe,
        gpio_control=args.gpio_control,
        parent_pid=args.exit_with_parent,
        hello_timeout=args.hello_timeout,
        keys_dir=args.keys,
    )


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=args.log_level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        if args.exit_with_parent is not None:
            die_with_parent()  # the kernel's SIGTERM at once on Linux; the daemon's watch everywhere
        daemon = build_daemon(args)
        if daemon.fsync is False:
            logging.getLogger("croupier.daemon").warning(
                "--no-fsync: the journal is NOT durable (benchmarks only)"
            )
        daemon.open()
        run_foreground(daemon)
    except TableFileError as exc:
        print(f"croupier run: bad table file:\n{exc}", file=sys.stderr)
        return 2
    except OptionError as exc:
        print(f"croupier run: {exc}", file=sys.stderr)
        return 2
    except JournalError as exc:
        print(f"croupier run: refusing to start: journal {exc}", file=sys.stderr)
        return 3
    except (DaemonError, StateDirBusy) as exc:
        print(f"croupier run: {exc}", file=sys.stderr)
        return 4
    except (OSError, sqlite3.Error) as exc:  # the state dir, its journal or the key folder cannot be made
        where = args.state_dir or "the table file's state_dir"
        named = getattr(exc, "filename", None)
        keys = getattr(args, "keys", None)
        if named and keys and str(named).startswith(str(keys)):  # not the state dir's fault: say whose
            print(f"croupier run: refusing to start: key folder {keys}: {exc} (a new table's keys are made "
                  "by deploy/install.sh, or by `croupier keys server --keys` as root)", file=sys.stderr)
        else:
            print(f"croupier run: refusing to start: state dir {where}: {exc}", file=sys.stderr)
        return 3
    return 0

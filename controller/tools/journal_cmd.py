"""``croupier journal export|archive|verify``: what an operator does with a table's journal.

The journal is the table's complete record (every input since the table was
commissioned) and the daemon never shortens it: start-up time does not grow
with it (checkpoints: docs/daemon.md) and recall and audits need
all of it. These commands read it without disturbing a running daemon:

* ``export`` writes a header line (the table, the journal's id, game,
  options, rules version, the limits in force before the first row and
  whether the rows replay alone from them: docs/daemon.md, "Old journals")
  and then inputs as JSON lines (row, at, source, input, ref), for an
  auditor, a floor system, or a scenario of a disputed round. ``--out`` is
  written as every file we create: 0600, whole or not at all.
* ``archive DEST`` makes a consistent copy with SQLite's online backup (safe
  while the daemon writes), checks the copy and prints its rows and SHA-256,
  for off-site storage.
* ``verify`` runs the whole-file checks and parses every row: what start-up
  no longer does (docs/daemon.md, "Old journals").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import sys
from itertools import chain
from pathlib import Path
from typing import Final

from controller.daemon import checkpoint, private
from controller.daemon.config import TableFileError, load_table
from controller.daemon.journal import (
    JOURNAL_NAME,
    JournalError,
    open_readonly,
    read_entries,
    read_header,
    verify_file,
)
from controller.daemon.journal_export import ReplayProgress, header_line, row_line
from controller.daemon.private import write_atomic_parts
from controller.tools.progress import progress

#: A replay of more rows than this before the first row exported is said on standard error, with its
#: progress: about a third of a second on x86-64 (some 60,000 rows a second), a Pi 3-4 times that.
LONG_REPLAY: Final = 20_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = ("example: croupier journal export --table firmware_configs/tables/baccarat_sim.yaml "
                     "--from 1000 --out inputs.jsonl")
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    export = sub.add_parser(
        "export", help="a header line (table, journal, game, limits), then inputs as JSON lines",
        epilog="example: croupier journal export --table firmware_configs/tables/baccarat_sim.yaml "
               "--from 1000 --out inputs.jsonl")
    archive = sub.add_parser(
        "archive", help="a consistent, checked copy of the journal (safe while running)",
        epilog="example: croupier journal archive --state-dir /var/lib/croupier/t1 /mnt/backup/t1.sqlite3")
    verify = sub.add_parser(
        "verify", help="integrity check, no row missing, every row parses",
        epilog="example: croupier journal verify --table firmware_configs/tables/baccarat_sim.yaml")
    for p in (export, archive, verify):
        where = p.add_mutually_exclusive_group()
        where.add_argument("--table", default=os.environ.get("CROUPIER_TABLE"),
                           help="table file (its state_dir); default $CROUPIER_TABLE")
        where.add_argument("--state-dir", help="the table's state directory")
    export.add_argument("--from", dest="start", type=int, default=1, metavar="ROW",
                        help="first row (default 1)")
    export.add_argument("--to", dest="stop", type=int, default=None, metavar="ROW",
                        help="last row (default: the last)")
    export.add_argument("--out", help="write to this file instead of stdout")
    archive.add_argument("dest", help="the copy to write (must not exist)")
    parser.set_defaults(func=run)


def _state_dir(args: argparse.Namespace) -> Path:
    if args.state_dir:
        return Path(args.state_dir)
    if args.table:
        return load_table(args.table).state_dir
    raise JournalError(Path(JOURNAL_NAME), "which journal? give --table FILE or --state-dir DIR")


def run(args: argparse.Namespace) -> int:
    try:
        state_dir = _state_dir(args)
        return {"export": _export, "archive": _archive, "verify": _verify}[args.action](args, state_dir)
    except (JournalError, TableFileError, OSError) as exc:
        print(f"croupier journal {args.action}: {exc}", file=sys.stderr)
        return 1


def _export(args: argparse.Namespace, state_dir: Path) -> int:
    if args.start < 1 or (args.stop is not None and args.stop < args.start):
        print(f"croupier journal export: --from {args.start} --to {args.stop}: rows are numbered from 1 "
              "and --to is not before --from", file=sys.stderr)
        return 2
    conn, path, last = open_readonly(state_dir)
    stop = last if args.stop is None else min(args.stop, last)
    try:
        first = header_line(conn, path, read_header(conn, path), args.start, stop,  # before any output
                            _replay_said(conn, path, min(args.start, stop + 1)))
        rows = map(row_line, read_entries(conn, path, args.start, stop))
        lines = (json.dumps(line) + "\n" for line in chain([first], rows))
        if args.out:  # a file we create: 0600, whole or not at all (a bad row leaves no short export)
            write_atomic_parts(Path(args.out), lines)
        else:
            sys.stdout.writelines(lines)
    finally:
        conn.close()
    return 0


def _replay_said(conn: sqlite3.Connection, path: Path, row: int) -> ReplayProgress:
    """The header's replay of the rows before ``row``, on standard error when it is long: why it starts
    where it does (without a usable checkpoint, row 1), then its progress. What is exported is the same."""
    def said(start: int, done: int, total: int) -> None:
        if total <= LONG_REPLAY:  # "more rows than this" (docs/daemon.md: "more than 20,000")
            return
        if done:
            progress("rows replayed", done, total)
            return
        why = (f"from the checkpoint at row {start - 1:,}" if start > 1 else f"no usable checkpoint at or "
               f"before row {row - 1:,}: {checkpoint.none_usable(conn, path, row - 1)}")
        print(f"croupier journal export: replaying rows {start:,}..{start + total - 1:,} to find the limits "
              f"and the table before row {row:,} ({why})", file=sys.stderr, flush=True)
    return said


def _archive(args: argparse.Namespace, state_dir: Path) -> int:
    dest = Path(args.dest)
    if dest.exists():
        raise JournalError(dest, "already exists; an archive is never overwritten")
    conn, path, _ = open_readonly(state_dir)
    tmp = dest.with_name(dest.name + ".part")
    try:
        for stale in (tmp, *(tmp.with_name(tmp.name + s) for s in ("-wal", "-shm", "-journal"))):
            stale.unlink(missing_ok=True)  # a stale part of an archive a crash cut short
        private.create_empty(tmp)  # 0600 whatever the umask, before SQLite writes a page (its -journal too)
        with sqlite3.connect(tmp) as copy:
            conn.backup(copy)
        # One file, not a write-ahead log's three: the copy took the journal's WAL mode, so every check
        # of it below left DEST.part-wal and -shm behind (a review). A daemon restoring it sets WAL again.
        copy.execute("PRAGMA journal_mode=DELETE")
        copy.close()
    finally:
        conn.close()
    problem = verify_file(tmp)
    if problem is not None:
        tmp.unlink()
        raise JournalError(dest, f"the copy does not check out: {problem}")
    with sqlite3.connect(f"file:{tmp}?mode=ro", uri=True) as check:
        rows = check.execute("SELECT COALESCE(MAX(id), 0) FROM inputs").fetchone()[0]
    check.close()
    private.fsync_path(tmp)  # whole on disk before it takes its name, and the name durable after
    tmp.replace(dest)
    private.fsync_folder(dest.parent)
    digest = hashlib.sha256(dest.read_bytes()).hexdigest()
    print(f"archived {path} -> {dest}: {rows} inputs, {dest.stat().st_size} bytes, sha256 {digest}")
    return 0


def _verify(args: argparse.Namespace, state_dir: Path) -> int:
    conn, path, last = open_readonly(state_dir)  # first: a missing journal is "no journal here"
    try:
        problem = verify_file(path)
        if problem is not None:
            raise JournalError(path, problem)
        count = sum(1 for _ in read_entries(conn, path, 1, last))
    finally:
        conn.close()
    print(f"{path}: integrity ok, {count} inputs, every row parses")
    return 0

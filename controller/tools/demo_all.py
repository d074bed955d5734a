"""``croupier demo --game all``: every shipped simulated table at once, each with its simulators.

Why a parent of ordinary demos: each table's demo (daemon, simulated shoe on its own pty, dealer and
players, signage display) is exactly ``croupier demo --table FILE``, started as a child with its
output in a log file (:func:`controller.tools.children.start_child`). This parent only starts them,
reads from each log the operator key it made and its display's address, prints one block per table
(id, endpoints, display, the ``ctl`` line that reaches it), and stops them all on Ctrl-C, SIGTERM or
SIGHUP (each child cleans up as on its own Ctrl-C; a parent killed outright takes them with it:
``--exit-with-parent``). The shipped tables have their own ports and shoe lines
(tests/test_tables_side_by_side.py), so they run side by side; with ``--ports N`` table *i* takes
127.0.0.1 ports ``N+4i .. N+4i+3`` instead.
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from controller.daemon.config import FIRMWARE_CONFIGS, TableConfig, TableFileError, load_table
from controller.tools.children import start_child
from controller.tools.demo_ports import PORTS_PER_TABLE, free_span, taken, taken_text, tcp_port
from controller.tools.demo_setup import STOP_SIGNALS, _interrupt, ctl_command, demo_endpoints

#: The shipped simulated tables (``<game>_sim.yaml``; camera tables are ``..._sim_camera.yaml``).
SIM_TABLES = "*_sim.yaml"
#: The full-size tables (``<game>_7seat_sim.yaml``, docs/wiring.md) are left out: one table per game
#: shows every game, and ten demos at once would crowd a small machine; ``--table`` plays one.
FULL_SIZE = re.compile(r".*_\d+seat_sim\.yaml")
#: Ports one table's demo takes with ``--ports`` (PUB, snapshot, command, panel control).
#: How long a table's demo may take to print its key and display address (its daemon starting).
START_TIMEOUT = 60.0
#: How long the demos may take to stop (each stops its dealer, daemon and display in turn).
STOP_TIMEOUT = 30.0


@dataclass
class RunningTable:
    """One table's demo: its child process, log and what it printed."""

    path: Path
    config: TableConfig
    endpoints: dict[str, str]
    proc: subprocess.Popen[bytes]
    log: Path
    key: str | None = None
    display: str | None = None
    #: On ``--ports`` (or moved there because a port of its file was taken), not the file's endpoints.
    ported: bool = False

    def read_log(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def shipped_tables() -> list[Path]:
    tables = (FIRMWARE_CONFIGS / "tables").glob(SIM_TABLES)
    return sorted(p for p in tables if not FULL_SIZE.fullmatch(p.name))


def _child_args(args: argparse.Namespace, path: Path, ports: int | None) -> list[str]:
    child = ["demo", "--table", str(path), "--plain", "--no-lamps"]
    for flag, value in (("--rounds", args.rounds), ("--seed", args.seed), ("--delay", args.delay),
                        ("--ports", ports)):
        if value is not None:
            child += [flag, str(value)]
    child += ["--no-display"] if args.no_display else ["--display", "127.0.0.1:0"]
    return child


def _wait_started(table: RunningTable, with_display: bool) -> None:
    """Until the table's demo has printed its key (and its display's address); RuntimeError if it ends."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        text = table.read_log()
        key = re.search(r"CROUPIER_KEY=(\S+)", text)
        display = re.search(r"^Signage display: (\S+)", text, re.M)
        table.key = key.group(1) if key else None
        table.display = display.group(1) if display else None
        if table.key is not None and (table.display is not None or not with_display):
            return
        if table.proc.poll() is not None:
            raise RuntimeError(f"{table.config.table_id}'s demo exited ({table.proc.returncode}):\n{text}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{table.config.table_id}'s demo did not start within {START_TIMEOUT:.0f} s:\n"
                               f"{text}")
        time.sleep(0.1)


def _describe(table: RunningTable) -> str:
    e = table.endpoints
    lines = [f"table {table.config.table_id} ({table.config.game_name}): {table.path.name}",
             f"  pub {e['pub']}  snapshot {e['snapshot']}  command {e['command']}"
             + (f"  panels {e['control']}" if "control" in e else ""),
             f"  display: {table.display or 'none (--no-display)'}",
             f"  ctl: {ctl_command(table.key or '?', table.config, table.path, e, table.ported)}"]
    return "\n".join(lines)


def _free_of_others(
    args: argparse.Namespace, paths: list[Path], configs: list[TableConfig], planned: list[int | None],
    out: TextIO,
) -> list[int | None]:
    """Each table's ``--ports`` (None: its file's); a table whose port another program holds moves to
    free ports, and says so, so that one collision does not stop every table."""
    used = [port for config, ports in zip(configs, planned, strict=True)
            for e in demo_endpoints(config, ports).values() if (port := _port(e)) is not None]
    start = max(used, default=5600) + 1
    final: list[int | None] = []
    for path, config, ports in zip(paths, configs, planned, strict=True):
        held = taken(demo_endpoints(config, ports))
        if held:
            said = taken_text(held, path, ports is not None)
            ports = free_span(PORTS_PER_TABLE, start, used)
            used += range(ports, ports + PORTS_PER_TABLE)
            out.write(f"table {config.table_id}: {said}; it moves to 127.0.0.1 ports {ports}..{ports + 3} "
                      "(the other tables keep theirs)\n")
        final.append(ports)
    return final


def _port(endpoint: str) -> int | None:
    where = tcp_port(endpoint)
    return None if where is None else where[1]


def _stop(tables: list[RunningTable]) -> None:
    """SIGTERM once to each demo (a second one would cut its clean-up short), then wait for them."""
    for table in tables:
        if table.proc.poll() is None:
            table.proc.send_signal(signal.SIGTERM)  # each demo stops its daemon, shoe and display
    deadline = time.monotonic() + STOP_TIMEOUT
    for table in tables:
        try:
            table.proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            table.proc.kill()  # hung: its own children go with it (--exit-with-parent)
            table.proc.wait()


def _summaries(tables: list[RunningTable], out: TextIO) -> None:
    """Each table's own summary line (what its demo printed last: rounds played, settled, voided)."""
    for table in tables:
        last = [line for line in table.read_log().splitlines() if line.startswith("summary:")]
        out.write(f"{table.config.table_id}: {last[-1] if last else 'no summary (see above)'}\n")


def run_all(args: argparse.Namespace) -> int:
    """Start every shipped simulated table's demo, say where each is, and run until stopped."""
    out = sys.stdout
    paths = shipped_tables()
    if args.ports and args.ports + PORTS_PER_TABLE * len(paths) > 65536:
        print(f"croupier demo: --ports {args.ports}: the {len(paths)} tables take {PORTS_PER_TABLE} ports "
              f"each, so N must be at most {65536 - PORTS_PER_TABLE * len(paths)}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="croupier-demo-all-"))
    tables: list[RunningTable] = []
    handlers = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    code = 0
    try:
        for sig in handlers:
            signal.signal(sig, _interrupt)
        configs = [load_table(path) for path in paths]
        planned = [args.ports + PORTS_PER_TABLE * i if args.ports else None for i in range(len(paths))]
        out.write(f"Croupier demo: {len(paths)} simulated tables at once; Ctrl-C stops them all.\n")
        for path, config, ports in zip(paths, configs, _free_of_others(args, paths, configs, planned, out),
                                       strict=True):
            log = work / f"{config.table_id}.log"
            proc = start_child(_child_args(args, path, ports), log)
            tables.append(RunningTable(path, config, demo_endpoints(config, ports), proc, log,
                                       ported=ports is not None))
        for table in tables:
            _wait_started(table, not args.no_display)
            out.write(_describe(table) + "\n")
        out.write("all tables running\n")
        out.flush()
        while any(t.proc.poll() is None for t in tables):  # with --rounds N they end by themselves
            for table in tables:
                if table.proc.poll() not in (None, 0):
                    raise RuntimeError(f"{table.config.table_id}'s demo failed ({table.proc.returncode}):\n"
                                       f"{table.read_log()}")
            time.sleep(0.2)
        _summaries(tables, out)
    except KeyboardInterrupt as exc:
        out.write(f"stopping{f' ({exc})' if str(exc) else ''} all tables...\n")
        _stop(tables)
        _summaries(tables, out)
    except (RuntimeError, TableFileError) as exc:
        print(f"croupier demo --game all: {exc}", file=sys.stderr)
        code = 1
    finally:
        for sig in handlers:  # the clean-up is bounded; a second Ctrl-C must not cut it short
            signal.signal(sig, signal.SIG_IGN)
        _stop(tables)
        shutil.rmtree(work, ignore_errors=True)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    out.flush()
    return code

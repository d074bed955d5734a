"""How long from a cause at a table to its alert on ``croupier.alerts.<table>``, and back to its clearing.

Not a test (tests never assert wall-clock times). Everything real and on this machine: nats-server and
PostgreSQL (controller.floor.local), ``croupier run`` on a simulated shoe over a pty, its ``croupier
uplink``, ``croupier floor alerts``; a NATS subscriber timestamps each alert message. Each trial:
the shoe unplugged for ``--unplug`` s (cause: the unplug; clear: the shoe back, i.e. unplug + that),
its lid opened then closed, and the daemon stopped (SIGTERM) then started again (its clear includes
the daemon's own start, Python and journal, and is printed apart). One clock: the same machine's.

    python bench/pit_alert_latency.py --trials 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import nats  # noqa: E402
from floor_support import Proc, wait_for  # noqa: E402
from test_daemon_support import write_table  # noqa: E402

from controller.floor.local import NatsServer, Postgres  # noqa: E402
from drivers.shoe.sim import SimulatedShoe  # noqa: E402


class Heard:
    """Every alert message with the time it arrived, from a NATS client on its own thread."""

    def __init__(self, url: str) -> None:
        self.messages: list[tuple[float, dict[str, Any]]] = []
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

        async def start() -> Any:
            nc = await nats.connect(url)

            async def cb(msg: Any) -> None:
                self.messages.append((time.time(), json.loads(msg.data)))

            await nc.subscribe("croupier.alerts.>", cb=cb)
            return nc

        self.nc = asyncio.run_coroutine_threadsafe(start(), self.loop).result(10)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.nc.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)

    def when(self, kind: str, key: str, state: str, after: float, timeout: float = 30.0) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for at, m in list(self.messages):
                if at >= after and m["kind"] == kind and m["key"] == key and m["state"] == state:
                    return at
            time.sleep(0.01)
        raise RuntimeError(f"no {kind} {key} {state} within {timeout} s")


def print_latencies(times: dict[str, list[float]], trials: int, to: str, command: str) -> None:
    """The machine, one line per cause (its median and its worst, seconds) and the command that measured
    them (bench/pit_board_latency.py's too)."""
    print(f"{platform.machine()}, Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}, "
          f"{trials} trials; cause to {to}, seconds:")
    for what, xs in times.items():
        print(f"  {what:50} p50 {statistics.median(xs):6.3f}   max {max(xs):6.3f}")
    print(f"command: {command}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--unplug", type=float, default=1.0, help="seconds the shoe stays unplugged (1)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pit-alert-latency-"))
    nats_server, pg = NatsServer().start(), Postgres().start()
    shoe = SimulatedShoe("v1", seed=1)
    shoe.open_pty(work / "shoe-pty")
    (work / "shoe.yaml").write_text(f"port: {work / 'shoe-pty'}\nprotocol: v1\nbaud: 115200\n"
                                    "heartbeat_timeout: 5.0\nreconnect: {initial: 0.05, max: 0.2}\n")
    table = write_table(work, shoe=str(work / "shoe.yaml"))
    daemon = Proc(work / "daemon.log", "run", str(table)).start()
    uplink = Proc(work / "uplink.log", "uplink", str(table), "--nats", nats_server.url)
    service = Proc(work / "alerts.log", "floor", "alerts", "--nats", nats_server.url, "--db", pg.dsn).start()
    heard = Heard(nats_server.url)
    times: dict[str, list[float]] = {}

    def took(what: str, kind: str, key: str, state: str, cause: float, since: float | None = None) -> None:
        times.setdefault(what, []).append(heard.when(kind, key, state, since or cause, 60) - cause)

    try:
        wait_for("the daemon up", lambda: (work / "t1-state").exists(), 60, daemon)
        uplink.start()
        wait_for("the service up", lambda: service.said("tables watched"), 60, service)
        wait_for("the uplink hears its daemon", lambda: uplink.said("the daemon is alive"), 60, uplink)
        time.sleep(1.0)
        for _ in range(args.trials):
            t0 = time.time()
            shoe.inject("disconnect", args.unplug)
            took("shoe unplugged: raised", "device_offline", "shoe", "raised", t0)
            took("shoe back: cleared", "device_offline", "shoe", "cleared", t0 + args.unplug, t0)
            time.sleep(1.0)
            t0 = time.time()
            shoe.lid(True)
            took("lid opened: raised", "device_offline", "shoe lid", "raised", t0)
            t0 = time.time()
            shoe.lid(False)
            took("lid closed: cleared", "device_offline", "shoe lid", "cleared", t0)
            t0 = time.time()
            daemon.stop()
            took("daemon stopped: raised", "daemon_stopped", "", "raised", t0)
            t0 = time.time()
            daemon.start()
            took("daemon started: cleared (its start included)", "daemon_stopped", "", "cleared", t0)
            time.sleep(1.0)
    finally:
        for p in (uplink, service, daemon):
            p.stop()
        heard.close()
        shoe.close()
        nats_server.remove()
        pg.remove()
    print_latencies(times, args.trials, "the alert message on croupier.alerts.<table>",
                    f"python bench/pit_alert_latency.py --trials {args.trials} --unplug {args.unplug}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

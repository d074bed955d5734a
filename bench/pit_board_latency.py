"""How long from a cause at a table to its alert on the pit board in Chromium, and back to its clearing.

Not a test (tests never assert wall-clock times; tests/test_pitboard_browser_alerts.py runs one trial and
asserts each alert shows and clears). Everything real and on this machine: nats-server and PostgreSQL
(controller.floor.local), ``croupier run`` on a simulated shoe over a pty, its ``croupier uplink``,
``croupier floor record``, ``croupier floor alerts`` and ``croupier floor serve``, the board open in
headless Chromium with the table opened (tests/pitboard_browser_support.py). Each trial: the shoe
unplugged for ``--unplug`` s (its clear timed from the replug), the lid opened then closed, the daemon
stopped (SIGTERM) then started (its clear includes the daemon's own start). "Shown" is the last of the
tile's badge, the tile's colour and the table view's open alert to appear, timed in the page
(``Date.now()``; one machine, one clock). bench/pit_alert_latency.py times the same causes to the
alert message on NATS.

    python bench/pit_board_latency.py --trials 5
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from pit_alert_latency import print_latencies  # noqa: E402
from pitboard_browser_support import PitFloor, chromium_page  # noqa: E402

from controller.floor.local import NatsServer, Postgres  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--unplug", type=float, default=1.0, help="seconds the shoe stays unplugged (1)")
    args = ap.parse_args()
    nats_server, pg = NatsServer().start(), Postgres().start()
    floor = PitFloor(Path(tempfile.mkdtemp(prefix="pit-board-latency-")), nats_server.url, pg.dsn)
    times: dict[str, list[float]] = {}
    try:
        floor.start()
        with chromium_page(1920, 1080) as (page, errors):
            floor.open_table(page)
            for _ in range(args.trials):
                for what, seconds in floor.trial(page, args.unplug).items():
                    times.setdefault(what, []).append(seconds)
            if errors:
                raise RuntimeError(f"the page's script failed: {errors}")
    finally:
        floor.stop()
        nats_server.remove()
        pg.remove()
    print_latencies(times, args.trials, "the pit board in Chromium (the tile's badge and colour and the "
                    "opened table's alert)",
                    f"python bench/pit_board_latency.py --trials {args.trials} --unplug {args.unplug}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

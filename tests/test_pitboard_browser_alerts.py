"""Issue 27's first acceptance step in headless Chromium: a shoe pulled, a lid opened and a daemon stopped
each show their alert on the pit board, and each clears when its cause clears (docs/floor.md, pit board).

The rig (tests/pitboard_browser_support.py) is every real part as its own process: ``croupier run`` on a
simulated shoe over a pty, its uplink, the recorder, the alert service and ``croupier floor serve``, through
a real nats-server and PostgreSQL. The board is read as a pit boss reads it: the tile's badge and colour,
and the opened table's open alerts. Nothing here asserts a time: the measured latencies are printed (their
p50 and max over many trials: bench/pit_board_latency.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from display_support import CHROMIUM
from floor_support import nats_server, postgres  # noqa: F401 (fixtures)

from controller.floor.local import NatsServer
from tests.server_fixtures import FloorDatabase

if not CHROMIUM.exists():  # loud on purpose, as the display's browser tests
    pytest.skip(f"NO BROWSER: {CHROMIUM} is missing, so the pit board is NOT tested (make test installs it)",
                allow_module_level=True)

from pitboard_browser_support import PitFloor, chromium_page  # noqa: E402

pytestmark = pytest.mark.timeout(120)


def test_a_pulled_shoe_an_open_lid_and_a_stopped_daemon_each_show_on_the_board_and_clear(
        tmp_path: Path, nats_server: NatsServer, postgres: FloorDatabase) -> None:  # noqa: F811
    floor = PitFloor(tmp_path, nats_server.url, postgres.dsn)
    try:
        floor.start()
        with chromium_page(1366, 768) as (page, errors):
            floor.open_table(page)
            # Each alert on the board, then off it (else it fails, naming it and what the board showed).
            took = floor.trial(page, unplug=2.0)
            assert errors == []
    finally:
        floor.stop()
    assert len(took) == 6
    print("cause to the board (tile and table view), seconds: "
          + ", ".join(f"{what} {s:.3f}" for what, s in took.items()), file=sys.stderr)

"""Issue 27's first acceptance step as a new user does it: ``croupier floor demo`` running, its pit board open
in headless Chromium, and only the lines the demo printed pasted into a shell: the table's shoe pulled, its
lid opened and closed, its daemon stopped (the demo starts the table again); each alert shows on the board
and clears when its cause clears. Nothing here asserts a time: the latencies are printed.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from display_support import CHROMIUM
from test_daemon_support import free_port_base

from controller.floor.demo import RESTART_DELAY
from controller.tools.children import ROOT

if not CHROMIUM.exists():  # loud on purpose, as the display's browser tests
    pytest.skip(f"NO BROWSER: {CHROMIUM} is missing, so the demo's board is NOT tested "
                "(make test installs it)", allow_module_level=True)

from pitboard_browser_support import chromium_page, open_table, shown_at  # noqa: E402

pytestmark = pytest.mark.timeout(150)
TABLE = "baccarat_sim"


def _printed(out: Path, pattern: str, demo: subprocess.Popen[bytes], timeout: float = 90) -> re.Match[str]:
    """The first match of ``pattern`` in what the demo printed so far, waited for."""
    deadline = time.monotonic() + timeout
    while (found := re.search(pattern, out.read_text(errors="replace"), re.M)) is None:
        if demo.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"the demo never printed {pattern!r} (exit {demo.poll()}):\n{out.read_text()}")
        time.sleep(0.2)
    return found


def _paste(line: str) -> tuple[float, float]:
    """Run a printed command as a person pastes it into a shell; when it started and when it returned (the
    cause is between: a Python start, then the line sent to the simulator or the signal)."""
    started = time.time()
    done = subprocess.run(line, shell=True, cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stderr == "", (line, done.stdout, done.stderr)
    return started, time.time()


def test_a_pulled_shoe_an_open_lid_and_a_stopped_daemon_of_the_floor_demo_show_on_its_board_and_clear(
        tmp_path: Path) -> None:
    out = tmp_path / "demo.out"
    with open(out, "wb") as stdout:
        demo = subprocess.Popen([sys.executable, "-m", "controller.cli", "floor", "demo", "--games",
                                 "baccarat", "--seed", "3", "--ports", str(free_port_base(4))],
                                stdout=stdout, stderr=subprocess.STDOUT, cwd=ROOT)
    took: dict[str, str] = {}
    try:
        url = _printed(out, r"^The pit board: (http://127\.0\.0\.1:\d+/) ", demo).group(1)
        pull = _printed(out, rf"^  {TABLE}: pull its shoe for 5 s: (.+ disconnect 5)$", demo).group(1)
        lid = _printed(out, rf"^  {TABLE}: open its lid: (.+ lid open)   \(and close it: (.+ lid closed)\)$",
                       demo)
        stop = _printed(out, rf"^  {TABLE}: stop its daemon: (kill \d+)   \(started again", demo).group(1)
        with chromium_page(1366, 768) as (page, errors):
            open_table(page, url, TABLE)

            def seen(what: str, cause: tuple[float, float], kind: str, key: str, state: str,
                     want: bool) -> None:
                shown = shown_at(page, TABLE, kind, key, state, want)
                took[what] = f"{shown - cause[1]:.3f}" + (f"-{shown - cause[0]:.3f}" if cause[0] < cause[1]
                                                          else "")

            # The pulled shoe last: a card the dealer dealt while it was out arrives after the replug, maybe
            # when none is due, and the table's tilt colours the tile as a stopped daemon does ("fault").
            seen("daemon stopped: shown", _paste(stop), "daemon_stopped", "", "fault", True)
            t0 = time.time()
            again = _printed(out, rf"^{TABLE}: dealing again; stop its daemon: kill (\d+)$", demo)
            seen(f"started again by the demo ({RESTART_DELAY:g} s later, its start included): cleared",
                 (t0, t0), "daemon_stopped", "", "fault", False)
            seen("lid opened: shown", _paste(lid.group(1)), "device_offline", "shoe lid", "offline", True)
            seen("lid closed: cleared", _paste(lid.group(2)), "device_offline", "shoe lid", "offline", False)
            pulled = _paste(pull)
            seen("shoe pulled: shown", pulled, "device_offline", "shoe", "offline", True)
            seen("shoe back (5 s after the command's start): cleared", (pulled[0] + 5, pulled[0] + 5),
                 "device_offline", "shoe", "offline", False)
            assert f"kill {again.group(1)}" != stop  # its new daemon, said
            assert errors == []
    finally:
        demo.send_signal(signal.SIGINT)  # Ctrl-C
        code = demo.wait(60)
    assert code == 0, out.read_text()
    logs = re.search(r"\(logs in (\S+)\)", out.read_text())
    assert logs is not None and not Path(logs.group(1)).exists(), "the demo's folder is deleted"
    print("cause to the board (tile and table view), seconds, from the pasted command's return-start (the "
          "cause is between: its own Python start first): " + ", ".join(f"{w} {s}" for w, s in took.items()),
          file=sys.stderr)

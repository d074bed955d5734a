"""The simulated panel's control socket over real loopback sockets, from a thread and from another process.

These run the panel's own worker thread on the real clock, so they wait for
results (bounded by a timeout) instead of stepping time; nothing asserts on
how long anything took.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from controller import inputs as I
from controller.limits import TableLimits
from controller.panels.link import PanelLink
from controller.panels.view import LampView
from drivers.gpio import GpioZeroBackend, SimulatedPins, make_factory
from drivers.gpio.control import ControlError, ControlServer, PanelControl, parse_endpoint, send
from tests.test_gpio_rig import build_map

pytestmark = pytest.mark.timeout(60)
ROOT = Path(__file__).resolve().parents[1]


def test_buttons_chips_and_lamps_over_the_socket_from_a_thread() -> None:
    pin_map = build_map("swap_hand", {1: {"buttons": ["hit", "stand", "bet_up"], "spots": ["main"]},
                                      2: {"buttons": ["hit"], "presence": True}}, tower=True)
    presence = pin_map.seats[2].presence
    assert presence is not None
    factory = make_factory("mock")
    posted: queue.SimpleQueue[I.Input] = queue.SimpleQueue()
    panel = PanelLink(pin_map, GpioZeroBackend(factory), lambda inp, src: posted.put(inp),
                      TableLimits(min_bet=200))
    server = ControlServer(PanelControl(panel, SimulatedPins(factory)), "tcp://127.0.0.1:0")
    panel.start()
    server.start()
    try:
        unplugged = f"panel unplugged: presence loop (GPIO {presence.pin}) open"
        assert posted.get(timeout=10) == I.DeviceStatus("panel 2", False, unplugged)
        answers = send(server.endpoint, "press 1 hit", "bounce 2 hit 7", "press 1 bet_up", "selected 1",
                       "press 3 hit", "plug 2", "nonsense", "pin 99 high",
                       "press \u0661 hit", "press \u00b2 hit")
        assert answers[:4] == ["ok press 1 hit", "ok bounce 2 hit", "ok press 1 bet_up", 'ok {"main": 300}']
        assert answers[4].startswith("error: seat 3 has no panel")
        assert answers[5] == "ok plug 2"
        assert answers[6] == "error: unknown command 'nonsense'; try 'help'"
        assert answers[7].startswith("error: ")
        # Digits of other scripts: "١" pressed seat 1's button, "²" failed in int() (a review, 2026-12-07).
        assert answers[8:] == ["error: expected a number (0-9), not '\u0661'",
                               "error: expected a number (0-9), not '\u00b2'"]
        got = [posted.get(timeout=10) for _ in range(3)]
        assert got == [I.Decision(1, "hit"), I.Decision(2, "hit"),
                       I.DeviceStatus("panel 2", True, "presence: back to normal")]
        panel.update(LampView(phase="betting", seated=frozenset({1, 2})))
        assert send(server.endpoint, "chips 1 main on") == ["ok chips 1 main on"]
        assert posted.get(timeout=10) == I.PlaceWager(1, "main", 300)
        panel.update(LampView(phase="betting", seated=frozenset({1, 2}), wagers={(1, "main"): 300}))
        (answer,) = send(server.endpoint, "lamps")
        lamps = json.loads(answer.removeprefix("ok "))
        assert lamps["seat 1 spot main"] == {"mode": "on", "lit": True}
        assert lamps["tower betting"] == {"mode": "on", "lit": True}
        assert lamps["seat 1 hit"] == {"mode": "off", "lit": False}
        assert posted.empty()
    finally:
        server.stop()
        panel.stop()


def test_errors_name_the_seat_and_quit_leaves_a_hosts_socket_serving() -> None:
    """``1 has no button 'dance'`` read as a number with no noun beside the other errors' ``seat 1 ...``
    (a new-user review, 2026-12-07). ``quit`` on a socket with no ``on_quit`` (the daemon's
    gpio.control) closes that connection only: a panel command never stops a table."""
    pin_map = build_map("swap_hand", {1: {"buttons": ["hit", "stand"], "spots": ["main"]}})
    factory = make_factory("mock")
    panel = PanelLink(pin_map, GpioZeroBackend(factory), lambda inp, src: None, TableLimits())
    server = ControlServer(PanelControl(panel, SimulatedPins(factory)), "tcp://127.0.0.1:0")
    panel.start()
    server.start()
    try:
        assert send(server.endpoint, "press 1 dance", "unplug 1", "quit") == [
            "error: seat 1 has no button 'dance' in this map; buttons: hit, stand",
            "error: seat 1 has no presence pin in this map",
            "ok bye"]
        assert send(server.endpoint, "press 1 hit") == ["ok press 1 hit"]  # still serving
    finally:
        server.stop()
        panel.stop()


def test_the_control_socket_is_loopback_only() -> None:
    assert parse_endpoint("tcp://127.0.0.1:5555") == ("127.0.0.1", 5555)
    for bad in ("tcp://0.0.0.0:5555", "tcp://10.0.0.2:1", "udp://127.0.0.1:1", "127.0.0.1:5"):
        with pytest.raises(ControlError):
            parse_endpoint(bad)


def sim_panel(pin_map: str, stdin: int = subprocess.DEVNULL) -> tuple[subprocess.Popen[str], str]:
    """``croupier sim panel --map PIN_MAP`` in another process, and its control endpoint once it serves."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.panels.cli", "panel", "--map", pin_map, "--control", "tcp://127.0.0.1:0"],
        cwd=ROOT, env=env, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    assert proc.stdout is not None
    endpoint = None
    while endpoint is None:
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else "sim panel exited"
        endpoint = json.loads(line).get("control")
    return proc, endpoint


def event_lines(proc: subprocess.Popen[str]) -> queue.SimpleQueue[str]:
    """The process's remaining stdout lines, fed from a thread so that a test can wait for one with a
    deadline.

    An empty string marks the end of the output (the process exited).
    """
    assert proc.stdout is not None
    stdout = proc.stdout
    lines: queue.SimpleQueue[str] = queue.SimpleQueue()

    def pump() -> None:
        for line in stdout:
            lines.put(line)
        lines.put("")

    threading.Thread(target=pump, name="sim panel stdout", daemon=True).start()
    return lines


def next_event(lines: queue.SimpleQueue[str], timeout: float = 20) -> dict[str, object]:
    """The next event the process printed, waiting at most ``timeout`` seconds for it."""
    line = lines.get(timeout=timeout)
    assert line, "sim panel exited"
    event: dict[str, object] = json.loads(line)
    return event


def test_sim_panel_in_another_process_plays_a_baccarat_round_from_the_buttons() -> None:
    proc, endpoint = sim_panel("firmware_configs/panels/baccarat.yaml")
    try:
        lines = event_lines(proc)
        answers = send(endpoint, "press dealer open_betting", "press 1 bet_up", "chips 1 banker on",
                       "press dealer close_betting")
        assert all(a.startswith("ok") for a in answers), answers
        # A press is answered once it is posted, not once the table applied it: the chips must be
        # lifted after betting closed, so wait for the close before lifting them (sent together,
        # the lift could reach the panel while it still showed betting open: a refused cancel, no tilt).
        # The events after the setup's credit event, which came before the endpoint line.
        events: list[dict[str, object]] = []
        while not events or events[-1]["event"] != "betting_closed":
            assert len(events) < 3, events
            events.append(next_event(lines))
        answers = send(endpoint, "chips 1 banker off", "lamps")
        assert all(a.startswith("ok") for a in answers), answers
        while len(events) < 5:
            events.append(next_event(lines))
        names = [e["event"] for e in events]
        assert names[:3] == ["betting_opened", "wager_placed", "betting_closed"]
        assert events[1]["amount"] == 200 and events[1]["spot"] == "banker"
        assert events[3] == {"source": "gpio panel 1", "event": "device", "device": "panel 1",
                             "online": False, "detail": "chips moved after no more bets: banker chips lifted"}
        assert names[4] == "tilt"
        # The sim panel applies posts on its main thread and then updates the lamps, so a 'lamps'
        # sent with the presses may answer before the tilt: ask until it shows (or time runs out).
        deadline = time.monotonic() + 30
        while True:
            lamps = json.loads(send(endpoint, "lamps")[0].removeprefix("ok "))
            if lamps["tower fault"]["mode"] == "fault" or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        assert lamps["tower fault"]["mode"] == "fault" and lamps["seat 1 spot banker"]["mode"] == "fault"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("where", ["socket", "stdin"])
def test_quit_stops_the_simulator(where: str) -> None:
    """docs/panel-simulator.md lists ``quit`` for the socket and stdin; on stdin it was an unknown
    command, on the socket it closed the connection and the simulator ran on (a new-user review,
    2026-12-07). It stops the simulator now, as the shoe simulator's ``quit`` does."""
    proc, endpoint = sim_panel("firmware_configs/panels/baccarat.yaml", stdin=subprocess.PIPE)
    try:
        assert proc.stdin is not None and proc.stderr is not None
        if where == "socket":
            assert send(endpoint, "quit") == ["ok bye"]
        else:
            proc.stdin.write("help\nquit\n")
            proc.stdin.flush()
        assert proc.wait(timeout=20) == 0
        if where == "stdin":
            answers = proc.stderr.read().splitlines()
            assert answers[0].startswith("ok commands") and answers[1] == "ok bye", answers
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()

"""The simulated shoe against the real reader, end to end over a pty or loopback TCP."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.cards import DECK, Card, parse_card
from controller.cli import main as cli_main
from drivers.shoe.profile import ShoeProfile, parse_profile
from drivers.shoe.sim import SimError, SimulatedShoe, load_deck
from drivers.shoe.simctl import HELP, ControlServer, run_command
from drivers.shoe.transport import ShoeReader
from tests.shoe_support import ShoeEvents

pytestmark = pytest.mark.timeout(60)

REPO = Path(__file__).resolve().parent.parent


def profile(port: str, protocol: str = "v1", heartbeat: float = 3.0) -> ShoeProfile:
    data: dict[str, Any] = {"port": port, "protocol": protocol, "baud": 115200,
                            "reconnect": {"initial": 0.05, "max": 0.2}}
    if protocol == "v1":
        data["heartbeat_timeout"] = heartbeat
    return parse_profile(data, "test")


@pytest.fixture
def cleanup() -> Iterator[list[SimulatedShoe | ShoeReader]]:
    things: list[SimulatedShoe | ShoeReader] = []
    yield things
    for thing in reversed(things):
        if isinstance(thing, ShoeReader):
            thing.stop()
        else:
            thing.close()


def start(cleanup: list[Any], sim: SimulatedShoe, url: str, protocol: str = "v1",
          heartbeat: float = 3.0) -> tuple[ShoeReader, ShoeEvents]:
    cleanup.append(sim)
    events = ShoeEvents()
    reader = ShoeReader(profile(url, protocol, heartbeat), events)
    cleanup.append(reader)
    reader.start()
    return reader, events


@pytest.mark.timeout(180)
def test_ten_thousand_cards_with_one_percent_damage_arrive_exactly_once_in_order(
        tmp_path: Path, cleanup: list[Any]) -> None:
    sim = SimulatedShoe("v1", seed=2024, decks=200, noise=0.01, ack_timeout=0.05)
    reader, events = start(cleanup, sim, sim.open_pty(tmp_path / "shoe"))
    sent = [sim.deal() for _ in range(10_000)]
    events.wait(lambda: len(events.cards()) >= 10_000, timeout=150)
    assert sim.wait_idle(30)
    time.sleep(0.2)  # anything doubled would show up now
    got = events.cards()
    assert len(got) == 10_000
    assert [c.card for c in got] == sent
    assert not any(c.burn for c in got)
    # The damage really happened, and was seen and repaired rather than passed through.
    assert sum(sim.stats.faults.values()) >= 60, sim.stats
    assert set(sim.stats.faults) == {"corrupt", "bitflip", "drop", "dup", "truncate"}
    # Reported at a bounded rate: counted per interval, the counts add up to the damage seen.
    reports = [e.detail for e in events.status("framing_error") if e.detail["burst"] != "end"]
    assert sum(d["count"] for d in reports) >= 30
    assert sim.stats.resends >= 30


@pytest.mark.parametrize("kind", ["pty", "socket"])
def test_unplug_and_replug_loses_and_doubles_nothing(tmp_path: Path, cleanup: list[Any], kind: str) -> None:
    sim = SimulatedShoe("v1", seed=5, decks=2)
    url = sim.open_pty(tmp_path / "shoe") if kind == "pty" else sim.listen()
    _, events = start(cleanup, sim, url)
    before = [sim.deal() for _ in range(20)]
    events.wait(lambda: len(events.cards()) == 20)
    sim.inject("disconnect", 1.0)
    events.wait(lambda: bool(events.status("disconnected")))
    # Seen by the port's error, not by the heartbeat timeout (3 s): said by the reason, not measured.
    reason = events.status("disconnected")[0].detail["reason"]
    assert reason.startswith("port error:") and "heartbeat" not in reason, reason
    during = [sim.deal() for _ in range(15)]  # read while the cable is out: held by the shoe
    events.wait(lambda: len(events.cards()) == 35, timeout=15)
    after = [sim.deal() for _ in range(5)]
    events.wait(lambda: len(events.cards()) == 40)
    assert sim.wait_idle(30)
    time.sleep(0.2)
    assert [c.card for c in events.cards()] == before + during + after
    assert len(events.status("connected")) >= 2


def test_each_injected_fault_is_recovered(tmp_path: Path, cleanup: list[Any]) -> None:
    sim = SimulatedShoe("v1", seed=9, ack_timeout=0.05)
    _, events = start(cleanup, sim, sim.open_pty(tmp_path / "shoe"))
    sent: list[Card] = []
    for fault in ("corrupt", "bitflip", "drop", "dup", "truncate", "delay"):
        sim.inject(fault, 150)
        sent.append(sim.deal())
    events.wait(lambda: len(events.cards()) == 6)
    assert sim.wait_idle(30)
    time.sleep(0.2)
    assert [c.card for c in events.cards()] == sent
    assert sim.stats.faults == {k: 1 for k in ("corrupt", "bitflip", "drop", "dup", "truncate", "delay")}


def test_shoe_messages_and_commands(tmp_path: Path, cleanup: list[Any]) -> None:
    sim = SimulatedShoe("v1", seed=1, deck=[parse_card(c) for c in ("AS", "KD", "2C")])
    reader, events = start(cleanup, sim, sim.open_pty(tmp_path / "shoe"))
    events.wait(lambda: bool(events.status("hello")))
    assert run_command(sim, "deal") == "ok dealt AS"
    assert run_command(sim, "burn") == "ok burned KD"
    assert run_command(sim, "deal 9S") == "ok dealt 9S"
    assert run_command(sim, "lid open") == "ok lid open"
    assert run_command(sim, "lid close") == "error: lid open|closed, not 'close'"
    assert run_command(sim, "fault misread smudged") == "ok fault misread"
    reader.request_card()  # DISPENSE: the shuffler deals its next card, 2C
    events.wait(lambda: len(events.cards()) == 4)
    reader.request_card()  # nothing left: SHOE_EMPTY
    events.wait(lambda: bool(events.status("shoe_empty")))
    assert run_command(sim, "deal 2").startswith("error: dealt 0 (), then: the shoe is empty")
    assert run_command(sim, "shuffle") == "ok shuffled, 3 cards"
    events.wait(lambda: bool(events.status("shuffle_complete")))
    reader.reset()
    events.wait(lambda: len(events.status("hello")) == 2)
    assert run_command(sim, "deal") == "ok dealt AS"
    events.wait(lambda: len(events.cards()) == 5)
    got = [(c.card.code, c.burn) for c in events.cards()]
    assert got == [("AS", False), ("KD", True), ("9S", False), ("2C", False), ("AS", False)]
    assert events.status("fault")[0].to_dict() == {
        "event": "shoe_fault", "code": 2, "fault": "misread", "text": "smudged"}
    assert events.status("shuffle_complete")[0].detail == {"decks": 1}
    assert events.status("lid_open")
    assert reader.last_heartbeat is not None


def test_command_errors_are_answers_not_exceptions() -> None:
    sim = SimulatedShoe("plain")
    try:
        assert run_command(sim, "bogus").startswith("error: unknown or incomplete command 'bogus'")
        assert run_command(sim, "deal ZZ").startswith("error: not a card: 'ZZ'")
        assert run_command(sim, "lid open") == "error: the plain-line profile has no way to report a lid"
        left = sim.remaining
        assert run_command(sim, "burn").startswith("error: the plain-line profile cannot report a burn")
        assert sim.remaining == left  # refused before a card left the shoe (a review, 2026-12-07)
        assert run_command(sim, "delay soon") == "error: delay must be a number, not 'soon'"
        assert run_command(sim, "fault gremlins").startswith("error: the plain-line profile")
        assert "deal [N | CARD]" in run_command(sim, "help")
    finally:
        sim.close()
    with pytest.raises(SimError, match="unknown noise kinds"):
        SimulatedShoe(noise_kinds=["gremlins"])


def test_heartbeat_timeout_against_a_silent_shoe(tmp_path: Path, cleanup: list[Any]) -> None:
    sim = SimulatedShoe("v1", heartbeat_interval=3600)
    _, events = start(cleanup, sim, sim.open_pty(tmp_path / "shoe"), heartbeat=0.4)
    events.wait(lambda: len(events.status("connected")) >= 2, timeout=10)
    assert "heartbeat lost" in events.status("disconnected")[0].detail["reason"]
    card = sim.deal()  # the line is fine, only quiet: reading goes on after the reconnect
    events.wait(lambda: [c.card for c in events.cards()] == [card])


def test_plain_profile_over_socket_and_its_documented_weakness(cleanup: list[Any]) -> None:
    sim = SimulatedShoe("plain", seed=3, decks=1)
    _, events = start(cleanup, sim, sim.listen(), "plain")
    events.wait(lambda: bool(events.status("connected")))
    deadline = time.monotonic() + 30
    while not sim.client_connected and time.monotonic() < deadline:  # accepted in the sim's thread
        time.sleep(0.01)
    first = sim.deal()
    events.wait(lambda: len(events.cards()) == 1)
    sim.inject("truncate")
    second = sim.deal()  # cut short: it runs into the next line, and neither is a card
    third = sim.deal()
    fourth = sim.deal()
    events.wait(lambda: len(events.cards()) >= 2)
    time.sleep(0.2)
    errors = events.status("framing_error")
    assert len(errors) == 1
    reason = errors[0].detail["reason"]
    assert reason.startswith(f"line is not a card: b'{second.code[0]}") and third.code in reason
    # Two cards lost, and nothing on this profile can ask for them again.
    assert [c.card for c in events.cards()] == [first, fourth]


def test_listen_refuses_non_loopback_and_pty_link_refuses_a_regular_file(tmp_path: Path) -> None:
    sim = SimulatedShoe()
    try:
        with pytest.raises(OSError, match="loopback only"):
            sim.listen("8.8.8.8")
        (tmp_path / "file").write_text("mine")
        with pytest.raises(OSError, match="not a symlink"):
            sim.open_pty(tmp_path / "file")
        assert (tmp_path / "file").read_text() == "mine"
    finally:
        sim.close()


def test_load_deck_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "deck.txt"
    path.write_text("# a stacked deck\nAS KD 10h\nqc XX\n")
    with pytest.raises(SimError, match=r"deck\.txt:3: not a card: 'XX'"):
        load_deck(path)
    path.write_text("AS KD # comment\n10h\n")
    assert [c.code for c in load_deck(path)] == ["AS", "KD", "TH"]
    # A missing or unreadable file is named with why, not a bare "[Errno 2]" (a review, 2026-12-07).
    with pytest.raises(SimError, match=r"nodeck\.txt: cannot read the deck file \(No such file or direc"):
        load_deck(tmp_path / "nodeck.txt")
    path.write_bytes(b"AS \xff\n")
    with pytest.raises(SimError, match=r"deck\.txt: cannot read the deck file .*utf-8"):
        load_deck(path)
    with pytest.raises(SimError, match=r"^--decks must be 1\.\.255, not 0$"):
        SimulatedShoe("v1", decks=0)


CLI = f"""
import argparse, sys
sys.path.insert(0, {str(REPO)!r})
from drivers.shoe.cli import register
parser = argparse.ArgumentParser(prog="croupier")
sub = parser.add_subparsers(dest="command", required=True)
sim_sub = sub.add_parser("sim").add_subparsers(dest="sim_command", required=True)
register(sub, sim_sub)
args = parser.parse_args()
sys.exit(args.func(args))
"""


def write_profile(path: Path, port: str) -> Path:
    path.write_text(f"port: {port}\nprotocol: v1\nbaud: 115200\nheartbeat_timeout: 3\n"
                    "reconnect: {initial: 0.05, max: 0.2}\n")
    return path


def test_cli_read_prints_cards_as_json(tmp_path: Path, cleanup: list[Any]) -> None:
    sim = SimulatedShoe("v1", seed=11)
    cleanup.append(sim)
    prof = write_profile(tmp_path / "p.yaml", "/dev/null-not-used")
    url = sim.open_pty(tmp_path / "shoe")
    proc = subprocess.Popen([sys.executable, "-c", CLI, "shoe", "read", "--profile", str(prof),
                             "--port", url, "--json", "--count", "2"], stdout=subprocess.PIPE, text=True)
    sent = [sim.deal().code, sim.deal().code]
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert '"event": "shoe_connected"' in out
    assert [line for line in out.splitlines() if "shoe_card" in line] == [
        f'{{"event": "shoe_card", "card": "{code}", "burn": false}}' for code in sent]


def test_cli_bad_profile_exits_2_naming_the_file(tmp_path: Path) -> None:
    prof = tmp_path / "bad.yaml"
    prof.write_text("port: /dev/x\nprotocol: v9\n")
    proc = subprocess.run([sys.executable, "-c", CLI, "shoe", "read", "--profile", str(prof)],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert f"{prof}: key 'protocol'" in proc.stderr


def test_cli_sim_serves_a_reader_and_takes_commands(tmp_path: Path, cleanup: list[Any]) -> None:
    link = tmp_path / "shoe"
    prof = write_profile(tmp_path / "p.yaml", str(link))
    proc = subprocess.Popen([sys.executable, "-c", CLI, "sim", "shoe", "--profile", str(prof),
                             "--decks", "1", "--seed", "4"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        lines = [proc.stdout.readline() for _ in range(4)]
        control = next(line for line in lines if line.startswith("# control: "))
        port = int(control.split("127.0.0.1:")[1].split()[0])
        events = ShoeEvents()
        reader = ShoeReader(profile(str(link)), events)
        cleanup.append(reader)
        reader.start()
        proc.stdin.write("deal 2\n")
        proc.stdin.flush()
        assert proc.stdout.readline().startswith("ok dealt ")
        with socket.create_connection(("127.0.0.1", port), timeout=10) as ctl:
            ctl.sendall(b"deal QS\nlid open\n")
            answers = ctl.makefile()
            assert [answers.readline(), answers.readline()] == ["ok dealt QS\n", "ok lid open\n"]
        events.wait(lambda: len(events.cards()) == 3 and bool(events.status("lid_open")))
        assert events.cards()[2].card == parse_card("QS")
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=10) == 0
        assert not os.path.lexists(link)  # the link is removed with the pty
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_shuffled_decks_are_seeded_and_complete() -> None:
    a, b = SimulatedShoe(seed=42, decks=2), SimulatedShoe(seed=42, decks=2)
    try:
        dealt_a = [a.deal() for _ in range(104)]
        dealt_b = [b.deal() for _ in range(104)]
        assert dealt_a == dealt_b
        assert sorted(c.index for c in dealt_a) == sorted(c.index for c in DECK * 2)
        assert a.remaining == 0
    finally:
        a.close()
        b.close()


def _close_at_once(sim: SimulatedShoe, start: threading.Barrier, errors: list[BaseException]) -> None:
    start.wait()
    try:
        sim.close()
    except BaseException as exc:  # noqa: BLE001 - what the test is about
        errors.append(exc)


def test_close_from_two_threads_at_once_lets_the_link_go_once(tmp_path: Path) -> None:
    """'quit' on stdin closes the simulator while the CLI's own exit closes it too: neither may close
    the other's fds (once it was EBADF on the link's claim, and `croupier sim shoe` exited 1)."""
    for attempt in range(30):
        sim = SimulatedShoe("v1", seed=attempt)
        sim.open_pty(tmp_path / f"shoe{attempt}")
        start = threading.Barrier(4)
        errors: list[BaseException] = []
        closers = [threading.Thread(target=_close_at_once, args=(sim, start, errors)) for _ in range(4)]
        for t in closers:
            t.start()
        for t in closers:
            t.join(10)
        assert errors == []
        assert not (tmp_path / f"shoe{attempt}").exists()  # unplugged: the link is gone
        again = SimulatedShoe("v1", seed=attempt)  # and its claim let go: another may take it
        again.open_pty(tmp_path / f"shoe{attempt}")
        again.close()


def test_sim_control_runs_one_command_on_a_simulators_socket_and_prints_its_whole_answer(
        capsys: pytest.CaptureFixture[str]) -> None:
    sim = SimulatedShoe("v1", seed=1)
    control = ControlServer(sim)
    where = f"127.0.0.1:{control.port}"
    try:
        assert cli_main(["shoe", "sim-control", where, "lid", "open"]) == 0
        assert capsys.readouterr().out == "ok lid open\n"
        assert cli_main(["shoe", "sim-control", where, "help"]) == 0
        assert capsys.readouterr().out == HELP + "\n"  # every line of a long answer
        assert cli_main(["shoe", "sim-control", where, "lid", "ajar"]) == 1
        assert capsys.readouterr().out.startswith("error: lid open|closed")
    finally:
        control.close()
        sim.close()
    assert cli_main(["shoe", "sim-control", where, "status"]) == 2  # nothing listens there now
    assert capsys.readouterr().err.startswith(f"error: {where}: ")
    assert cli_main(["shoe", "sim-control", "127.0.0.1", "status"]) == 2
    assert "HOST:PORT" in capsys.readouterr().err


def test_the_walkthrough_in_the_docs_deals_what_it_says() -> None:
    """docs/shoe-simulator.md's walkthrough (``--decks 6 --seed 7``) showed cards another seed's order gave
    (a review, 2026-12-07): its deal and burn answers are those of the seeded shoe, kept so by this test."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "shoe-simulator.md").read_text(encoding="utf-8")
    steps = re.findall(r"^((?:deal|burn)\b[^\n]*?)\s+-> (ok [^\n]+)$", text, re.MULTILINE)
    assert len(steps) == 4, steps
    sim = SimulatedShoe("v1", decks=6, seed=7)
    try:
        assert [run_command(sim, command) for command, _ in steps] == [answer for _, answer in steps]
    finally:
        sim.close()

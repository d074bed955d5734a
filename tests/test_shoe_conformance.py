"""``croupier shoe conformance``: every check passes against the simulator, over a pty and over
``socket://``, and each check fails against the simulator broken the way that check exists to catch."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from drivers.shoe.conformance import CheckResult, Conformance
from drivers.shoe.probe import Probe
from drivers.shoe.profile import ShoeProfile, parse_profile
from drivers.shoe.sim import SimulatedShoe
from drivers.shoe.simctl import ControlServer, run_command
from drivers.shoe.simquirks import QUIRKS

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(120)


def shuffler_profile(port: str) -> ShoeProfile:
    return parse_profile({"port": port, "protocol": "v1", "mode": "dealing_shuffler", "baud": 115200,
                          "heartbeat_timeout": 3.0, "dispense_timeout": 2.0,
                          "reconnect": {"initial": 0.2, "max": 1.0}}, "test")


def run_kit(sim: SimulatedShoe, url: str, shuffler: bool, only: set[str] | None = None) -> list[CheckResult]:
    profile = shuffler_profile(url) if shuffler else None
    probe = Probe(url, profile)
    try:
        return Conformance(probe, profile, lambda step: run_command(sim, step).startswith("ok")).run_all(only)
    finally:
        probe.close()


@pytest.fixture
def sims() -> Iterator[list[SimulatedShoe]]:
    made: list[SimulatedShoe] = []
    yield made
    for sim in made:
        sim.close()


def test_every_check_passes_against_the_dealing_shuffler_sim(
        tmp_path: Path, sims: list[SimulatedShoe]) -> None:
    sim = SimulatedShoe("v1", seed=1, mode="dealing_shuffler")
    sims.append(sim)
    results = run_kit(sim, sim.open_pty(tmp_path / "shoe"), shuffler=True)
    assert [(r.name, r.verdict) for r in results if r.verdict != "PASS"] == []
    assert [r.name for r in results] == [
        "hello", "status_request", "heartbeat_cadence", "resend_timing", "nak", "damaged_host_frame",
        "stuffing", "reset", "unplug", "dispense", "lid", "fault", "empty", "line_clean"]


#: What each check must say it saw against each misbehaviour.
WHY = {
    "hello_version_2": "protocol version 2, not 1",
    "hello_seq_1": "HELLO with SEQ 1, not 0",
    "no_status": "no HEARTBEAT within 0.5 s of STATUS_REQUEST",
    "slow_heartbeat": "heartbeat",
    "fixed_resend": "s (want 0.2, 0.4",  # the waits seen vary with load; what is asked does not
    "ignore_nak": "within 150 ms of NAK",
    "accept_bad_crc": "after an ACK with a bad CRC",
    "no_stuffing": "bad frames",
    "reset_forgets": "was not sent again",
    "give_up": "resent after the port was closed",
    "double_dispense": "one DISPENSE gave 2 cards",
    "no_lid_flag": "the HEARTBEAT flag lid_open is not set",
    "fault_stays": "RESET did not clear the HEARTBEAT flag faulted",
}


@pytest.mark.parametrize("quirk", sorted(QUIRKS))
def test_each_check_fails_against_the_sim_broken_its_way(
        tmp_path: Path, sims: list[SimulatedShoe], quirk: str) -> None:
    check = QUIRKS[quirk][1]
    sim = SimulatedShoe("v1", seed=1, mode="dealing_shuffler", misbehave=[quirk])
    sims.append(sim)
    results = run_kit(sim, sim.open_pty(tmp_path / "shoe"), shuffler=True, only={check})
    verdicts = {r.name: r for r in results}
    assert verdicts[check].verdict == "FAIL", verdicts[check]
    assert WHY[quirk] in verdicts[check].seen  # fails for the reason it exists, and says what it saw


def test_cli_over_socket_passes_prints_each_check_and_writes_json(
        tmp_path: Path, sims: list[SimulatedShoe]) -> None:
    sim = SimulatedShoe("v1", seed=2)
    sims.append(sim)
    url = sim.listen()
    control = ControlServer(sim)
    try:
        out = subprocess.run(
            [sys.executable, "-m", "controller.cli", "shoe", "conformance", "--port", url,
             "--sim-control", f"127.0.0.1:{control.port}", "--json", str(tmp_path / "report.json")],
            cwd=ROOT, capture_output=True, text=True, timeout=100, check=False)
    finally:
        control.close()
    assert out.returncode == 0, out.stdout + out.stderr
    lines = [line for line in out.stdout.splitlines() if not line.startswith("#")]
    assert len(lines) == 14 and all(line[:4] in ("PASS", "SKIP") for line in lines)
    assert "SKIP  dispense" in out.stdout  # a reader profile has no DISPENSE
    report = json.loads((tmp_path / "report.json").read_text())
    assert stat.S_IMODE((tmp_path / "report.json").stat().st_mode) == 0o600  # written aside, private
    assert (report["passed"], report["failed"], report["skipped"]) == (13, 0, 1)
    assert {c["name"] for c in report["checks"]} >= {"hello", "stuffing", "unplug", "lid"}


def test_cli_fails_with_exit_1_against_a_misbehaving_sim(tmp_path: Path, sims: list[SimulatedShoe]) -> None:
    sim = SimulatedShoe("v1", seed=3, misbehave=["hello_version_2"])
    sims.append(sim)
    url = sim.open_pty(tmp_path / "shoe")
    out = subprocess.run(
        [sys.executable, "-m", "controller.cli", "shoe", "conformance", "--port", url, "--only", "hello"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 1
    assert "FAIL  hello" in out.stdout and "protocol version 2" in out.stdout


def test_cli_refuses_a_bad_sim_control_address_with_exit_2() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "controller.cli", "shoe", "conformance", "--port", "/nonexistent/tty",
         "--sim-control", "127.0.0.1:"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 2 and "--sim-control wants HOST:PORT" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_host_slow_to_nak_does_not_pass_a_shoe_that_ignores_nak(
        tmp_path: Path, sims: list[SimulatedShoe], monkeypatch: pytest.MonkeyPatch) -> None:
    """The kit once sent its NAK just after the frame; a host 80 ms slow (a loaded machine) then met the
    shoe's own 0.2 s timed resend within 150 ms of the NAK and took it for the NAK's: the check failed
    only later, for another reason ("resent after NAK 3"), and this test's twin above failed now and then
    under load. Now it fails for its own reason."""
    sim = SimulatedShoe("v1", seed=1, mode="dealing_shuffler", misbehave=["ignore_nak"])
    sims.append(sim)
    real_send = Probe.send

    def slow_send(self: Probe, seq: int, message: Any) -> None:
        if type(message).__name__ == "Nak":
            time.sleep(0.08)  # the host busy just before its NAK
        real_send(self, seq, message)

    monkeypatch.setattr(Probe, "send", slow_send)
    results = run_kit(sim, sim.open_pty(tmp_path / "shoe"), shuffler=True, only={"nak"})
    nak = next(r for r in results if r.name == "nak")
    assert nak.verdict == "FAIL" and WHY["ignore_nak"] in nak.seen, nak

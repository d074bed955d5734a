"""``croupier demo``: runs to completion, and Ctrl-C leaves no process and no port behind."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_daemon_support import free_port_base

from controller.tools.demo_ports import PORTS_PER_TABLE

ROOT = Path(__file__).resolve().parents[1]


def demo(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "demo", *args],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def command_lines() -> dict[int, str]:
    """Every process's command line, by pid (one that ends while this reads is left out)."""
    found = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                found[int(pid)] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
    return found


def processes_with(text: str) -> list[int]:
    return [pid for pid, cmdline in command_lines().items() if text in cmdline]


def ports_free(base: int) -> bool:
    """No listener on base..base+3: a new daemon could bind them (as ZeroMQ binds, with SO_REUSEADDR,
    so a closed connection of the old one lingering in TIME_WAIT does not count)."""
    for port in range(base, base + 4):
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
                s.listen()
            except OSError:
                return False
    return True


def started_demo(base: int) -> tuple[subprocess.Popen[str], int]:
    """A demo on ports base.. that has settled a round; and its daemon's pid."""
    proc = demo("--delay", "0.02", "--ports", str(base))
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    work: Path | None = None
    for line in proc.stdout:
        if line.startswith("Commands while it runs: CROUPIER_KEY="):  # <work>/state/keys/clients/demo.key_…
            work = Path(line.split("=", 1)[1].split()[0]).parents[3]
        if "round_settled" in line:
            break
        assert time.monotonic() < deadline
    runs = set(processes_with("controller.cli run "))  # the signage display has the endpoints too
    daemons = [p for p in processes_with(f"tcp://127.0.0.1:{base}") if p in runs]
    if len(daemons) != 1:  # the daemon (the demo itself is given --ports, not endpoints)
        why = _what_ran(work, proc)
        proc.kill()  # its children follow it (--exit-with-parent): none is left to the next test
        proc.communicate(timeout=30)
        raise AssertionError(f"{len(daemons)} daemons on port {base}: {why}")
    return proc, daemons[0]


def _what_ran(work: Path | None, proc: subprocess.Popen[str]) -> str:
    """For a failure: the croupier processes now, whether the demo still runs, and its daemon's log."""
    log = work / "daemon.log" if work is not None else None
    tail = log.read_text(errors="replace")[-3000:] if log is not None and log.exists() else "(no daemon.log)"
    cli = {pid: cmdline for pid, cmdline in command_lines().items() if "controller.cli" in cmdline}
    return f"demo exit code {proc.poll()}; croupier processes {cli}; the daemon's log: {tail}"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("game", ["baccarat", "one_card_poker"])
def test_demo_runs_n_rounds(game: str) -> None:
    base = free_port_base(PORTS_PER_TABLE)
    proc = demo("--game", game, "--rounds", "3", "--delay", "0", "--seed", "4", "--ports", str(base))
    out, err = proc.communicate(timeout=100)
    assert proc.returncode == 0, err
    assert out.count("round_settled") == 3
    assert "summary: 3 rounds played: 3 settled" in out and "house result" in out
    assert out.count("rounds played") == 1  # one summary, not a second count before it
    assert not [line for line in out.splitlines() if "{" in line]  # no raw JSON among the lines
    assert not processes_with(f"tcp://127.0.0.1:{base}")
    assert ports_free(base)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_ctrl_c_sigterm_or_sighup_stops_everything(sig: signal.Signals) -> None:
    base = free_port_base(PORTS_PER_TABLE)
    proc, _daemon = started_demo(base)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "stopping" in out
    assert "summary:" in out and "house result" in out  # what the table did, before it stops
    # Every figure is the table's: the rounds played are the settled and voided ones, and a round
    # the stop cut short is named as such, never counted as played.
    found = re.search(r"summary: (\d+) rounds? played: (\d+) settled \(\d+ seat settlements\), (\d+) voided"
                      r"(; round (\d+) unfinished \(stopped while (betting|dealing)\))?", out)
    assert found, out
    played, settled, voided = (int(found.group(i)) for i in (1, 2, 3))
    assert played == settled + voided and out.count("round_settled") <= settled
    assert found.group(5) is None or int(found.group(5)) == played + 1
    assert not processes_with(f"tcp://127.0.0.1:{base}")
    assert ports_free(base)


@pytest.mark.timeout(120)
def test_a_killed_demo_leaves_no_orphan_daemon() -> None:
    base = free_port_base(PORTS_PER_TABLE)
    proc, daemon = started_demo(base)
    cmdline = Path(f"/proc/{daemon}/cmdline").read_bytes().split(b"\0")
    work = Path(cmdline[cmdline.index(b"--state-dir") + 1].decode()).parent
    try:
        proc.kill()  # no clean-up of its own: the daemon must notice by itself
        proc.communicate(timeout=30)
        deadline = time.monotonic() + 30  # generous: this waits for an exit, it measures nothing
        while processes_with(f"tcp://127.0.0.1:{base}"):
            assert time.monotonic() < deadline, "the daemon outlived the demo"
            time.sleep(0.05)
        assert ports_free(base)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # the demo's temporary dir: it had no time to remove it


def path_without_this_venv() -> str:
    """PATH as a new user's shell has it after `make demo`: the clone's .venv/bin is not on it."""
    venv_bin = str(Path(sys.executable).parent)
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != venv_bin)


def run_as_printed(command: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """A command line exactly as croupier printed it, in a new user's shell from the clone: the venv not
    on PATH and no CROUPIER_KEY exported (the line must carry what it needs)."""
    env = {**os.environ, "PATH": path_without_this_venv()}
    env.pop("CROUPIER_KEY", None)
    return subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.timeout(120)
def test_the_printed_ctl_command_runs_as_printed() -> None:
    base = free_port_base(PORTS_PER_TABLE)
    proc = demo("--delay", "0.05", "--ports", str(base), "--no-display")
    assert proc.stdout is not None
    try:
        line = next(line for line in proc.stdout if line.startswith("Commands while it runs: "))
        command = line.split(": ", 1)[1].strip()
        deadline = time.monotonic() + 60
        while True:  # the line is printed before the daemon is up: retry until it answers
            done = run_as_printed(command)
            if done.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        assert done.stdout.startswith("[table baccarat_sim, journal "), done.stdout
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)


def test_keys_new_prints_a_ctl_line_that_runs_as_printed(tmp_path: Path) -> None:
    table = ROOT / "firmware_configs/tables/baccarat_sim.yaml"
    env = {**os.environ, "PATH": path_without_this_venv()}
    done = subprocess.run([sys.executable, "-m", "controller.cli", "keys", "new", "ann", "--role", "operator",
                           "--table", str(table), "--state-dir", str(tmp_path / "state")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    use = next(line for line in done.stdout.splitlines() if line.startswith("use it: "))
    command = use.removeprefix("use it: ").split("   or   ")[0].replace(" ...", " --help")
    ran = run_as_printed(command, timeout=60)
    assert ran.returncode == 0 and "usage: croupier ctl" in ran.stdout, (command, ran.stderr)


def test_a_simulations_command_line_runs_as_printed() -> None:
    """The "command:" line that says how a simulation's figures were made runs as printed from the
    clone (issue 31, 4: it said ``croupier simulate ...``, not on PATH after ``make demo``)."""
    venv_croupier = Path(sys.executable).parent / "croupier"
    first = subprocess.run([str(venv_croupier), "simulate", "baccarat", "--rounds", "300", "--seed", "2"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    line = next(x for x in first.stdout.splitlines() if x.startswith("command: "))
    again = run_as_printed(line.removeprefix("command: "), timeout=60)
    assert again.returncode == first.returncode, (line, again.stderr)
    assert again.stdout == first.stdout  # seeded: the same figures, and the same line

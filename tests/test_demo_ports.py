"""A port another program holds is named with its address and the setting that moves it (issue 31, 2).

Real sockets on 127.0.0.1 hold the ports; the demo, ``croupier run`` and the display are the real
commands. ``demo --game all`` moving only the table that collides is checked in test_demo_all.py
(it starts every shipped table).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from test_daemon_support import free_port_base

from controller.cli import main
from controller.daemon.config import FIRMWARE_CONFIGS

pytestmark = pytest.mark.timeout(60)


def sim_table(tmp_path: Path, base: int) -> Path:
    """The shipped Baccarat sim table on 127.0.0.1 ports base..base+3, its state and shoe line in tmp."""
    for folder in ("shoes", "panels"):  # the table file names its shoe profile and pin maps relatively
        (tmp_path / folder).symlink_to(FIRMWARE_CONFIGS / folder)
    data = yaml.safe_load((FIRMWARE_CONFIGS / "tables" / "baccarat_sim.yaml").read_text())
    names = ("pub", "snapshot", "command")
    data["zeromq"] = {name: f"tcp://127.0.0.1:{base + i}" for i, name in enumerate(names)}
    data["gpio"]["control"] = f"tcp://127.0.0.1:{base + 3}"
    data["state_dir"] = str(tmp_path / "state")
    data["shoe"]["port"] = str(tmp_path / "shoe-line")
    (tmp_path / "tables").mkdir()
    path = tmp_path / "tables" / "t.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture
def held() -> Iterator[list[socket.socket]]:
    socks: list[socket.socket] = []
    yield socks
    for s in socks:
        s.close()


def hold(socks: list[socket.socket], port: int) -> None:
    """Another program listening at 127.0.0.1:port."""
    s = socket.socket()
    s.bind(("127.0.0.1", port))
    s.listen()
    socks.append(s)


def held_table(tmp_path: Path, held: list[socket.socket], count: int, offset: int) -> tuple[int, Path]:
    """(base, table file) of a table on ports base.. of ``count`` free ones, base+offset held by another."""
    base = free_port_base(count)
    table = sim_table(tmp_path, base)
    hold(held, base + offset)
    return base, table


def test_a_demo_names_the_taken_port_and_its_key(
    tmp_path: Path, held: list[socket.socket], capsys: pytest.CaptureFixture[str]
) -> None:
    base, table = held_table(tmp_path, held, 8, 2)
    assert main(["demo", "--table", str(table), "--rounds", "1", "--plain", "--no-display"]) == 1
    err = capsys.readouterr().err
    assert f"tcp://127.0.0.1:{base + 2} (zeromq.command in {table}) is in use by another program" in err, err
    assert "move this demo with --ports N" in err and err.count("\n") == 1
    hold(held, base + 7)  # --ports moves every socket of the table: then --ports is the setting to change
    assert main(["demo", "--table", str(table), "--rounds", "1", "--plain", "--no-display",
                 "--ports", str(base + 4)]) == 1
    assert f"tcp://127.0.0.1:{base + 7} (--ports) is in use" in capsys.readouterr().err


@pytest.mark.parametrize(("offset", "said"), [
    (0, "cannot bind the pub socket to tcp://127.0.0.1:{port}: the address is in use by another program"),
    (3, "cannot open the GPIO panels' control socket tcp://127.0.0.1:{port}: the address is in use"),
])
def test_the_daemon_names_the_taken_port_and_its_key(
    tmp_path: Path, held: list[socket.socket], capsys: pytest.CaptureFixture[str], offset: int, said: str
) -> None:
    base, table = held_table(tmp_path, held, 4, offset)
    assert main(["run", str(table), "--no-shoe"]) == 4
    err = capsys.readouterr().err
    assert said.format(port=base + offset) in err, err
    key = "zeromq.pub" if offset == 0 else "gpio.control"
    assert f"{key} in the table file" in err and "Errno" not in err


def test_the_display_names_the_address_and_the_option(
    tmp_path: Path, held: list[socket.socket], capsys: pytest.CaptureFixture[str]
) -> None:
    base, table = held_table(tmp_path, held, 5, 4)
    assert main(["display", str(table), "--listen", f"127.0.0.1:{base + 4}"]) != 0
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{base + 4}: the address is in use by another program" in err, err
    assert "--listen HOST:PORT moves it" in err and "('127.0.0.1'" not in err

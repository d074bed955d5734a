"""The four shipped simulated tables run side by side, and a simulator never takes another's line."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from test_daemon_support import free_port_base

from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import TableConfig, ZmqSpec, load_table
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from drivers.shoe.sim import SimulatedShoe
from drivers.shoe.simlink import LinkError

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "firmware_configs" / "tables").glob("*_sim.yaml"))

pytestmark = pytest.mark.timeout(120)


def shipped() -> list[TableConfig]:
    return [load_table(path) for path in SHIPPED]


def test_shipped_tables_have_their_own_ports_lines_and_state_dirs() -> None:
    configs = shipped()
    assert len(configs) >= 4
    seen: dict[str, str] = {}
    for config in configs:
        z = config.spec.zeromq
        gpio = config.spec.gpio
        assert config.shoe_profile is not None
        control = [gpio.control] if gpio is not None and gpio.control is not None else []
        for what in (z.pub, z.snapshot, z.command, *control, config.shoe_profile.port,
                     str(config.state_dir)):
            assert what not in seen, f"{config.table_id} and {seen.get(what)} share {what}"
            seen[what] = config.table_id
    assert len({c.table_id for c in configs}) == len(configs)


def test_a_simulator_refuses_a_line_another_live_one_holds(tmp_path: Path) -> None:
    link = tmp_path / "shoe"
    first, second = SimulatedShoe("v1", seed=1), SimulatedShoe("v1", seed=2)
    try:
        first.open_pty(link)
        target = link.resolve()
        with pytest.raises(LinkError, match="held by another live simulator"):
            second.open_pty(link)
        assert link.resolve() == target  # the first one's line is untouched
        first.close()
        assert second.open_pty(link) == str(link)  # once it is gone, the line is free
    finally:
        first.close()
        second.close()


@pytest.fixture
def four_tables(tmp_path: Path) -> Iterator[list[tuple[TableConfig, CommandClient]]]:
    """Each shipped table with its simulated shoe and panels, on free ports and lines in tmp_path."""
    with ExitStack() as stack:
        out = []
        for config in shipped():
            base = free_port_base(3)  # pub, snapshot, command
            spec = ZmqSpec(pub=f"tcp://127.0.0.1:{base}", snapshot=f"tcp://127.0.0.1:{base + 1}",
                           command=f"tcp://127.0.0.1:{base + 2}")
            shoe = SimulatedShoe("v1", seed=1)
            stack.callback(shoe.close)
            link = shoe.open_pty(tmp_path / f"shoe-{config.table_id}")
            control = f"tcp://127.0.0.1:{free_port_base(1)}" if config.panels else None
            daemon = Daemon(config, state_dir=tmp_path / config.table_id, zmq_spec=spec, shoe_port=link,
                            gpio_control=control, fsync=False)
            stack.enter_context(DaemonThread(daemon))
            client = CommandClient(spec.command, timeout=10,
                                   key=local_key(config, state_dir=tmp_path / config.table_id))
            stack.callback(client.close)
            out.append((config, client))
        yield out


def test_the_shipped_tables_run_at_once(four_tables: list[tuple[TableConfig, CommandClient]]) -> None:
    deadline = time.monotonic() + 20
    for config, client in four_tables:
        while True:
            status = client.call("status", table=config.table_id)
            if status["shoe_device"]["connected"] or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert status["ok"] and status["table"] == config.table_id
        assert status["shoe_device"]["connected"], status
    journals = {client.call("ping")["journal_id"] for _, client in four_tables}
    assert len(journals) == len(four_tables)
    # A request for one table sent to another's endpoint changes nothing there.
    for (config, _), (_, other) in itertools.permutations(four_tables, 2):
        assert other.call("credit_in", seat=1, amount=100, table=config.table_id)["wrong_table"] is True

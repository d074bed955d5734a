"""A 3-node JetStream cluster on loopback (stream R3): its leader SIGKILLed mid-flow loses nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
from floor_support import (
    Capture,
    Dealer,
    Proc,
    assert_exactly_once,
    postgres,  # noqa: F401 (fixture)
    recorded_row,
    run_until,
    wait_for,
)
from test_daemon_support import baccarat_play, config_for

from controller.daemon.client import CommandClient, local_key
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.floor.local import NatsServer, ServerMissing, nats_cluster
from controller.floor.wire import STREAM
from tests.server_fixtures import FloorDatabase

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def cluster() -> Iterator[list[NatsServer]]:
    try:
        servers = nats_cluster(3)
    except ServerMissing as exc:
        pytest.fail(f"{exc}: run `make test` as root, or install them")
    try:
        for server in servers:
            server.start()
        yield servers
    finally:
        for server in servers:
            server.remove()


def stream_leader(url: str) -> str | None:
    """The name of the server leading the stream's replicas (None while there is none)."""

    async def ask() -> str | None:
        nc = await nats.connect(url.split(","), connect_timeout=2, max_reconnect_attempts=1)
        try:
            info = await nc.jetstream().stream_info(STREAM)
            return info.cluster.leader if info.cluster else None
        except Exception:  # not created yet, or no leader elected yet
            return None
        finally:
            await nc.close()

    return asyncio.run(ask())


def test_killing_the_stream_s_leader_of_three_loses_and_doubles_nothing(
        tmp_path: Path, cluster: list[NatsServer], postgres: FloorDatabase) -> None:  # noqa: F811
    config = config_for(tmp_path, name="c1")
    inputs, _ = baccarat_play(30, seed=13)
    urls = ",".join(s.url for s in cluster)
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", urls, "--replicas", "3",
                  "--window", "16")
    recorders = [Proc(tmp_path / f"rec{n}.log", "floor", "record", "--nats", urls, "--replicas", "3",
                      "--db", postgres.dsn, "--ack-wait", "3", "--gap-grace", "20") for n in (1, 2)]
    everyone = (uplink, *recorders)
    with DaemonThread(Daemon(config, use_shoe=False)):
        capture = Capture(config)
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
        dealer = Dealer(client, inputs)
        try:
            for p in everyone:
                p.start()
            dealer.start()
            wait_for("rows flowing", lambda: recorded_row(postgres.dsn, "c1") > 40, 60, *everyone)
            leaders: list[str | None] = []
            wait_for("a stream leader",
                     lambda: leaders.append(stream_leader(urls)) or leaders[-1] is not None, 30, *everyone)
            victim = next(s for s in cluster if f'server_name: "{leaders[-1]}"' in s.config)
            victim.kill()  # SIGKILL, mid-flow: the other two elect a new leader and go on
            dealer.join(90)
            seq = int(client.call("ping")["seq"])
        finally:
            client.close()
        published = capture.until(seq)
        run_until("every row recorded", lambda: recorded_row(postgres.dsn, "c1") == len(inputs), 90,
                  *everyone)
    assert assert_exactly_once(postgres.dsn, config, published) == len(inputs)
    assert "GAP" not in "".join(p.text() for p in everyone)

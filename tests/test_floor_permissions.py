"""Each table's own NATS user may publish only on its own subject: it cannot write another table's rows."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import nats
import nats.errors
import nats.js.errors
import pytest
from floor_support import Proc, postgres, recorded_row, run_until, serve  # noqa: F401 (fixture)
from test_daemon_support import baccarat_play, config_for
from test_floor_uplink import write_journal

from controller.floor.local import NatsServer, Postgres
from controller.floor.uplink import ensure_stream
from controller.floor.wire import MSG_ID, STREAM, subject

pytestmark = pytest.mark.timeout(90)

#: docs/floor.md's pattern: a table publishes its rows and reads the stream's tail, nothing else.
USERS = """
authorization {
  users = [
    {user: floor, password: floor-secret}
    {user: p1, password: p1-secret, permissions: {
      publish: {allow: ["croupier.p1.>", "$JS.API.STREAM.INFO.CROUPIER", "$JS.API.STREAM.MSG.GET.CROUPIER"]}
      subscribe: {allow: ["_INBOX.>"]}}}
  ]
}
"""


@pytest.fixture
def secured_nats() -> Iterator[NatsServer]:
    yield from serve(lambda: NatsServer(config=USERS))


def test_a_table_publishes_its_own_rows_and_cannot_publish_another_table_s(
        tmp_path: Path, secured_nats: NatsServer, postgres: Postgres) -> None:  # noqa: F811
    config = config_for(tmp_path, name="p1")
    inputs, _ = baccarat_play(2, seed=3)
    write_journal(config, inputs)
    secret = tmp_path / "p1.password"
    secret.write_text("p1-secret\n")
    floor_secret = tmp_path / "floor.password"
    floor_secret.write_text("floor-secret\n")
    rec = Proc(tmp_path / "rec.log", "floor", "record", "--nats", secured_nats.url, "--user", "floor",
               "--password-file", str(floor_secret), "--db", postgres.dsn).start()  # it creates the stream
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", secured_nats.url,
                  "--user", "p1", "--password-file", str(secret)).start()
    run_until("the table's rows recorded", lambda: recorded_row(postgres.dsn, "p1") == len(inputs), 40,
              uplink, rec)

    async def forge() -> tuple[bool, bool]:
        """As p1: publish a row on p2's subject. Then as the floor: did the stream take it?"""
        table = await nats.connect(secured_nats.url, user="p1", password="p1-secret")
        try:
            await table.jetstream().publish(subject("p2"), b"{}", timeout=2, headers={MSG_ID: "p2:x:1"})
            refused = False
        except (nats.errors.TimeoutError, nats.errors.NoRespondersError, nats.js.errors.APIError):
            refused = True
        finally:
            await table.close()
        floor = await nats.connect(secured_nats.url, user="floor", password="floor-secret")
        try:
            await ensure_stream(floor.jetstream())
            await floor.jetstream().get_last_msg(STREAM, subject("p2"))
            stored = True
        except nats.js.errors.NotFoundError:
            stored = False
        finally:
            await floor.close()
        return refused, stored

    refused, stored = asyncio.run(forge())
    assert refused and not stored

"""NATS over TLS with nkeys: the uplink and the recorder trust the floor's CA, show a client
certificate and sign the server's challenge with their own nkey seed (no password on the wire).

The certificate is made here by ``openssl`` (self-signed, for 127.0.0.1: it is its own CA, the
server's certificate and the clients'), the nkeys by the ``nkeys`` library nats-py uses; the
server requires TLS, verifies client certificates and knows users only by their nkeys' public keys.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
import nkeys
import pytest
from floor_support import Proc, postgres, recorded_row, run_until, serve  # noqa: F401 (fixture)
from test_daemon_support import baccarat_play, config_for
from test_floor_uplink import write_journal

from controller.floor.cli import connect_options
from controller.floor.local import NatsServer, Postgres

pytestmark = pytest.mark.timeout(90)


def private(path: Path, text: str) -> Path:
    """A secret file, 0600 from its first byte."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    return path


def nkey(folder: Path, name: str) -> tuple[Path, str]:
    """A new user nkey: its seed file and its public key (what the server lists)."""
    seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
    public = nkeys.from_seed(bytearray(seed)).public_key.decode()
    return private(folder / f"{name}.nk", seed.decode() + "\n"), public


@pytest.fixture
def floor_tls(tmp_path: Path) -> Iterator[tuple[NatsServer, dict[str, Path]]]:
    """A nats-server that requires TLS with client certificates and nkeys: the floor's user (all) and
    table k1's (its own subjects and the two stream requests, as docs/floor.md's users)."""
    key, cert = tmp_path / "floor.key", tmp_path / "floor.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=floor",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=60)
    floor_seed, floor_public = nkey(tmp_path, "floor")
    table_seed, table_public = nkey(tmp_path, "k1")
    config = f"""
tls {{ cert_file: "{cert}", key_file: "{key}", ca_file: "{cert}", verify: true }}
authorization {{
  users = [
    {{nkey: {floor_public}}}
    {{nkey: {table_public}, permissions: {{
      publish: {{allow: ["croupier.k1.>", "$JS.API.STREAM.INFO.CROUPIER", "$JS.API.STREAM.MSG.GET.CROUPIER"]}}
      subscribe: {{allow: ["_INBOX.>"]}}}}}}
  ]
}}
"""
    files = {"cert": cert, "key": key, "floor": floor_seed, "k1": table_seed}
    for server in serve(lambda: NatsServer(config=config)):
        yield server, files


def options(files: dict[str, Path], seed: str, tls: bool = True) -> dict[str, Any]:
    """The connect options the commands build from --nkey-seed, --tls-ca, --tls-cert and --tls-key."""
    cert = str(files["cert"]) if tls else None
    return connect_options(argparse.Namespace(
        user=None, password_file=None, nkey_seed=str(files[seed]), tls_ca=cert, tls_cert=cert,
        tls_key=str(files["key"]) if tls else None))


async def connects(url: str, **opts: Any) -> bool:
    try:
        nc = await nats.connect(url, allow_reconnect=False, max_reconnect_attempts=0, connect_timeout=3,
                                **opts)
    except Exception:  # noqa: BLE001 (refused in any of the ways a client can be)
        return False
    await nc.close()
    return True


def test_uplink_and_recorder_carry_a_table_over_tls_with_nkeys(
        tmp_path: Path, floor_tls: tuple[NatsServer, dict[str, Path]], postgres: Postgres) -> None:  # noqa: F811
    server, files = floor_tls
    # The server takes only what the options give: TLS with our CA and certificate, and a known nkey.
    assert asyncio.run(connects(server.url, **options(files, "k1")))
    assert not asyncio.run(connects(server.url, **options(files, "k1", tls=False)))
    stranger, _ = nkey(tmp_path, "stranger")
    files["stranger"] = stranger
    assert not asyncio.run(connects(server.url, **options(files, "stranger")))

    config = config_for(tmp_path, name="k1")
    inputs, _ = baccarat_play(2, seed=5)
    write_journal(config, inputs)
    tls = ["--tls-ca", str(files["cert"]), "--tls-cert", str(files["cert"]), "--tls-key", str(files["key"])]
    rec = Proc(tmp_path / "rec.log", "floor", "record", "--nats", server.url, *tls,
               "--nkey-seed", str(files["floor"]), "--db", postgres.dsn).start()  # it creates the stream
    uplink = Proc(tmp_path / "uplink.log", "uplink", str(config.path), "--nats", server.url, *tls,
                  "--nkey-seed", str(files["k1"])).start()
    run_until("the table's rows recorded over TLS",
              lambda: recorded_row(postgres.dsn, "k1") == len(inputs), 40, uplink, rec)
    assert "Violation" not in uplink.text() + rec.text()  # every subject the uplink uses is allowed

"""``--key`` and ``--server-key``: how the tools that talk to a table (``ctl``, ``watch``) take a person's
CURVE key, and the credentials they make of it.

Why apart from :mod:`controller.daemon.client`: these are the command line's, not the protocol's; the
clients take :class:`~controller.daemon.keys.ClientCredentials` whoever made them.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from controller.daemon.config import TableConfig
from controller.daemon.keys import ClientCredentials, KeyFolder, client_credentials


def add_key_arguments(parser: argparse.ArgumentParser, key_help: str | None = None) -> None:
    """``--key`` and ``--server-key`` for the tools that talk to a table (ctl, watch).

    ``key_help``: a tool whose sockets may be plain (watch) says itself when the key is used, and
    ``--key`` then has no default (the tool reads $CROUPIER_KEY only where a key is needed).
    """
    parser.add_argument(
        "--key",
        default=os.environ.get("CROUPIER_KEY") if key_help is None else None,
        help=key_help or "your CURVE key (a .key_secret made by `croupier keys new` or `keys request`); "
        "default $CROUPIER_KEY. "
        "Without one the command socket answers nothing",
    )
    parser.add_argument(
        "--server-key",
        default=os.environ.get("CROUPIER_SERVER_KEY"),
        help="the table's public key (server.key); default $CROUPIER_SERVER_KEY, else server.key beside "
        "--key, else the one in the table file's key folder",
    )


def events_key(key: str | None, table: TableConfig) -> str | None:
    """The key file for ``table``'s PUB and snapshot sockets: ``--key`` (else $CROUPIER_KEY) where its file
    says ``security.curve_events``, else none: a plain socket never completes a CURVE handshake (watch and
    display alike)."""
    return (key or os.environ.get("CROUPIER_KEY")) if table.spec.security.curve_events else None


def credentials(
    key: str | None, server_key: str | None, table: TableConfig | None
) -> ClientCredentials | None:
    """The client's CURVE credentials from ``--key``/``--server-key`` (None: no key given)."""
    if key is None:
        return None
    key_path = Path(key)
    server = Path(server_key) if server_key else None
    if server is None and not (key_path.parent / "server.key").exists() and table is not None:
        server = KeyFolder(table.key_folder()).server_public_file
    return client_credentials(key_path, server)

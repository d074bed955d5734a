"""``croupier watch`` and ``croupier ctl`` told of no table reach the one ``make demo`` runs.

The README says to follow the demo with a plain ``croupier watch`` and to recall its rounds with
``CROUPIER_KEY=... croupier ctl recall 10``. Both defaulted to the table files' default ports
(5556-5558) while ``make demo`` runs ``baccarat_7seat_sim.yaml`` on 5616-5618: "nothing answers"
(a new-user review, 2026-12-07). The table is read from the Makefile and its file read as
``--table`` reads it, so that a port moved in either place fails here, not in front of a user.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NoReturn

import pytest

from controller.cli import main
from controller.daemon.config import TableConfig, load_table
from controller.daemon.endpoints import EndpointError

ROOT = Path(__file__).resolve().parents[1]


def demo_table() -> TableConfig:
    """The table file the Makefile's ``demo`` target runs, loaded as the tools load a ``--table``."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile[makefile.index("\ndemo:"):].split("\n\n", 1)[0]
    found = re.search(r"croupier demo --table (\S+)", recipe)
    assert found, f"the Makefile's demo target names no --table:\n{recipe}"
    return load_table(ROOT / found.group(1))


@pytest.fixture(autouse=True)
def no_table_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CROUPIER_TABLE", "CROUPIER_KEY", "CROUPIER_SERVER_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_watch_without_a_table_follows_the_demos_endpoints(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[tuple[str, str, str]] = []

    def subscriber(pub: str, snapshot: str, table: str, **_: Any) -> NoReturn:
        seen.append((pub, snapshot, table))
        raise EndpointError("stop here: the endpoints are what is checked")

    monkeypatch.setattr("controller.tools.watch.Subscriber", subscriber)
    assert main(["watch", "--json", "--idle-exit", "1"]) == 2
    zeromq = demo_table().spec.zeromq
    assert seen == [(zeromq.pub, zeromq.snapshot, "")]
    assert "stop here" in capsys.readouterr().err


def test_ctl_without_a_table_talks_to_the_demos_command_socket(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[str] = []

    def client(endpoint: str, *_: Any, **__: Any) -> NoReturn:
        seen.append(endpoint)
        raise EndpointError("stop here: the endpoint is what is checked")

    monkeypatch.setattr("controller.tools.ctl.CommandClient", client)
    assert main(["ctl", "recall", "10"]) == 2
    assert seen == [demo_table().spec.zeromq.command]
    assert "stop here" in capsys.readouterr().err


def test_the_docs_name_the_demos_table_and_ports() -> None:
    config = demo_table()
    zeromq = config.spec.zeromq
    watch_doc = (ROOT / "docs" / "watch.md").read_text()
    commands_doc = (ROOT / "docs" / "commands.md").read_text()
    assert zeromq.pub in watch_doc and f":{zeromq.snapshot.rsplit(':', 1)[1]}`" in watch_doc
    assert zeromq.command in commands_doc
    assert config.path.name in watch_doc and config.path.name in commands_doc

"""Acceptance: a cashier's client written only from the docs (examples/cashier.py: pyzmq, no Croupier
import) credits a seat over CURVE with a key made by `croupier keys new`, gets the first reply again on a
resend, is told of a refusal, and resends an unanswered request with the same ref until a daemon answers:
applied once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_daemon_support import write_table
from test_standalone_subscriber import top_modules

from controller.cli import main
from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import TableConfig, load_table
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "cashier.py"

pytestmark = pytest.mark.timeout(120)


def test_the_example_imports_nothing_of_the_project() -> None:
    assert top_modules(SCRIPT) <= {"__future__", "argparse", "json", "sys", "typing", "zmq"}


def _cashier(config: TableConfig, tmp: Path) -> list[str]:
    """The script's command line with a cashier key made as the docs say (`croupier keys new`)."""
    assert main(["keys", "new", "ann", "--role", "cashier", "--table", str(config.path)]) == 0
    clients = config.key_folder() / "clients"
    return [sys.executable, str(SCRIPT), "--command", config.spec.zeromq.command, "--table", config.table_id,
            "--key", str(clients / "ann.key_secret"), "--server-key", str(clients / "server.key")]


def _run(argv: list[str], *more: str) -> tuple[int, dict[str, object] | None, str]:
    done = subprocess.run([*argv, *more], capture_output=True, text=True, timeout=90)
    reply = json.loads(done.stdout) if done.stdout.strip() else None
    return done.returncode, reply, done.stderr


def _credits(config: TableConfig) -> object:
    client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
    try:
        return client.call("status")["credits"]
    finally:
        client.close()


def test_a_credit_its_resend_and_a_refusal(tmp_path: Path) -> None:
    config = load_table(write_table(tmp_path))
    local_key(config)
    argv = _cashier(config, tmp_path)  # keys authorised before the start: the daemon reads them then
    with DaemonThread(Daemon(config, use_shoe=False, fsync=False)):
        slip = ("credit_in", "--seat", "3", "--amount", "50000", "--ref", "slip-0042", "--by", "cage 1")
        code, first, words = _run(argv, *slip)
        assert code == 0 and first is not None and first["ok"] and "applied at row 1" in words, words
        code, again, words = _run(argv, *slip)
        assert code == 0 and again == {**first, "duplicate": True} and "applied before" in words, words
        code, refused, words = _run(argv, "credit_out", "--seat", "3", "--amount", "60000", "--ref", "out-1")
        assert code == 1 and refused is not None and refused["refused"] and "refused:" in words, words
        code, _, words = _run([*argv[:5], "other", *argv[6:]], "status", "--ref", "q-1")
        assert code == 1 and "not 'other'" in words, words
        assert _credits(config) == {"3": 50000}


def test_an_unanswered_request_is_sent_again_with_its_ref_and_applied_once(tmp_path: Path) -> None:
    config = load_table(write_table(tmp_path))
    assert main(["keys", "server", "--table", str(config.path)]) == 0  # before the daemon's first start
    argv = _cashier(config, tmp_path)
    local_key(config)  # the test's own key, for the status below: authorised before the daemon starts
    client = subprocess.Popen([*argv, "--timeout", "0.3", "--tries", "200", "credit_in", "--seat", "2",
                               "--amount", "700", "--ref", "slip-7"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        assert client.stderr is not None
        while "try 2 of 200" not in client.stderr.readline():  # no daemon yet: a try went unanswered
            assert time.monotonic() < deadline and client.poll() is None, "the client did not try again"
        with DaemonThread(Daemon(config, use_shoe=False, fsync=False)):
            out, err = client.communicate(timeout=60)
            assert client.returncode == 0, err
            assert json.loads(out)["ok"] and _credits(config) == {"2": 700}
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()


def test_a_journal_fault_is_unknown_never_a_refusal() -> None:
    """A journal fault's reply is ``ok: false`` but no refusal: whether the ref was applied is not known
    (docs/commands.md), so the slip must not be paid out as refused (a review: it exited 1, "refused")."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("cashier", SCRIPT)
    assert spec is not None and spec.loader is not None
    cashier = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cashier)
    where = {"table": "t1", "journal_id": "j"}
    fault = {**where, "ok": False, "error": "journal fault: disk full", "journal_fault": True}
    assert cashier.verdict(fault, "t1")[0] == 2
    assert cashier.verdict({**where, "ok": False, "error": "no", "refused": True}, "t1")[0] == 1
    assert cashier.verdict({**where, "ok": True, "row": 1, "seq": 1}, "t1")[0] == 0

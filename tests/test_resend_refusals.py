"""A refusal given before the journal is its ref's first answer too (docs/commands.md): a resend with the
same ref is refused again, even once the key's role or the table's limits would take it, and after a
restart. Before (a helper's review, 2026-12-07), an observer's credit refused as denied, resent once the
key was made a cashier's, was applied; a credit over ``max_credit``, resent after a restart that raised
it, was applied: a cashier told "refused" hands the chips back, and the resend credited them anyway."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from test_daemon_support import config_for

from controller.daemon.client import CommandClient, local_key
from controller.daemon.keys import KeyFolder
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon

pytestmark = pytest.mark.timeout(90)

LIMITS = {"unit": 100, "min_bet": 100, "max_bet": 1000, "max_credit": 10000}


def _call(config: Any, cmd: str, **fields: Any) -> dict[str, Any]:
    client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config, "operator", "olive"))
    try:
        return client.call(cmd, **fields)
    finally:
        client.close()


def test_a_denied_command_resent_once_the_role_allows_it_is_denied_again(tmp_path: Path) -> None:
    config = config_for(tmp_path, limits=LIMITS)
    local_key(config, "operator", "olive")
    with DaemonThread(Daemon(config, use_shoe=False)):
        key = local_key(config, "observer", "carl")
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=key)
        try:
            first = client.call("credit_in", seat=1, amount=5000, ref="R1")
            assert first["denied"] and not first["ok"]
            folder = KeyFolder(config.key_folder())
            (folder.authorized / "carl.key").unlink()
            folder.authorize("carl", "cashier", key.public)
            deadline = time.monotonic() + 10  # the registry is re-read within a second
            n = 1
            while not client.call("credit_in", seat=3, amount=100, ref=f"P{n}")["ok"]:
                assert time.monotonic() < deadline, "the cashier's role never took effect"
                n += 1  # denied while the observer's role still held
                time.sleep(0.1)
            assert client.call("credit_in", seat=1, amount=5000, ref="R1") == {**first, "duplicate": True}
            other = client.call("credit_in", seat=1, amount=7000, ref="R1")
            assert other.get("ref_reused") and "credit_in seat 1 amount 5000" in other["error"], other
            assert client.call("credit_in", seat=1, amount=5000, ref="R2")["ok"]  # a new ref: a new credit
        finally:
            client.close()
        assert _call(config, "status")["credits"] == {"1": 5000, "3": 100}


def test_a_refusal_by_the_limits_is_repeated_after_a_restart_that_raised_them(tmp_path: Path) -> None:
    config = config_for(tmp_path, limits=LIMITS)
    local_key(config, "operator", "olive")
    with DaemonThread(Daemon(config, use_shoe=False)):
        first = _call(config, "credit_in", seat=2, amount=20000, ref="B1")
        assert not first["ok"] and "max_credit" in first["error"], first
        assert _call(config, "credit_in", seat=2, amount=20000, ref="B1") == {**first, "duplicate": True}
    higher = config_for(tmp_path, limits={**LIMITS, "max_credit": 100000})
    with DaemonThread(Daemon(higher, use_shoe=False)):
        assert _call(higher, "credit_in", seat=2, amount=20000, ref="B1") == {**first, "duplicate": True}
        assert _call(higher, "status")["credits"] == {}
        assert _call(higher, "credit_in", seat=2, amount=20000, ref="B2")["ok"]
        assert _call(higher, "status")["credits"] == {"2": 20000}


def test_a_keys_kept_refusals_are_bounded(tmp_path: Path) -> None:
    """Every refused request under a new ref kept a row in the journal file: a read-only key grew it by
    4.9 MB in 2 s (a review, 2026-12-07). A key's newest KEPT_REFUSALS answer its resends; older ones go."""
    from controller import inputs as I
    from controller.daemon import resend
    from controller.daemon.commands import InputCommand
    from controller.daemon.journal import Journal
    from controller.daemon.service import TableService

    config = config_for(tmp_path, limits=LIMITS)
    journal = Journal.open(config.state_dir, table=config.table_id, game=config.game_name,
                           options=config.options_dict(), fsync=False)
    service = TableService(config, journal)
    service.replay()
    n = resend.KEPT_REFUSALS + 40
    for k in range(n):
        resend.refuse(service, InputCommand("credit_in", I.CreditIn(1, 100), f"R{k}", None), "carl",
                      {"ok": False, "error": f"no {k}", "denied": True})
    resend.refuse(service, InputCommand("credit_in", I.CreditIn(1, 100), "R0", None), "olive",
                  {"ok": False, "error": "olive's", "denied": True})
    rows = dict(journal.connection.execute("SELECT key, count(*) FROM refused GROUP BY key").fetchall())
    assert rows == {"carl": resend.KEPT_REFUSALS, "olive": 1}  # another key's refusals are its own
    again = InputCommand("credit_in", I.CreditIn(1, 100), f"R{n - 1}", None)
    assert resend.repeat(service, again, "carl") == {"ok": False, "error": f"no {n - 1}", "denied": True,
                                                     "duplicate": True}
    assert resend.repeat(service, InputCommand("credit_in", I.CreditIn(1, 100), "R0", None), "carl") is None
    journal.close()


def test_cmd_in_a_refusal_says_its_ref_was_kept_and_an_invalid_request_keeps_none(tmp_path: Path) -> None:
    """docs/commands.md: a refusal of an understood command names its ``cmd`` and is kept under the ref;
    an invalid request (no ``cmd``) keeps nothing, so its corrected resend is applied. Before (a
    third-party client written from the docs, 2026-12-07), a seat the table lacks was refused with no
    ``cmd`` like a malformed request, yet kept: the client could not tell which a corrected resend meets."""
    config = config_for(tmp_path, limits=LIMITS)
    local_key(config, "operator", "olive")
    with DaemonThread(Daemon(config, use_shoe=False)):
        over = _call(config, "credit_in", seat=9, amount=100, ref="S9")
        assert not over["ok"] and over["cmd"] == "credit_in" and "no seat 9" in over["error"], over
        assert _call(config, "credit_in", seat=1, amount=100, ref="S9")["ref_reused"]
        invalid = _call(config, "credit_in", seat=1, ref="M1")
        assert not invalid["ok"] and "cmd" not in invalid and "missing field 'amount'" in invalid["error"]
        assert _call(config, "credit_in", seat=1, amount=100, ref="M1")["ok"]
        assert _call(config, "status")["credits"] == {"1": 100}

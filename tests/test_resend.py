"""A resent command gets its first answer: refused stays refused, refs are per key, bodies are compared.

A real daemon on ipc:// sockets, real keys, the real CommandClient; the journal a real SQLite file,
read after a restart as the next start reads it (docs/commands.md, "ref").
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from restart_support import Croupier
from test_daemon_support import config_for

from controller import inputs as I
from controller.daemon import resend
from controller.daemon.client import CommandClient, local_key
from controller.daemon.commands import InputCommand
from controller.daemon.config import TableConfig
from controller.daemon.journal import JOURNAL_NAME, Journal
from controller.daemon.keys import KeyFolder
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.daemon.service import TableService
from controller.tools.ctl import format_reply

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def table(tmp_path: Path) -> TableConfig:
    config = config_for(tmp_path)
    local_key(config, "operator", "olive")
    local_key(config, "cashier", "carl")
    return config


def _call(config: TableConfig, name: str, role: Any, cmd: str, **fields: Any) -> dict[str, Any]:
    client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config, role, name))
    try:
        reply = client.call(cmd, **fields)
    finally:
        client.close()
    return {k: v for k, v in reply.items() if k != "journal_id"}


def _kept_rows(config: TableConfig) -> list[int]:
    conn = sqlite3.connect(f"file:{config.state_dir / JOURNAL_NAME}?mode=ro", uri=True)
    try:
        return [row for (row,) in conn.execute("SELECT row FROM replies ORDER BY row")]
    finally:
        conn.close()


@pytest.fixture
def running(table: TableConfig) -> Iterator[TableConfig]:
    with DaemonThread(Daemon(table, use_shoe=False)):
        yield table


def test_a_refused_cash_out_is_refused_again_on_resend_and_after_a_restart(table: TableConfig) -> None:
    with DaemonThread(Daemon(table, use_shoe=False)):
        assert _call(table, "carl", "cashier", "credit_in", seat=5, amount=5, ref="I1")["ok"]
        first = _call(table, "carl", "cashier", "credit_out", seat=5, amount=999999, ref="O1")
        assert first["refused"] and not first["ok"] and "credits" in first["error"]
        again = _call(table, "carl", "cashier", "credit_out", seat=5, amount=999999, ref="O1")
        assert again == {**first, "duplicate": True}
        assert format_reply({"cmd": "credit_out"}, again, table.limits.money) == (
            f"REFUSED: {first['error']} (a resend: the first answer, repeated)")
        paid = _call(table, "carl", "cashier", "credit_in", seat=5, amount=700, ref="I2")
        assert _call(table, "carl", "cashier", "credit_in", seat=5, amount=700, ref="I2") == {
            **paid, "duplicate": True}  # the first answer's seq and events, not today's
    with DaemonThread(Daemon(table, use_shoe=False)):
        assert _call(table, "carl", "cashier", "credit_out", seat=5, amount=999999, ref="O1") == {
            **first, "duplicate": True}
    # A reply lost in a crash (committed input, reply not yet kept): derived again by replaying.
    conn = sqlite3.connect(table.state_dir / JOURNAL_NAME)
    with conn:
        conn.execute("DELETE FROM replies")
    conn.close()
    with DaemonThread(Daemon(table, use_shoe=False)):
        assert _kept_rows(table) == [first["row"] - 1, first["row"], paid["row"]]  # kept again at start
        assert _call(table, "carl", "cashier", "credit_out", seat=5, amount=999999, ref="O1") == {
            **first, "duplicate": True}
        assert _call(table, "carl", "cashier", "credit_in", seat=5, amount=700, ref="I2") == {
            **paid, "duplicate": True}
        assert _call(table, "olive", "operator", "status")["credits"]["5"] == 705


def test_a_bet_refused_while_betting_is_closed_is_refused_again(running: TableConfig) -> None:
    _call(running, "carl", "cashier", "credit_in", seat=1, amount=1000)
    first = _call(running, "olive", "operator", "bet", seat=1, spot="player", amount=100, ref="B1")
    assert first["refused"]
    _call(running, "olive", "operator", "open")
    assert _call(running, "olive", "operator", "bet", seat=1, spot="player", amount=100, ref="B1") == {
        **first, "duplicate": True}
    assert _call(running, "olive", "operator", "status")["wagers"] == []


def test_one_keys_ref_neither_blocks_nor_answers_for_another_key(running: TableConfig) -> None:
    assert _call(running, "carl", "cashier", "credit_in", seat=5, amount=700, ref="round-9-open")["ok"]
    opened = _call(running, "olive", "operator", "open", ref="round-9-open")
    assert opened["ok"] and "duplicate" not in opened
    assert _call(running, "olive", "operator", "status")["phase"] == "betting"


def test_another_body_under_a_used_ref_is_refused_naming_both(running: TableConfig) -> None:
    assert _call(running, "carl", "cashier", "credit_in", seat=5, amount=700, ref="R1")["ok"]
    reply = _call(running, "carl", "cashier", "credit_in", seat=5, amount=900000, ref="R1")
    assert not reply["ok"] and reply["ref_reused"] and "duplicate" not in reply
    assert reply["error"] == (
        "ref 'R1' was first used for credit_in seat 5 amount 700 (command:carl); this request is "
        "credit_in seat 5 amount 900000 (command:carl): nothing done (use a new ref for a new request)")
    assert _call(running, "olive", "operator", "status")["credits"]["5"] == 700


def test_an_unscoped_ref_of_an_older_journal_belongs_to_the_key_in_its_source(table: TableConfig) -> None:
    journal = Journal.open(table.state_dir, table=table.table_id, game=table.game_name,
                           options=table.options_dict())
    old = TableService(table, journal)
    old.replay()
    old.submit(I.CreditIn(2, 300), "command:carl by till 1", "L1")  # as code before scoped refs wrote it
    journal.close()
    with DaemonThread(Daemon(table, use_shoe=False)):
        resent = _call(table, "carl", "cashier", "credit_in", seat=2, amount=300, ref="L1", by="till 1")
        assert resent["duplicate"] and resent["ok"] and resent["row"] == 1
        assert [e["event"] for e in resent["events"]] == ["credit"]
        fresh = _call(table, "olive", "operator", "credit_in", seat=2, amount=300, ref="L1")
        assert fresh["ok"] and "duplicate" not in fresh
        assert _call(table, "olive", "operator", "status")["credits"]["2"] == 600


def test_a_reply_lost_before_the_checkpoint_is_derived_by_replaying_the_journal(table: TableConfig) -> None:
    def service_of(checkpoint_every: int) -> TableService:
        journal = Journal.open(table.state_dir, table=table.table_id, game=table.game_name,
                               options=table.options_dict())
        service = TableService(table, journal, checkpoint_every=checkpoint_every)
        service.replay()
        resend.keep_replayed(service)
        return service

    def send(service: TableService, cmd: str, inp: I.Input, ref: str) -> dict[str, Any]:
        return resend.run(service, lambda i, src, r: service.submit(i, src, r),
                          InputCommand(cmd, inp, ref, None), "carl")

    service = service_of(checkpoint_every=1)  # a checkpoint after every input: nothing replayed at start
    paid = send(service, "credit_in", I.CreditIn(3, 40), "P1")
    refused = send(service, "credit_out", I.CreditOut(3, 41), "P2")
    assert paid["ok"] and refused["refused"]
    with service.journal.connection as conn:
        conn.execute("DELETE FROM replies")  # as a journal from before replies were kept
    service.journal.close()
    again = service_of(checkpoint_every=1)
    assert again.checkpoint_row == 2 and again.replayed == 0 and _kept_rows(table) == []
    assert send(again, "credit_out", I.CreditOut(3, 41), "P2") == {**refused, "duplicate": True}
    assert send(again, "credit_in", I.CreditIn(3, 40), "P1") == {**paid, "duplicate": True}
    assert _kept_rows(table) == [1, 2] and again.table.credits[3] == 40
    again.journal.close()


def test_a_bet_resent_after_the_limits_changed_gets_its_first_answer(tmp_path: Path) -> None:
    """A bet of 10.00 taken under a maximum of 10.00, resent (same ref) after the table file lowered
    the maximum to 5.00: the bet stood and was journaled, so the resend is answered as it was first
    (ok), not refused by today's limits (a client told 'refused' would think the wager never stood)."""
    config = config_for(tmp_path, limits={"unit": 100, "min_bet": 100, "max_bet": 1000})
    local_key(config, "operator", "olive")
    with DaemonThread(Daemon(config, use_shoe=False)):
        _call(config, "olive", "operator", "credit_in", seat=1, amount=5000)
        _call(config, "olive", "operator", "open")
        first = _call(config, "olive", "operator", "bet", seat=1, spot="player", amount=1000, ref="B1")
        assert first["ok"]
    lower = config_for(tmp_path, limits={"unit": 100, "min_bet": 100, "max_bet": 500})
    with DaemonThread(Daemon(lower, use_shoe=False)):
        again = _call(lower, "olive", "operator", "bet", seat=1, spot="player", amount=1000, ref="B1")
        assert again == {**first, "duplicate": True}
        assert _call(lower, "olive", "operator", "status")["wagers"] == [
            {"seat": 1, "spot": "player", "amount": 1000}]
        # A seat no table has (past limits.MAX_SEATS) under the same ref: refused for its seat, which no
        # earlier limits could have taken, not compared with the bet the ref was first used for.
        beyond = _call(lower, "olive", "operator", "bet", seat=13, spot="player", amount=1000, ref="B1")
        assert not beyond["ok"] and "no seat 13: this table has seats 1.." in beyond["error"], beyond


def test_a_resend_while_the_journal_is_faulted_gets_its_first_answer(tmp_path: Path) -> None:
    """A cash-out committed before the storage failed, resent while the table is halted: its first reply
    (a review, 2026-12-05: the lookup refused with the fault, "this input was not applied", and a cashier
    told so would pay out again). A new input is still refused as not applied; after a restart the
    resend gets the same first reply."""
    croupier = Croupier(tmp_path)
    croupier.start("journal_write:3:eio")  # the third write (the open below) fails with EIO
    try:
        assert croupier.call("credit_in", seat=1, amount=10000, ref="C1")["ok"]
        first = croupier.call("credit_out", seat=1, amount=4000, ref="R1")
        assert first["ok"]
        refused = croupier.call("open", ref="O1")
        assert refused["journal_fault"] and "this input was not applied" in refused["error"]
        again = croupier.call("credit_out", seat=1, amount=4000, ref="R1")
        assert again == {**first, "duplicate": True}
    finally:
        croupier.stop()
    croupier.start()
    try:
        assert croupier.call("credit_out", seat=1, amount=4000, ref="R1") == {**first, "duplicate": True}
        assert croupier.status()["credits"] == {"1": 6000}
    finally:
        croupier.stop()


def test_a_resend_after_the_keys_role_was_narrowed_gets_its_first_reply_and_nothing_new(
    running: TableConfig,
) -> None:
    """A cashier's credit, then the key made an observer's: its resend gets the first reply (a review,
    2026-12-05: it was "denied", which reads as never applied); a new credit is denied as before, and
    another body under the used ref is refused naming both, as under any role (docs/commands.md)."""
    key = local_key(running, "cashier", "carl")
    client = CommandClient(running.spec.zeromq.command, timeout=10, key=key)
    try:
        first = client.call("credit_in", seat=1, amount=5000, ref="R1")
        assert first["ok"]
        folder = KeyFolder(running.key_folder())
        (folder.authorized / "carl.key").unlink()
        folder.authorize("carl", "observer", key.public)
        deadline = time.monotonic() + 10  # the registry is re-read within a second
        n = 2
        while (reply := client.call("credit_in", seat=1, amount=100, ref=f"R{n}")).get("ok"):
            assert time.monotonic() < deadline, "the narrowed role never took effect"
            n += 1  # taken while the old role still held: each a new credit
            time.sleep(0.1)
        assert reply["denied"]
        assert client.call("credit_in", seat=1, amount=5000, ref="R1") == {**first, "duplicate": True}
        assert client.call("credit_in", seat=1, amount=7000, ref="R1")["ref_reused"]
        assert _call(running, "olive", "operator", "status")["credits"] == {"1": 5000 + 100 * (n - 2)}
    finally:
        client.close()


def test_a_ref_of_the_scoped_form_is_a_new_ref_not_the_resend_of_another(running: TableConfig) -> None:
    """A review (2026-12-07): ``key:olive:A`` from olive was looked up unscoped, found olive's ref ``A``
    (journaled as ``key:olive:A``) and was answered as its resend: a new credit never applied."""
    assert _call(running, "olive", "operator", "credit_in", seat=3, amount=100, ref="A")["ok"]
    fresh = _call(running, "olive", "operator", "credit_in", seat=3, amount=100, ref="key:olive:A")
    assert fresh["ok"] and "duplicate" not in fresh
    assert _call(running, "olive", "operator", "status")["credits"]["3"] == 200


def test_another_command_under_a_used_ref_is_ref_reused_even_when_the_role_may_not_send_it(
        running: TableConfig) -> None:
    """A review (2026-12-07): a cashier's ``open`` under the ref of its applied credit was answered
    ``denied``, not ``ref_reused`` naming both, and the denial kept under a ref already used."""
    assert _call(running, "carl", "cashier", "credit_in", seat=4, amount=500, ref="X")["ok"]
    reply = _call(running, "carl", "cashier", "open", ref="X")
    assert reply["ref_reused"] and not reply["ok"] and "denied" not in reply
    assert "ref 'X' was first used for credit_in seat 4 amount 500" in reply["error"]

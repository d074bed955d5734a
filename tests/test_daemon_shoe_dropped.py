"""A frame the reader drops as a protocol error (the last SEQ with another message, a stale SEQ) against the
real daemon and its SQLite journal: the halt it raises is what makes the drop safe, so it must be durable
before the frame is acknowledged, and a restart must not take another card for the cursor's resend."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_daemon_shoe_corners import offline, shoe_table
from test_daemon_support import journal_inputs
from wait_support import wait_for

from controller.cards import parse_card
from controller.daemon import checkpoint
from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import TableConfig
from controller.daemon.journal import JOURNAL_NAME, Journal
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.daemon.service import TableService
from drivers.shoe.messages import CardMsg, Fault, Hello
from tests.shoe_support import RawShoe, is_ack

pytestmark = pytest.mark.timeout(120)


@contextmanager
def _running(config: TableConfig) -> Iterator[CommandClient]:
    """The daemon on ``config``, its reader connected to the shoe: its command client."""
    with DaemonThread(Daemon(config)):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        try:
            wait_for(lambda: client.call("status")["shoe_device"]["connected"], "the reader to connect")
            yield client
        finally:
            client.close()


def _deal(shoe: RawShoe, *cards: str) -> None:
    """A HELLO, then ``cards`` from SEQ 1, each acknowledged."""
    shoe.send(0, Hello("Renumber", "1", "R"))
    shoe.expect(is_ack(0))
    for seq, code in enumerate(cards, start=1):
        shoe.send(seq, CardMsg(parse_card(code)))
        shoe.expect(is_ack(seq))


def _acked_while_locked(config: TableConfig, shoe: RawShoe, seq: int, card: str) -> bool:
    """Whether ``card`` sent under ``seq`` is acknowledged while another writer holds the journal (the
    daemon's write fails after SQLite's 5 s wait)."""
    lock = sqlite3.connect(config.state_dir / JOURNAL_NAME, isolation_level=None)
    try:
        lock.execute("BEGIN IMMEDIATE")
        shoe.send(seq, CardMsg(parse_card(card)))
        return any(is_ack(seq)(f) for f in shoe.drain(7.0))
    finally:
        lock.execute("ROLLBACK")
        lock.close()


def _cards(config: TableConfig) -> list[str]:
    return [i["card"] for _, i in journal_inputs(config.state_dir) if i["input"] == "card"]


def test_a_frame_dropped_as_a_protocol_error_is_not_acknowledged_while_its_halt_cannot_be_journaled(
        tmp_path: Path, shoe: RawShoe) -> None:
    """The halt was only emitted and the frame acknowledged whatever came of it: with the journal failing
    (here: locked by another writer past SQLite's 5 s wait) the 9H the renumbered shoe sent under SEQ 1 was
    acknowledged, so the shoe forgot it, and no halt was journaled: the restarted daemon played on, 9H lost
    unseen. The daemon says itself that after a journal fault no shoe frame is acknowledged."""
    config = shoe_table(tmp_path, shoe)
    with _running(config):
        _deal(shoe, "2C")
        # SEQ 1 again, another card: dropped, a halt
        assert not _acked_while_locked(config, shoe, 1, "9H"), (
            "the dropped 9H was acknowledged though its halt was never journaled")
    assert _cards(config) == ["2C"]


def test_a_stale_frame_is_not_acknowledged_while_its_halt_cannot_be_journaled(
        tmp_path: Path, shoe: RawShoe) -> None:
    """The same for a stale SEQ (a shoe numbering from 1 again without a HELLO)."""
    config = shoe_table(tmp_path, shoe)
    with _running(config):
        _deal(shoe, "2C", "3C")
        assert not _acked_while_locked(config, shoe, 1, "9H"), (
            "the stale 9H was acknowledged though its halt was never journaled")


def test_after_a_restart_another_card_under_the_cursors_seq_is_no_resend(
        tmp_path: Path, shoe: RawShoe) -> None:
    """The journal holds the cursor's frame as a card (2C at SEQ 1), yet the restarted reader took the first
    frame under SEQ 1 as its resend whatever it carried: the renumbered shoe's 9H was acknowledged and lost
    unseen, play going on, where the same frame without the restart halts the table."""
    config = shoe_table(tmp_path, shoe)
    with _running(config):
        _deal(shoe, "2C")
    shoe.drain(0.2)
    with _running(config) as client:
        shoe.send(1, CardMsg(parse_card("2C")))  # the resend of the cursor's frame: acknowledged, not dealt
        shoe.expect(is_ack(1))
        assert "shoe fault" not in offline(client)
        shoe.send(1, CardMsg(parse_card("9H")))  # another card under that SEQ: dropped, a halt
        shoe.expect(is_ack(1))
        wait_for(lambda: "shoe fault" in offline(client), "the dropped card to halt play")
        assert "frame seq 1 again with another message" in offline(client)["shoe fault"]
    assert _cards(config) == ["2C"]


def test_after_a_restart_the_first_frame_under_the_cursors_seq_is_compared_with_its_card(
        tmp_path: Path, shoe: RawShoe) -> None:
    """As above, the shoe's first frame after the restart being the other card."""
    config = shoe_table(tmp_path, shoe)
    with _running(config):
        _deal(shoe, "2C")
    shoe.drain(0.2)
    with _running(config) as client:
        shoe.send(1, CardMsg(parse_card("9H")))
        shoe.expect(is_ack(1))
        wait_for(lambda: "shoe fault" in offline(client), "the dropped card to halt play")


def test_after_a_restart_another_card_under_the_cursors_seq_is_no_resend_after_a_checkpoint(
        tmp_path: Path, shoe: RawShoe) -> None:
    """A checkpoint is taken right after the input that made it due: at a round's end, after the card that
    ended the round. Its transaction rewrites the cursor row at the last input row, so the card's row was no
    longer read after it and the journal gave no card, though the cursor was still that card's frame: the
    restarted reader took the renumbered shoe's 9H under SEQ 4 for the resend of 2D, acknowledged it and lost
    it unseen, play going on."""
    config = shoe_table(tmp_path, shoe)
    with _running(config) as client:
        shoe.send(0, Hello("Renumber", "1", "R"))
        shoe.expect(is_ack(0))
        for request in ({"cmd": "credit_in", "seat": 1, "amount": 10_000}, {"cmd": "new_shoe"},
                        {"cmd": "open"}, {"cmd": "bet", "seat": 1, "spot": "player", "amount": 1000},
                        {"cmd": "close"}):
            assert client.call(**request)["ok"], request
        for seq, code in enumerate(("4S", "5H", "6C", "2D"), start=1):  # naturals: the round ends
            shoe.send(seq, CardMsg(parse_card(code)))
            shoe.expect(is_ack(seq))
    shoe.drain(0.2)
    # The checkpoint the daemon takes at the round's end once checkpoint.EVERY inputs went by: the same
    # decision (maybe_checkpoint) on the same file, between the two runs.
    journal = Journal.open(config.state_dir, table=config.table_id, game=config.game_name,
                           options=config.options_dict(), fsync=False)
    service = TableService(config, journal, checkpoint_every=1)
    service.replay()  # the replay's own checkpoint, or this one
    service.maybe_checkpoint()
    assert service.table.phase == "idle" and checkpoint.rows(journal.connection) == [journal.last_id]
    journal.close()
    with _running(config) as client:
        shoe.send(4, CardMsg(parse_card("9H")))
        shoe.expect(is_ack(4))
        wait_for(lambda: "shoe fault" in offline(client), "the dropped card to halt play")
        assert "frame seq 4 again with another message" in offline(client)["shoe fault"]
    assert _cards(config) == ["4S", "5H", "6C", "2D"]


def test_a_card_dropped_while_the_shoe_is_jammed_is_journaled_once_beside_the_jam(
        tmp_path: Path, shoe: RawShoe) -> None:
    """The shoe at fault for a jam, then renumbering (another card under the last SEQ): the drop was only
    logged at INFO, the journal holding the jam alone, so a restart or an audit never learned that a card
    left the shoe unseen. Now its words join the jam's in one row; the same error again adds nothing."""
    config = shoe_table(tmp_path, shoe)
    with _running(config) as client:
        _jam(shoe, client)
        rows = client.call("status")["seq"]
        for _ in range(2):
            shoe.send(2, CardMsg(parse_card("9H")))
            shoe.expect(is_ack(2))
        wait_for(lambda: "protocol error" in offline(client)["shoe fault"], "the drop's words")
        assert offline(client)["shoe fault"].startswith("jam")
        assert client.call("status")["seq"] == rows + 1
    faults = [i["detail"] for _, i in journal_inputs(config.state_dir)
              if i["input"] == "device" and i["device"] == "shoe fault"]
    assert len(faults) == 2 and faults[0].startswith("jam")
    assert "; protocol error: frame seq 2 again" in faults[1]
    assert _cards(config) == ["2C"]


def _jam(shoe: RawShoe, client: CommandClient) -> None:
    """2C dealt under SEQ 1, then the shoe's jam (FAULT under SEQ 2), journaled."""
    _deal(shoe, "2C")
    shoe.send(2, Fault(1, "jam"))
    shoe.expect(is_ack(2))
    wait_for(lambda: "shoe fault" in offline(client), "the jam")


def _jammed(tmp_path: Path, shoe: RawShoe) -> TableConfig:
    """:func:`_jam` on a daemon then stopped."""
    config = shoe_table(tmp_path, shoe)
    with _running(config) as client:
        _jam(shoe, client)
    shoe.drain(0.2)
    return config


def test_after_a_restart_a_card_under_the_seq_of_a_journaled_jam_is_no_resend(
        tmp_path: Path, shoe: RawShoe) -> None:
    """As above, the daemon restarted between the jam and the card: the journal's cursor is the jam's
    FAULT frame (SEQ 2), and the first frame under SEQ 2 after a resume was taken for its resend whatever it
    carried, as only a card cursor is compared: the renumbering shoe's 9H was acknowledged and lost, the
    journal holding the jam alone. A card under the SEQ of a frame the journal holds as no card is none of
    its resends: dropped, its words joining the jam's."""
    config = _jammed(tmp_path, shoe)
    with _running(config) as client:
        assert offline(client)["shoe fault"].startswith("jam")
        shoe.send(2, CardMsg(parse_card("9H")))
        shoe.expect(is_ack(2))
        wait_for(lambda: "protocol error" in offline(client)["shoe fault"], "the drop's words", timeout=5)
    assert _cards(config) == ["2C"]


def test_after_a_restart_the_jams_own_resend_is_still_a_resend(tmp_path: Path, shoe: RawShoe) -> None:
    """The jam's FAULT frame again after the restart (its ACK lost): acknowledged, no protocol error."""
    config = _jammed(tmp_path, shoe)
    with _running(config) as client:
        rows = client.call("status")["seq"]
        shoe.send(2, Fault(1, "jam"))
        shoe.expect(is_ack(2))
        assert "protocol error" not in offline(client)["shoe fault"]
        assert client.call("status")["seq"] == rows


def test_after_a_restart_a_card_under_the_seq_of_a_journaled_hello_is_no_resend(
        tmp_path: Path, shoe: RawShoe) -> None:
    """The journal's cursor is the shoe's HELLO (SEQ 0), recorded as a frame without an input (the shoe was
    not at fault: no row carries it). A card under SEQ 0 after the restart is none of its resends, as after a
    jam's FAULT or a HELLO that cleared a fault (a row of no card): it was taken for the HELLO's resend,
    acknowledged and lost unseen, play going on, where the same frame without the restart halts the table."""
    config = shoe_table(tmp_path, shoe)
    with _running(config):
        _deal(shoe)  # acknowledged once its frame is the journal's cursor
    shoe.drain(0.2)
    with _running(config) as client:
        shoe.send(0, CardMsg(parse_card("9H")))
        shoe.expect(is_ack(0))
        wait_for(lambda: "shoe fault" in offline(client), "the dropped card to halt play", timeout=5)
        assert "frame seq 0 again with another message" in offline(client)["shoe fault"]
    assert _cards(config) == []

"""The protocol corners as the table sees them: a raw shoe on a real pty, the real daemon behind it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from test_daemon_support import journal_inputs, write_table
from wait_support import wait_for

from controller.cards import parse_card
from controller.daemon.client import CommandClient, Subscriber, local_key
from controller.daemon.config import TableConfig, load_table
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from drivers.shoe.codec import crc16_ccitt, encode_frame, stuff
from drivers.shoe.messages import CardMsg, Fault, Heartbeat, Hello
from tests.shoe_support import RawShoe, is_ack

pytestmark = pytest.mark.timeout(90)


def shoe_table(tmp_path: Path, shoe: RawShoe) -> TableConfig:
    """A baccarat table whose shoe is the raw shoe's pty (a quick reconnect, no heartbeat timeout)."""
    profile = tmp_path / "shoe.yaml"
    profile.write_text(f"port: {shoe.path}\nprotocol: v1\nbaud: 115200\nheartbeat_timeout: 30.0\n"
                       "reconnect: {initial: 0.05, max: 0.2}\n")
    return load_table(write_table(tmp_path, shoe=str(profile)))


@pytest.fixture
def table(tmp_path: Path, shoe: RawShoe) -> Iterator[CommandClient]:
    config = shoe_table(tmp_path, shoe)
    with DaemonThread(Daemon(config)):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        wait_for(lambda: client.call("status")["shoe_device"]["connected"], "the reader to connect")
        yield client
        client.close()


def offline(client: CommandClient) -> dict[str, Any]:
    result: dict[str, Any] = client.call("status")["offline"]
    return result


def test_lid_open_only_in_heartbeats_halts_the_table(shoe: RawShoe, table: CommandClient) -> None:
    shoe.send(0, Hello("Beats", "1", "B"))
    shoe.send(1, Heartbeat(lid_open=True))
    shoe.expect(is_ack(1))
    wait_for(lambda: "shoe lid" in offline(table), "the lid to halt play")
    for request in ({"cmd": "credit_in", "seat": 1, "amount": 10_000}, {"cmd": "new_shoe"}, {"cmd": "open"},
                    {"cmd": "bet", "seat": 1, "spot": "player", "amount": 1000}):
        assert table.call(**request)["ok"]
    refused = table.call("close")
    assert refused["refused"] and "shoe lid" in refused["error"]
    device = table.call("status")["shoe_device"]
    assert device["flags"]["lid_open"] is True and device["last_heartbeat"]["lid_open"] is True
    shoe.send(2, Heartbeat())
    shoe.expect(is_ack(2))
    wait_for(lambda: not offline(table), "the lid to close")
    assert table.call("close")["ok"]


def test_fault_after_the_sequence_wrapped_clears_on_the_power_cycle_hello(
        shoe: RawShoe, table: CommandClient) -> None:
    """Issue reproduction: the HELLO 0 after a FAULT at SEQ 0 used to be dropped; the fault stayed."""
    shoe.send(0, Hello("Wrap", "1", "W"))
    for seq in range(1, 256):
        shoe.send(seq, Heartbeat())
    shoe.expect(is_ack(255))
    shoe.send(0, Fault(1, "jam"))
    shoe.expect(is_ack(0))
    wait_for(lambda: "shoe fault" in offline(table), "the fault")
    shoe.send(0, Hello("Wrap", "1", "W"))
    shoe.expect(is_ack(0))
    wait_for(lambda: not offline(table), "the HELLO to clear the fault")
    assert table.call("open")["ok"]


def test_undecodable_frame_and_foreign_version_are_shoe_faults(shoe: RawShoe, table: CommandClient) -> None:
    shoe.send(0, Hello("Next", "2", "N", protocol=2))
    shoe.expect(is_ack(0))
    wait_for(lambda: "shoe fault" in offline(table), "the version fault")
    assert "protocol version 2" in offline(table)["shoe fault"]
    shoe.send(1, Hello("Now", "1", "N"))
    shoe.expect(is_ack(1))
    wait_for(lambda: not offline(table), "a version-1 HELLO to clear it")
    head = bytes((2, 0x06, 1, 7))  # LID with state 7: a good CRC, an impossible payload
    shoe.write(b"\x7e" + stuff(head + crc16_ccitt(head).to_bytes(2, "big")) + b"\x7f")
    shoe.expect(is_ack(2))
    wait_for(lambda: "shoe fault" in offline(table), "the protocol error")
    assert "LID state must be 0 or 1" in offline(table)["shoe fault"]
    # The same bad frame again and again (a firmware bug): one journal row, not one per frame (a review,
    # 2026-12-05: each was a row, an event and a warning).
    rows = table.call("status")["seq"]
    for seq in range(3, 8):
        head = bytes((seq, 0x06, 1, 7))
        shoe.write(b"\x7e" + stuff(head + crc16_ccitt(head).to_bytes(2, "big")) + b"\x7f")
        shoe.expect(is_ack(seq))
    shoe.send(8, Heartbeat())
    shoe.expect(is_ack(8))  # taken in order after the five
    assert table.call("status")["seq"] == rows


def test_a_protocol_error_is_a_side_topic_without_seq_that_no_reader_takes_for_an_event(
        tmp_path: Path, shoe: RawShoe) -> None:
    """Issue 24 item 5: an undecodable CARD at shoe SEQ 8 with the table at seq 7 was published with
    ``seq: 8``; readers took it for event 8 and missed the real one (the ``shoe fault`` device event)."""
    config = shoe_table(tmp_path, shoe)
    bundle = json.loads((Path(__file__).parents[1] / "docs/schema/croupier.schema.json").read_text())
    side_schema = jsonschema.Draft202012Validator({"$ref": "#/$defs/side_topic", "$defs": bundle["$defs"]})
    with DaemonThread(Daemon(config)):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        wait_for(lambda: client.call("status")["shoe_device"]["connected"], "the reader to connect")
        shoe.send(0, Hello("Side", "1", "S"))
        shoe.expect(is_ack(0))
        wait_for(lambda: not offline(client), "the shoe's HELLO")
        table_seq = client.call("status")["seq"]
        reader = Subscriber(config.spec.zeromq.pub, config.spec.zeromq.snapshot, config.table_id,
                            timeout=5, side=True)
        seen = reader.events()
        while next(seen)[1].get("event") != "heartbeat":
            pass  # subscribed (a SUB hears nothing published before it joined)
        head = bytes((table_seq + 1, 0x03, 2)) + b"ZZ"  # a CARD that is no card, at SEQ table seq + 1
        shoe.write(b"\x7e" + stuff(head + crc16_ccitt(head).to_bytes(2, "big")) + b"\x7f")
        shoe.expect(is_ack(table_seq + 1))
        status: dict[str, Any] | None = None
        device: dict[str, Any] | None = None
        while status is None or device is None:
            kind, payload = next(seen)
            if kind == "side" and payload["event"] == "shoe_protocol_error":
                status = payload
            elif kind == "event" and payload["event"] == "device":
                device = payload
        assert "seq" not in status and status["frame_seq"] == table_seq + 1, status
        assert side_schema.is_valid(status) and not side_schema.is_valid({**status, "seq": table_seq + 1})
        assert device["seq"] == table_seq + 1 and device["device"] == "shoe fault" and not device["online"]
        reader.close()
        client.close()


def test_a_hello_of_another_protocol_version_does_not_pass_the_self_test(
        tmp_path: Path, shoe: RawShoe) -> None:
    """A shoe that speaks protocol 2 is a shoe fault, and no hello for the self-test either (a review,
    2026-12-05: any good frame counted, so the self-test said "ok: hello seq 0")."""
    config = shoe_table(tmp_path, shoe)
    with DaemonThread(Daemon(config, hello_timeout=2.0)):
        shoe.send(0, Hello("Next", "2", "N", protocol=2))
        shoe.expect(is_ack(0))
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        status = client.call("status")  # answered once the self-test is over
        assert not status["selftest"]["passed"], status["selftest"]
        assert status["selftest"]["checks"]["shoe"].startswith("FAULT: no HELLO from ")
        assert "protocol version 2" in status["offline"]["shoe fault"]
        client.close()


def test_a_run_of_undecodable_frames_moves_the_shoe_cursor_so_no_card_is_lost_across_a_restart(
        tmp_path: Path, shoe: RawShoe) -> None:
    """A review (2026-12-07): undecodable frames were acknowledged without moving the journal's shoe cursor.
    After 255 of them the shoe's numbering came round to the cursor's SEQ; the daemon was restarted, and the
    card the shoe dealt meanwhile, at that SEQ, was taken for the resend of the cursor's frame:
    acknowledged by the greeting and never journaled. Each now counts as any frame towards the cursor."""
    config = shoe_table(tmp_path, shoe)
    with DaemonThread(Daemon(config)):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        wait_for(lambda: client.call("status")["shoe_device"]["connected"], "the reader to connect")
        shoe.send(0, Hello("Bad", "1", "B"))
        shoe.expect(is_ack(0))
        shoe.send(1, CardMsg(parse_card("AS")))
        shoe.expect(is_ack(1))
        for seq in [*range(2, 256), 0]:  # HEARTBEATs with a reserved flag bit: a good CRC, undecodable
            body = bytes((seq, 0x02, 3, 0x08, 0, 0))
            shoe.write(b"\x7e" + stuff(body + crc16_ccitt(body).to_bytes(2, "big")) + b"\x7f")
            shoe.expect(is_ack(seq))
        assert "shoe fault" in offline(client)
        client.close()
    shoe.drain(0.2)
    kd = encode_frame(1, CardMsg(parse_card("KD")))  # dealt while the daemon was down: SEQ 1 after the wrap
    shoe.write(kd)
    with DaemonThread(Daemon(config)):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        for _ in range(100):  # as a shoe does: the frame it holds again until it is acknowledged
            with contextlib.suppress(AssertionError):
                shoe.expect(is_ack(1), timeout=0.3)
                break
            shoe.write(kd)
        cards = lambda: [i["card"] for _, i in journal_inputs(config.state_dir) if i["input"] == "card"]  # noqa: E731
        wait_for(lambda: cards() == ["AS", "KD"], "the card dealt while the daemon was down to be journaled")
        client.close()


def test_a_shoe_numbering_again_without_a_hello_halts_the_table(
        tmp_path: Path, shoe: RawShoe, table: CommandClient) -> None:
    """A review (2026-12-07): a frame older than the last (a shoe restarted without a HELLO) was dropped and
    only reported as damage, play going on: a card there was lost unseen. It is a protocol error: the table
    halts, naming it, until the shoe says HELLO."""
    shoe.send(0, Hello("Renumber", "1", "R"))
    for seq in range(1, 6):
        shoe.send(seq, Heartbeat())
    shoe.expect(is_ack(5))
    shoe.send(1, CardMsg(parse_card("7H")))  # its numbering from 1 again, no HELLO: the card is not taken
    shoe.expect(is_ack(1))
    wait_for(lambda: "shoe fault" in offline(table), "the stale frame to halt play")
    assert "stale frame seq 1 after seq 5" in offline(table)["shoe fault"]
    assert table.call("open")["ok"]
    assert "shoe fault" in table.call("close")["error"]
    state_dir = load_table(tmp_path / "t1.yaml").state_dir  # the table file shoe_table wrote
    assert not [i for _, i in journal_inputs(state_dir) if i["input"] == "card"]
    shoe.send(0, Hello("Renumber", "1", "R"))
    shoe.expect(is_ack(0))
    wait_for(lambda: not offline(table), "the HELLO to clear it")

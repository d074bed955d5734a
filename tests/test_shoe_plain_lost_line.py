"""A plain reader's line that is no card stops play until the dealer says the layout is right.

The plain-line profile cannot ask again for a damaged line: "a line cut short runs into the next one, and
both are lost (b'9C2S')" (docs/shoe-protocol.md). The daemon treated it as every framing error, published
and logged only, "repaired by the protocol (the frame is resent)", which is not so on this profile: two cards
were out of the shoe and on the layout, the deal went on, and the shoe's next card was dealt to the hand one
of the lost cards went to (a review, 2026-12-07). Now such a line is a ``shoe fault`` (a tilt mid-deal, no
close while it lasts) until the dealer's ``shoe reset``, which on a plain line sends nothing and clears it;
a line lost right after the reset, in the same burst of errors, halts again (a second reading: it did not).
A real daemon; the reader is a pty written to as a plain reader would.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_daemon_support import journal_inputs, write_table
from wait_support import wait_for

from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import TableConfig, load_table
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from tests.shoe_support import RawShoe

pytestmark = pytest.mark.timeout(90)

LOST = ("line is not a card: b'9C2S': a card may be lost (a plain line resends nothing): void the round if "
        "one is dealt, then shoe reset")


def plain_table(tmp_path: Path, shoe: RawShoe) -> TableConfig:
    """A baccarat table whose shoe is a plain-line reader on the raw shoe's pty."""
    profile = tmp_path / "shoe.yaml"
    profile.write_text(f"port: {shoe.path}\nprotocol: plain\nbaud: 115200\n"
                       "reconnect: {initial: 0.05, max: 0.2}\n")
    return load_table(write_table(tmp_path, shoe=str(profile)))


def connected(config: TableConfig) -> CommandClient:
    """A client of the running daemon, once its reader has the port open."""
    client = CommandClient(config.spec.zeromq.command, key=local_key(config))
    wait_for(lambda: client.call("status")["shoe_device"]["connected"], "the reader to connect")
    return client


def test_a_plain_line_that_is_no_card_halts_the_deal_until_the_dealer_resets(tmp_path: Path,
                                                                             shoe: RawShoe) -> None:
    config = plain_table(tmp_path, shoe)
    with DaemonThread(Daemon(config)):
        client = connected(config)
        try:
            for request in ({"cmd": "credit_in", "seat": 1, "amount": 10_000}, {"cmd": "new_shoe"},
                            {"cmd": "open"}, {"cmd": "bet", "seat": 1, "spot": "player", "amount": 1000},
                            {"cmd": "close"}):
                assert client.call(**request)["ok"], request

            def cards() -> list[str]:
                return [i["card"] for _, i in journal_inputs(config.state_dir) if i["input"] == "card"]

            shoe.write(b"5C\r\n")
            wait_for(lambda: cards() == ["5C"], "the first card")
            shoe.write(b"9C2S\r\n")  # two cards dealt, their line damaged: both lost
            wait_for(lambda: "shoe fault" in client.call("status")["offline"], "the fault")
            status = client.call("status")
            assert status["offline"] == {"shoe fault": LOST}, status["offline"]
            assert status["tilt"]["reason"] == "device_offline", status["tilt"]
            assert client.call("void")["ok"]  # the dealer: a misdeal
            assert client.call("open")["ok"] and client.call("bet", seat=1, spot="player", amount=1000)["ok"]
            refused = client.call("close")
            assert not refused["ok"] and "shoe fault" in refused["error"], refused
            reset = client.call("shoe", action="reset")
            assert reset["ok"] and reset["sent"] is None, reset
            status = client.call("status")
            assert status["offline"] == {} and status["tilt"] is None, status
            assert client.call("close")["ok"]
            shoe.write(b"AS\r\n")
            wait_for(lambda: cards() == ["5C", "AS"], "the next round's first card")
        finally:
            client.close()
    devices = [(i["device"], i["online"], i["detail"]) for _, i in journal_inputs(config.state_dir)
               if i["input"] == "device" and i["device"] == "shoe fault"]
    cleared = ("shoe fault", True, "shoe reset by the dealer (plain line)")
    assert devices == [("shoe fault", False, LOST), cleared], devices


def test_a_plain_lines_lost_card_after_the_dealers_reset_halts_again(tmp_path: Path, shoe: RawShoe) -> None:
    """The plain-line fault is journaled on the first framing error of a burst only (``burst == "start"``);
    a burst lasts until a quiet second. A line that is no card right after the dealer's ``shoe reset``, in
    the same burst (a bad cable: the noise goes on), is counted into the burst and never faults: the cards
    it held are lost and play goes on, the case 4aba3e8 set out to stop."""
    config = plain_table(tmp_path, shoe)
    with DaemonThread(Daemon(config)):
        client = connected(config)
        try:
            started = time.monotonic()
            shoe.write(b"9C2S\r\n")
            wait_for(lambda: "shoe fault" in client.call("status")["offline"], "the fault")
            assert client.call("shoe", action="reset")["ok"]
            assert client.call("status")["offline"] == {}
            shoe.write(b"7H3D\r\n")  # two more cards lost, their line damaged
            assert time.monotonic() - started < 0.9, "too slow to be in one burst: the test proves nothing"
            time.sleep(2.5)  # the burst's ongoing report and its end
            status = client.call("status")
            assert status["shoe_device"]["framing_errors"] == 2  # the second line was read, as an error
            offline = status["offline"]
            assert "shoe fault" in offline, f"a second lost line after the reset, and play goes on: {offline}"
        finally:
            client.close()

"""A frame dropped as a protocol error, the daemon killed after its halt's commit and before its ACK.

The worst instant of the drop (docs/shoe-protocol.md, host rule 2): the halt is durable, the frame not
acknowledged, so the shoe sends it again to the next daemon. That resend must not be taken for the resend
of the journal cursor's frame, acknowledged and its card lost with play going on: the table stays halted
and the card is not dealt. The real ``croupier run`` in a subprocess (the fault point kills it), the shoe
played byte by byte on a real pty, the journal a real SQLite file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_daemon_crash import wait_ready
from test_daemon_shoe_corners import offline, shoe_table
from test_daemon_shoe_dropped import _cards, _deal
from test_daemon_support import journal_inputs
from wait_support import wait_for

from controller.cards import parse_card
from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import TableConfig
from drivers.shoe.messages import CardMsg
from tests.shoe_support import RawShoe, is_ack

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[1]


def _start(config: TableConfig, fault: str = "") -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "run", str(config.path), "--log-level", "ERROR"],
        cwd=ROOT, env={**os.environ, "CROUPIER_FAULT": fault}, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE)
    wait_ready(proc, config.spec.zeromq.command, local_key(config))
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


@pytest.mark.parametrize(("card", "action"), [("9H", "kill"), ("9H", "term"), ("2C", "kill")])
def test_a_dropped_frame_resent_after_a_kill_between_its_halt_and_its_ack_is_not_taken_as_a_resend(
        tmp_path: Path, shoe: RawShoe, card: str, action: str) -> None:
    """2C dealt under SEQ 1; after a clean restart the shoe, numbering again without a HELLO, sends 9H under
    SEQ 1 (another card under the cursor's SEQ: dropped, a halt), and the daemon is killed once the halt is
    committed, before the ACK. The next daemon gets the same frame again. With ``term``, a clean stop arrives
    at that instant instead: the frame may be acknowledged as the daemon stops (then the shoe sends nothing
    again), and the halt stands at the next start all the same. With 2C again under SEQ 1 at the second
    start (a true resend of the cursor's frame): acknowledged, nothing dealt, no halt."""
    config = shoe_table(tmp_path, shoe)
    proc = _start(config)
    try:
        _deal(shoe, "2C")
    finally:
        _stop(proc)
    shoe.drain(0.2)
    acked = False
    proc = _start(config, f"shoe_committed:1:{action}")  # the first frame this run commits
    try:
        shoe.send(1, CardMsg(parse_card(card)))
        if card == "2C":  # nothing to commit for a true resend: acknowledged, the fault never fires
            shoe.expect(is_ack(1))
            client = CommandClient(config.spec.zeromq.command, key=local_key(config))
            try:
                assert "shoe fault" not in offline(client)
            finally:
                client.close()
            assert _cards(config) == ["2C"]
            return
        proc.wait(30)
        assert proc.returncode == (-signal.SIGKILL if action == "kill" else 0)
        acked = any(is_ack(1)(f) for f in shoe.drain(0.5))
        assert not (acked and action == "kill"), "acknowledged before the kill"
        halt = journal_inputs(config.state_dir)[-1][1]  # killed after the halt's commit, not before
        assert halt["input"] == "device" and not halt["online"], halt
        assert "frame seq 1 again with another message" in halt["detail"], halt
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    proc = _start(config)
    client = CommandClient(config.spec.zeromq.command, key=local_key(config))
    try:
        if not acked:
            shoe.send(1, CardMsg(parse_card(card)))  # the shoe's resend of the frame never acknowledged
            shoe.expect(is_ack(1))
        wait_for(lambda: "shoe fault" in offline(client), "the halt to stand after the restart")
        assert "frame seq 1 again with another message" in offline(client)["shoe fault"]
    finally:
        client.close()
        _stop(proc)
    assert _cards(config) == ["2C"]

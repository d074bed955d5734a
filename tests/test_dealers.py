"""Dealers: ``dealer_in``/``dealer_out`` in the engine (any phase, refusals that change nothing), kept by
replay and checkpoint, a round's dealer in its recall, and ``croupier ctl dealer-in`` on a real daemon."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_checkpoint import open_service
from test_daemon_support import config_for
from test_table import refused

from controller import inputs as I
from controller.cards import parse_card
from controller.cli import main
from controller.daemon import checkpoint
from controller.daemon.auth import permitted
from controller.daemon.client import local_key
from controller.daemon.commands import CommandError, InputCommand, parse_command
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.dealers import MAX_NAME, name_problem
from tests.helpers import baccarat_table, deal, names

pytestmark = pytest.mark.timeout(60)


def test_a_dealer_taps_in_and_out_in_any_phase_each_with_one_event() -> None:
    table = baccarat_table()
    assert [e.to_dict() for e in table.apply(I.DealerIn("Ann"))] == [{"event": "dealer", "dealer": "Ann"}]
    assert table.snapshot()["dealer"] == "Ann"
    table.apply(I.OpenBetting())
    table.apply(I.PlaceWager(1, "banker", 1000))
    table.apply(I.CloseBetting())
    deal(table, "9H 2C")
    # A relief mid-round: Bob replaces Ann without her tapping out; the round goes on.
    assert [e.to_dict() for e in table.apply(I.DealerIn("Bob"))] == [{"event": "dealer", "dealer": "Bob"}]
    assert (table.phase, table.dealer) == ("dealing", "Bob")
    assert names(deal(table, "5D 3S"))[-1] == "round_settled"
    assert table.apply(I.DealerOut())[0].to_dict() == {"event": "dealer", "dealer": None}
    assert table.snapshot()["dealer"] is None


@pytest.mark.parametrize(("inp", "reason"), [
    (I.DealerIn(""), "cannot be empty"),
    (I.DealerIn(" Ann"), "cannot begin or end with spaces"),
    (I.DealerIn("A" * (MAX_NAME + 1)), f"at most {MAX_NAME} characters"),
    (I.DealerIn("Ann\nBob"), "control characters"),
    (I.DealerIn("Cy"), "Cy is the dealer already"),
    (I.DealerOut(), "no dealer is in"),
])
def test_what_cannot_change_the_dealer_is_refused_and_changes_nothing(inp: I.Input, reason: str) -> None:
    table = baccarat_table()
    if not isinstance(inp, I.DealerOut):
        table.apply(I.DealerIn("Cy"))
    refused(table, inp, reason)


def test_dealer_inputs_read_back_and_the_parser_refuses_a_bad_name_before_the_journal() -> None:
    for inp in (I.DealerIn("Ann Lee"), I.DealerOut()):
        assert I.input_from_dict(json.loads(inp.to_json())) == inp
    with pytest.raises(I.InputError, match="field 'name' must be a string"):
        I.input_from_dict({"input": "dealer_in", "name": 7})
    parsed = parse_command(b'{"cmd": "dealer_in", "name": "Ann", "ref": "d1"}', 7)
    assert isinstance(parsed, InputCommand) and (parsed.input, parsed.ref) == (I.DealerIn("Ann"), "d1")
    for name, said in (("", "cannot be empty"), ("x" * 65, "the limit is 64"), ("Ann ", "spaces")):
        with pytest.raises(CommandError, match=said):
            parse_command(json.dumps({"cmd": "dealer_in", "name": name}).encode(), 7)
    assert permitted("operator", "dealer_in") and permitted("operator", "dealer_out")
    assert not permitted("cashier", "dealer_in") and not permitted("observer", "dealer_out")


def test_the_dealer_survives_replay_and_every_checkpoint_and_each_round_keeps_its_own(tmp_path: Path) -> None:
    """Ann opens round 1, Bob relieves her mid-round and deals round 2: round 1 is Ann's (the dealer in at
    its first seq), round 2 Bob's, from a full replay and from a checkpoint taken after any input."""
    config = config_for(tmp_path)
    live = open_service(config, checkpoint_every=1, checkpoint_keep=10**6, checkpoint_mid_round=True)
    live.replay()
    cards = [I.CardSeen(parse_card(c)) for c in ["9H", "2C", "5D", "3S"]]
    inputs: list[I.Input] = [I.CreditIn(1, 100_000), I.NewShoe(), I.DealerIn("Ann"), I.OpenBetting(),
                             I.PlaceWager(1, "banker", 1000), I.CloseBetting(), *cards[:2], I.DealerIn("Bob"),
                             *cards[2:], I.OpenBetting(), I.PlaceWager(1, "player", 1000), I.CloseBetting(),
                             *cards]
    for inp in inputs:
        live.submit(inp, "command:tester", at=1.0)
    rounds = live.recorder.last(10)
    assert [(r["round"], r["status"], r["dealer"]) for r in rounds] == [(1, "settled", "Ann"),
                                                                          (2, "settled", "Bob")]
    want = (live.table.snapshot(), live.seq, rounds)
    live.journal.close()
    with sqlite3.connect(config.state_dir / "journal.sqlite3") as conn:
        rows = checkpoint.rows(conn)
    assert len(rows) == len(inputs)
    for row in [0, *rows]:  # 0: the whole journal replayed
        again = open_service(config, checkpoint_every=10**9)
        again.replay(checkpoint_at=row)
        assert (again.table.snapshot(), again.seq, again.recorder.last(10)) == want, f"from row {row}"
        again.journal.close()


def test_ctl_dealer_in_and_out_on_a_daemon(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    config = config_for(tmp_path)
    monkeypatch.setenv("CROUPIER_KEY", str(local_key(config).path))
    endpoint = config.spec.zeromq.command

    def ctl(*words: str) -> tuple[int, str]:
        code = main(["ctl", "--endpoint", endpoint, *words])
        return code, capsys.readouterr().out

    with DaemonThread(Daemon(config, use_shoe=False)):
        code, out = ctl("--ref", "shift-1", "dealer-in", "Ann Lee")
        assert code == 0 and "dealer in: Ann Lee" in out, out
        code, out = ctl("--ref", "shift-1", "dealer-in", "Ann Lee")  # a resend: applied once
        assert code == 0 and "already applied" in out, out
        assert ", dealer Ann Lee" in ctl("status")[1]
        assert ctl("open")[0] == 0
        assert "Round 1 (baccarat, in_progress, dealer Ann Lee)" in ctl("recall", "1")[1]
        code, out = ctl("dealer-in", "")
        assert code == 1 and "field 'name': a dealer's name cannot be empty" in out, out
        code, out = ctl("dealer-out")
        assert code == 0 and "dealer out" in out and "no dealer in" in ctl("status")[1], out
        code, out = ctl("dealer-out")
        assert code == 1 and "REFUSED: no dealer is in" in out, out


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=70))
def test_the_parser_and_the_table_judge_any_name_alike(name: str) -> None:
    """A name the parser lets through the table takes; one it refuses (never journaled) the table would."""
    try:
        parsed = parse_command(json.dumps({"cmd": "dealer_in", "name": name}).encode(), 7)
    except CommandError:
        assert name_problem(name) is not None
        assert names(baccarat_table().apply(I.DealerIn(name))) == ["refused"]
        return
    assert isinstance(parsed, InputCommand)
    events = baccarat_table().apply(parsed.input)
    assert [e.to_dict() for e in events] == [{"event": "dealer", "dealer": name}]

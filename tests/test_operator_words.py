"""What an operator reads is words with amounts in the table's currency, never a raw structure (issue 31, 7).

``ctl status``, ``ctl bet``, ``recall``, ``watch``'s notices, ``math one_card_poker``
and ``roads`` on a table of another game; the recall records come from a real
table and the real recorder, the daemon answers over ipc:// with a real journal.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_daemon_support import config_for, write_table

from controller import inputs as I
from controller.cards import parse_card
from controller.cli import main
from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import FIRMWARE_CONFIGS, load_table
from controller.daemon.recall import RoundRecorder
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.games import GAMES
from controller.limits import TableLimits
from controller.money import Currency
from controller.table import Table
from controller.tools.ctl import format_round
from controller.tools.event_text import due_text, format_event
from controller.tools.watch import format_lamps
from signage.display_cmd import settings_of

pytestmark = pytest.mark.timeout(60)
EUR = Currency("EUR", 2)
ROOT = Path(__file__).resolve().parents[1]


def _no_raw_structure(text: str) -> None:
    assert not any(mark in text for mark in ("{", "}", "True", "False", "None")), text


@pytest.fixture
def command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    config = config_for(tmp_path, currency={"code": "EUR", "minor_units": 2})
    monkeypatch.setenv("CROUPIER_KEY", str(local_key(config).path))
    runner = DaemonThread(Daemon(config, use_shoe=False)).start()
    yield config.spec.zeromq.command
    runner.stop()


def ctl(endpoint: str, capsys: pytest.CaptureFixture[str], *words: str) -> str:
    main(["ctl", "--endpoint", endpoint, *words])
    return capsys.readouterr().out


def test_a_bet_answers_the_amount_typed_and_status_says_what_is_due(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for words in (("credit-in", "1", "100"), ("new-shoe",), ("open",), ("bet", "1", "player", "5.00")):
        ctl(command, capsys, *words)
    out = ctl(command, capsys, "bet", "1", "player", "5.00")
    assert "ok: 5.00 bet on seat 1 player" in out and "stake now 10.00; credits 90.00" in out, out
    assert "10.00 bet" not in out  # the spot's total is not said as if it were the amount typed
    out = ctl(command, capsys, "close")
    assert "no more bets; playing: seat 1" in out and "[" not in out.split("\n", 1)[1], out
    out = ctl(command, capsys, "status")
    assert "due: a card for player" in out, out
    _no_raw_structure(out.split("journal:")[0])
    out = ctl(command, capsys, "snapshot") + ctl(command, capsys, "ping")
    assert "state at seq 6: baccarat round 1 dealing; due: a card for player; credits seat 1: 90.00" in out
    assert "ok: the table answers (seq 6; amounts in EUR with 2 decimals)" in out, out
    _no_raw_structure(out)


def test_a_faulted_panel_line_has_no_empty_brackets() -> None:
    line = format_lamps({"fault": True, "dealer": {}, "seats": {}, "tower": {"fault": "blink"}})
    assert line == "lamps: FAULT pattern on every seat | dealer dark | tower fault"


def test_status_names_an_offline_shoe_in_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profile = tmp_path / "shoe.yaml"
    profile.write_text(f"port: {tmp_path / 'no-such-tty'}\nprotocol: v1\nbaud: 115200\n"
                       "heartbeat_timeout: 1.0\nreconnect: {initial: 0.05, max: 0.2}\n")
    config = config_for(tmp_path, shoe=str(profile))
    with DaemonThread(Daemon(config)):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        deadline = time.monotonic() + 20
        while "shoe" not in client.call("status")["offline"]:
            assert time.monotonic() < deadline, "the missing port never made the shoe offline"
            time.sleep(0.05)
        client.close()
        main(["ctl", "--endpoint", config.spec.zeromq.command, "--key", str(local_key(config).path),
              "status"])
    out = capsys.readouterr().out
    assert f"shoe OFFLINE: cannot open {tmp_path / 'no-such-tty'}" in out, out
    _no_raw_structure(out.split("journal:")[0])


def test_recall_marks_refused_inputs_and_says_device_events_in_words() -> None:
    table = Table(GAMES["baccarat"](GAMES["baccarat"].options_model.model_validate({})), TableLimits(seats=7))
    recorder = RoundRecorder()
    play = [I.CreditIn(1, 10_000), I.NewShoe(), I.OpenBetting(),
            I.PlaceWager(1, "player", 0), I.PlaceWager(1, "nowhere", 500),
            I.PlaceWager(1, "player", 99_999_900), I.PlaceWager(1, "player", 500),
            I.CloseBetting(), I.CardSeen(parse_card("9H")),
            I.DeviceStatus("shoe", False, "port error: unplugged")]
    for seq, inp in enumerate(play, start=1):
        recorder.observe(seq, 0.0, "operator", inp, table.apply(inp), table)
    text = "\n".join(format_round(recorder.last(1)[0], EUR))
    assert "place_wager x4 (3 refused)" in text and "open_betting," in text, text
    assert "seat 1 player stake now 5.00" in text
    assert "shoe OFFLINE: port error: unplugged" in text, text
    _no_raw_structure(text)
    assert due_text(table.snapshot()) == "due: nothing until the tilt is resolved"  # not "the next round"


@pytest.mark.parametrize(
    ("what", "detail", "said"),
    [
        ("dealer_peek", {"up": "JD", "blackjack": False}, "dealer peeks under JD: no blackjack"),
        ("dealer_peek", {"up": "AS", "blackjack": True}, "dealer peeks under AS: BLACKJACK"),
        ("odds_win_lost", {"seat": 2, "total": 14, "parity": "even"}, "seat 2 loses the Odds-Win"),
        ("tie", {"seats": [2, 3], "rank": "9"}, "seats 2, 3 tie the DP's 9"),
        ("not_dealt", {"reason": "no primary wager is covered"}, "round not dealt: no primary wager"),
    ],
)
def test_a_notice_reads_as_words(what: str, detail: dict[str, object], said: str) -> None:
    line = format_event({"event": "notice", "seq": 7, "round": 3, "what": what, "detail": detail})
    assert said in line, line
    assert "detail" not in line
    _no_raw_structure(line)


def test_math_one_card_poker_says_the_war_is_even_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "one_card_poker"]) == 0
    out = capsys.readouterr().out
    assert "higher and lower equally likely: a War is even" in out
    _no_raw_structure(out)


def test_roads_on_a_table_of_another_game_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table_file = write_table(tmp_path, game="swap_hand")  # never run: it has no journal
    assert main(["roads", str(table_file)]) == 2
    err = capsys.readouterr().err
    assert "roads are the Baccarat scoreboard; this is a swap_hand table" in err, err
    assert "journal" not in err


def test_scenario_prints_events_in_currency_and_a_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("game: baccarat\ncredits: {1: 10000}\nrounds:\n"
                    "  - bets: {1: {player: 500}}\n    cards: [9C, 9D, KH, KS]\n")
    assert main(["scenario", str(path)]) == 0
    out = capsys.readouterr().out
    assert "SETTLED seat 1 player 5.00 +5.00; house -5.00; credits seat 1: 105.00" in out, out
    assert out.splitlines()[-1] == ("OK: played to the end, 1 round settled; every round's nets and "
                                    "the house's sum to zero; house -5.00")
    _no_raw_structure(out)
    path.write_text(path.read_text().replace("[9C, 9D, KH, KS]", "[9C, 9D, KH]"))
    assert main(["scenario", str(path)]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == "FAILED at round 1: too few cards: a card for banker is due (0 rounds settled before it)"
    assert main(["scenario", str(path), "--json"]) == 1  # machines keep one JSON object per line
    assert '{"event": "error", "round": 1' in capsys.readouterr().out


def test_a_scenario_whose_money_does_not_balance_fails_with_exit_status_1() -> None:
    from controller.money import Currency
    from controller.tools.scenario_cmd import finish

    settled = {"event": "round_settled", "round": 1, "house_net": -499,
               "settlements": [{"seat": 1, "net": 500}]}  # one minor unit made out of nothing
    out = io.StringIO()
    assert finish(out, [settled], Currency(), None) == 1
    assert out.getvalue() == "FAILED: money does not balance in rounds 1\n"
    balanced = {**settled, "house_net": -500}
    assert finish(io.StringIO(), [balanced], Currency(), None) == 0


def test_watch_with_no_daemon_says_nothing_listens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 31, 3: it used to blame a missing key ("no key given") when nothing was running at all."""
    table_file = write_table(tmp_path)  # plain events: watch needs no key
    assert main(["watch", "--table", str(table_file), "--plain", "--idle-exit", "0.5"]) == 1
    err = capsys.readouterr().err
    assert f"nothing answers at ipc://{tmp_path}/t1.snap" in err and "nothing is listening there" in err
    assert "the table's daemon is not running" in err and "key" not in err, err


@pytest.mark.parametrize("command", [["ctl", "status"], ["watch", "--plain", "--idle-exit", "0.5"]])
def test_a_missing_key_file_is_named_as_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    missing = tmp_path / "alice.key_secret"
    assert main([command[0], "--key", str(missing), *command[1:]]) == 2
    err = capsys.readouterr().err
    assert f"{missing}: no such file" in err and "CURVE certificate" not in err, err


def test_journal_help_names_the_export_fields_one_way(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 31, 9: the help said (row, time, ...) in one place and (row, at, ...) in another."""
    with pytest.raises(SystemExit):
        main(["journal", "--help"])
    named = set(re.findall(r"\((row, [a-z, ]+)\)", " ".join(capsys.readouterr().out.split())))
    documented = re.search(r'JSON lines `\{("row"[^}]*)\}`', (ROOT / "docs" / "daemon.md").read_text())
    assert documented is not None
    assert named == {documented.group(1).replace('"', "")}, named


def test_the_display_docs_show_the_limits_as_the_page_writes_them() -> None:
    """Issue 31, 9: a screenshot shows "Min €1" where the page shows "€1.00"; docs/display.md says so."""
    limits = settings_of(load_table(FIRMWARE_CONFIGS / "tables" / "baccarat_sim.yaml"))["limits_text"]
    text = " ".join((ROOT / "docs" / "display.md").read_text().split())
    assert f"Min {limits['min_bet']} · Max {limits['max_bet']}" in text


def test_a_new_shoe_is_named_by_its_number() -> None:
    line = format_event({"event": "new_shoe", "seq": 9, "round": 0, "decks": 8, "shoe_number": 3})
    assert "new shoe 3: 8 decks" in line, line

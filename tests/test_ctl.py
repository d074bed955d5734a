"""``croupier ctl`` as an operator uses it: one money format in and out, refusals and tilts not silent.

A real daemon (journal in a temp dir, command socket on ipc://) and the real
``croupier`` entry point; what is checked is what the operator reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_daemon_support import config_for

from controller.cli import main
from controller.daemon.client import local_key
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.money import Currency
from controller.tools.ctl import build_request
from controller.tools.event_text import meters_text

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    config = config_for(tmp_path, currency={"code": "EUR", "minor_units": 2})
    monkeypatch.setenv("CROUPIER_KEY", str(local_key(config).path))  # as an operator would export it
    runner = DaemonThread(Daemon(config, use_shoe=False)).start()
    yield config.spec.zeromq.command
    runner.stop()


def ctl(endpoint: str, capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
    code = main(["ctl", "--endpoint", endpoint, *words])
    out, err = capsys.readouterr()
    return code, out, err


def test_an_operator_session_shows_one_money_format(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = ctl(endpoint, capsys, "credit-in", "1", "1000")
    assert code == 0 and "credit in 1,000.00; credits 1,000.00" in out
    assert ctl(endpoint, capsys, "new-shoe")[0] == 0
    assert ctl(endpoint, capsys, "open")[0] == 0
    code, out, _ = ctl(endpoint, capsys, "bet", "1", "banker", "5")
    assert code == 0 and "banker stake now 5.00; credits 995.00" in out
    code, out, _ = ctl(endpoint, capsys, "bet", "1", "player", "2.50")
    assert code == 1 and "REFUSED" in out and "player wager 2.50 is not a multiple of the unit 1.00" in out
    code, out, _ = ctl(endpoint, capsys, "status")
    assert "seat 1: 995.00" in out and "wager: seat 1 banker 5.00" in out
    assert ctl(endpoint, capsys, "close")[0] == 0
    for card in ("9H", "2C", "5D", "3S"):  # player 9+5=4, banker 2+3=5: naturals none, both draw rules
        assert ctl(endpoint, capsys, "card", card)[0] == 0
    while "card" in (json.loads(_json(endpoint, capsys, "status"))["due"] or {}):
        assert ctl(endpoint, capsys, "card", "TC")[0] == 0
    code, out, _ = ctl(endpoint, capsys, "meters")
    assert code == 0 and "credits_in 1,000.00" in out and "wagered 5.00" in out
    code, out, _ = ctl(endpoint, capsys, "recall", "1")
    assert code == 0 and "wager  seat 1 banker stake now 5.00" in out
    assert "credits before: seat 1: 1,000.00" in out
    assert "{" not in out  # results as words, not JSON
    raw = json.loads(_json(endpoint, capsys, "meters"))
    assert raw["seats"]["1"]["credits_in"] == 100000  # JSON keeps integer minor units


def _json(endpoint: str, capsys: pytest.CaptureFixture[str], *words: str) -> str:
    code = main(["ctl", "--endpoint", endpoint, "--json", *words])
    out = capsys.readouterr().out
    assert code in (0, 1)
    return out


@pytest.mark.parametrize("typed", ["5,00", "5.001", "-5", "five", "500c"])
def test_a_mistyped_amount_is_refused_before_it_is_sent(
    endpoint: str, capsys: pytest.CaptureFixture[str], typed: str
) -> None:
    code, out, err = ctl(endpoint, capsys, "credit-in", "1", typed)
    assert code == 2 and out == ""
    expected = f"an amount is written like 5 or 5.00 (EUR, 2 decimals at most), not {typed!r}"
    assert f"credit-in: AMOUNT: {expected}" in err
    assert json.loads(_json(endpoint, capsys, "status"))["credits"] == {}  # nothing reached the table


def test_a_card_that_tilts_the_table_is_not_ok(endpoint: str, capsys: pytest.CaptureFixture[str]) -> None:
    ctl(endpoint, capsys, "credit-in", "1", "100")
    ctl(endpoint, capsys, "new-shoe")
    ctl(endpoint, capsys, "open")
    code, out, _ = ctl(endpoint, capsys, "card", "TH")  # betting is open: no card is due
    assert code == 3
    assert out.splitlines()[1].startswith("TILT (card_not_due)") and "burn" in out and "void" in out


@pytest.mark.parametrize(("typed", "said"), [("99999", "99,999.00"), ("0", "0.00")])
def test_an_amount_out_of_bounds_is_refused_in_the_tables_currency(
    endpoint: str, capsys: pytest.CaptureFixture[str], typed: str, said: str
) -> None:
    code, out, err = ctl(endpoint, capsys, "bet", "1", "banker", typed)
    text = out + err
    assert code != 0
    assert f"amount {said} is outside 0.01..10,000.00 (the table's max_bet)" in text, text
    assert "9999900" not in text and "1000000" not in text  # no minor units where a person reads


@pytest.mark.parametrize("seat", ["1_0", "\u0661", "+1", "-1", "1.0", " "])
def test_a_seat_is_typed_in_ascii_digits_only(seat: str) -> None:
    """int() took "1_0" for seat 10 and an Arabic-Indic one for seat 1 (a helper's review, 2026-12-07)."""
    with pytest.raises(ValueError, match="SEAT must be a whole number"):
        build_request(["credit-in", seat, "5"], Currency())
    assert build_request(["credit-in", "10", "5"], Currency())["seat"] == 10


@pytest.mark.parametrize("typed", ["{not json", '{"cmd": "status"'])
def test_malformed_raw_json_is_said_as_the_daemon_says_it(
    typed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """It printed the bare Python message (``Expecting property name ...: line 1 column 2 (char 1)``)
    (a new-user review, 2026-12-07); checked before anything is sent, so no daemon is needed."""
    assert main(["ctl", "--endpoint", "tcp://127.0.0.1:9", "--raw", typed]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("croupier ctl: --raw: malformed JSON: ") and "at character" in err
    assert err.count("\n") == 1  # one line, as every error of ctl


def test_a_zero_house_net_reads_without_a_double_space() -> None:
    """``house net  0.00``: the space a zero's sign would take read as a typo (a new-user review)."""
    reply = {"totals": {"rounds_settled": 1, "rounds_voided": 0, "house_net": 0}, "seats": {}}
    assert meters_text(reply, Currency())[1] == "table: rounds settled 1, voided 0, house net 0.00"

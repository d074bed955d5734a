"""Fuzzing the parsers of values a person types (command-line options, environment variables, amounts):
each gives its value or its documented error naming what was wrong, never another exception, and a value
it gives back reads back as written where a writer exists (docs/testing.md; the standard: "fuzzing for
every parser of outside bytes")."""

from __future__ import annotations

import argparse
import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from controller.cards import DECK, CardError, parse_card, parse_cards
from controller.daemon.faults import POINTS, FaultSpecError
from controller.daemon.faults import parse as parse_faults
from controller.floor.gaming_day import parse_starts
from controller.money import AmountError, Currency, Odds, OddsError
from controller.tools.demo_setup import first_port, rounds_count, seconds
from drivers.gpio.control import ControlError, parse_endpoint
from signage.display_cmd import parse_listen
from vision.calibrate import CalibrationError, parse_points

pytestmark = pytest.mark.timeout(60)

FUZZ = settings(max_examples=300, deadline=None, derandomize=True)

#: Digits beyond ASCII that str.isdigit() or int() take or refuse (superscripts, Arabic-Indic, full-width).
ODD_DIGITS = "0123456789\u00b2\u00b3\u00b9\u0660\u0665\u06f5\u0966\uff15\u2460"
number_ish = st.text(alphabet=ODD_DIGITS + ".,:-+eE _nainf[]/tcp", max_size=30)
texts = st.one_of(st.text(max_size=40), number_ish)
#: Past int()'s 4300 digits: int() raises its own ValueError (naming sys.set_int_max_str_digits).
HUGE = "1" * 5000


@FUZZ
@given(texts, st.integers(0, 4))
@example(HUGE, 2)
@example(HUGE + ".00", 2)
@example("1" * 4301, 0)
def test_an_amount_is_minor_units_or_an_amount_error(text: str, units: int) -> None:
    cur = Currency("EUR", units)
    try:
        minor = cur.parse(text)
    except AmountError as exc:
        assert repr(text)[:20] in str(exc) or "ambiguous" in str(exc), exc
    else:
        assert minor >= 0
        assert cur.parse(cur.format(minor)) == minor


@FUZZ
@given(st.one_of(texts, st.integers(), st.none(), st.floats(), st.booleans()))
@example("9:" + HUGE)
def test_odds_are_odds_or_an_odds_error(value: object) -> None:
    try:
        odds = Odds.parse(value)
    except OddsError as exc:
        assert "odds" in str(exc)
    else:
        assert Odds.parse(str(odds)) == odds


@FUZZ
@given(st.one_of(texts, st.sampled_from([c.code for c in DECK]).map(lambda c: f" {c.lower()} ")))
def test_a_card_is_a_card_or_a_card_error(text: str) -> None:
    try:
        card = parse_card(text)
    except CardError as exc:
        assert repr(text) in str(exc)
    else:
        assert parse_card(card.code) is card
    try:
        parse_cards(text)
    except CardError as exc:
        assert "not a card" in str(exc)


fault_parts = st.tuples(st.sampled_from(sorted(POINTS)) | st.text(max_size=8), number_ish,
                        st.sampled_from(["", "kill", "term", "eio"]) | st.text(max_size=5))


@FUZZ
@given(st.lists(fault_parts, max_size=4).map(lambda ps: ",".join(":".join(p) for p in ps)) | texts)
@example(f"journal_write:{HUGE}:kill")
@example("journal_write:\u00b2:kill")
def test_a_fault_spec_is_a_table_or_a_fault_spec_error(spec: str) -> None:
    try:
        table = parse_faults(spec)
    except FaultSpecError as exc:
        assert str(exc).startswith("CROUPIER_FAULT: "), exc
    else:
        assert all(name in POINTS and n >= 1 for name, (n, _) in table.items())


@FUZZ
@given(texts)
@example("23:59")
@example(" 7:05 ")
def test_the_gaming_day_cut_off_is_a_time_or_an_argument_error(text: str) -> None:
    try:
        t = parse_starts(text)
    except argparse.ArgumentTypeError as exc:
        assert "HH:MM" in str(exc)
    else:
        assert parse_starts(t.strftime("%H:%M")) == t


@FUZZ
@given(texts)
@example(HUGE)
@example("\u00b2")
def test_demo_numbers_are_numbers_or_argument_errors(text: str) -> None:
    for read, ok in ((rounds_count, lambda v: v >= 1), (seconds, lambda v: math.isfinite(v) and v >= 0),
                     (first_port, lambda v: 1 <= v <= 65535)):
        try:
            value = read(text)
        except argparse.ArgumentTypeError as exc:
            assert repr(text)[:20] in str(exc)
        else:
            assert ok(value), (read, value)


endpoints = st.builds(lambda scheme, host, port: f"{scheme}://{host}:{port}",
                      st.sampled_from(["tcp", "ipc", "TCP", ""]),
                      st.sampled_from(["127.0.0.1", "localhost", "[::1]", "[::1", "10.0.0.1", ""]),
                      number_ish)


@FUZZ
@given(endpoints | texts)
@example("tcp://127.0.0.1:99999")
@example("tcp://[::1:5")
@example("tcp://127.0.0.1:x1")
def test_a_control_endpoint_is_loopback_or_a_control_error(text: str) -> None:
    try:
        host, port = parse_endpoint(text)
    except ControlError as exc:
        assert "control endpoint" in str(exc), exc
    else:
        assert host in ("127.0.0.1", "localhost", "::1") and 0 <= port <= 65535


@FUZZ
@given(st.builds(lambda h, p: f"{h}:{p}", st.sampled_from(["", "127.0.0.1", "[::1]", "0.0.0.0"]), number_ish)
       | texts)
@example("127.0.0.1:\u00b2")
@example("127.0.0.1:" + HUGE)
def test_a_listen_address_is_host_and_port_or_an_error_naming_listen(text: str) -> None:
    try:
        host, port = parse_listen(text)
    except ValueError as exc:
        assert str(exc).startswith("--listen: "), exc
    else:
        assert 0 <= port <= 65535 and host


@FUZZ
@given(st.lists(st.tuples(number_ish, number_ish).map(",".join), max_size=5).map(" ".join) | texts)
@example("1,2,3 4,5")
def test_corners_are_pixel_points_or_a_calibration_error(text: str) -> None:
    """``--corners``: points, or CalibrationError naming the option. (A NaN or infinite point is taken
    here and refused by calibrate()'s bounds check, which names --corners too.)"""
    try:
        points = parse_points(text)
    except CalibrationError as exc:
        assert "--corners" in str(exc)
    else:
        assert all(isinstance(x, float) and isinstance(y, float) for x, y in points), points


def test_the_strategies_reach_both_outcomes() -> None:
    """The fuzzing above is not all refusals: a valid value of each kind is taken."""
    assert Currency("EUR", 2).parse("1,000.50") == 100050
    assert parse_faults("journal_write:3:eio") == {"journal_write": (3, "eio")}
    assert parse_endpoint("tcp://127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_listen("[::1]:8080") == ("::1", 8080)
    assert parse_points("1,2 3,4") == [(1.0, 2.0), (3.0, 4.0)]

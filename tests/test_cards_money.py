"""Cards parse leniently and print canonically; money is integer and floored."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.cards import DECK, CardError, parse_card, parse_cards
from controller.composition import ShoeComposition
from controller.money import AmountError, Currency, Odds, OddsError, half_lost


@pytest.mark.parametrize(
    ("text", "code"),
    [("AS", "AS"), ("as", "AS"), ("10h", "TH"), ("10H", "TH"), ("td", "TD"), (" 9c ", "9C"), ("kD", "KD")],
)
def test_parse_any_case_and_ten(text: str, code: str) -> None:
    assert parse_card(text).code == code
    assert str(parse_card(text)) == code


@pytest.mark.parametrize("text", ["", "A", "1S", "11H", "AX", "ZZ", "10", "ASS", "0S"])
def test_not_a_card_is_refused_with_the_text_quoted(text: str) -> None:
    with pytest.raises(CardError, match="not a card"):
        parse_card(text)


def test_deck_is_52_distinct_interned_cards() -> None:
    assert len({c.code for c in DECK}) == 52
    assert all(DECK[i].index == i for i in range(52))
    assert parse_card("qh") is parse_card("QH")
    assert [c.code for c in parse_cards("AS 10d 2c")] == ["AS", "TD", "2C"]


@given(st.sampled_from(DECK))
def test_canonical_text_round_trips(card: object) -> None:
    assert parse_card(str(card)) is card


def test_odds_parse_and_floor() -> None:
    assert Odds.parse("19:20").win(250) == 237  # 237.5 floored: the house keeps the half
    assert Odds.parse("9:1").win(100) == 900
    assert Odds.parse(" 6 : 5 ").win(1010) == 1212
    assert half_lost(501) == -251  # the house keeps the odd cent
    assert half_lost(500) == -250


@pytest.mark.parametrize("bad", [541, 9.1, None, "9-1", "9:", ":1", "9:0", "a:b"])
def test_bad_odds_are_refused(bad: object) -> None:
    with pytest.raises(OddsError):
        Odds.parse(bad)


@pytest.mark.parametrize("bad", ["\u0669:1", "1\u0660:1", "9:\u0661", "\uff19:1", "\u0663:\u0662"])
def test_odds_in_other_scripts_digits_are_refused(bad: str) -> None:
    """Only ASCII digits are odds: ``int()`` reads an Arabic-Indic or a full-width digit, so ``1٠:1`` (the
    zero drawn as a dot) paid 10:1 where a reader of the table file sees 1.:1, as amounts were refused."""
    with pytest.raises(OddsError, match="odds must look like"):
        Odds.parse(bad)


@given(st.integers(0, 10**9), st.integers(0, 1000), st.integers(1, 1000))
def test_win_never_exceeds_the_exact_fraction(stake: int, num: int, den: int) -> None:
    won = Odds(num, den).win(stake)
    assert won * den <= stake * num < (won + 1) * den


def test_composition_counts_and_impossible_cards() -> None:
    shoe = ShoeComposition(2)
    ace = parse_card("AS")
    for _ in range(2):
        assert shoe.is_possible(ace)
        shoe.see(ace)
    assert not shoe.is_possible(ace)
    shoe.see(parse_card("2C"), burn=True)
    assert (shoe.dealt, shoe.burned, shoe.remaining()) == (2, 1, 101)
    shoe.shuffle()
    assert shoe.is_possible(ace) and shoe.remaining() == 104


@given(st.integers(1, 10_000), st.integers(1, 59))
def test_unquoted_odds_error_quotes_what_was_written(num: int, den: int) -> None:
    # YAML 1.1 (PyYAML) reads an unquoted n:d as the base-60 number n*60+d.
    import yaml

    value = yaml.safe_load(f"odds: {num}:{den}")["odds"]
    with pytest.raises(OddsError, match=f"'{num}:{den}'"):
        Odds.parse(value)


@given(st.integers(-10**12, 10**12), st.integers(0, 4))
def test_amounts_read_back_as_shown(minor: int, units: int) -> None:
    cur = Currency("EUR", units)
    shown = cur.format(minor)
    assert cur.parse(shown.lstrip("-")) == abs(minor)
    assert cur.signed(minor).strip().lstrip("+") == (shown if minor else cur.format(0))


@pytest.mark.parametrize(
    ("text", "minor"), [("5", 500), ("5.00", 500), ("5.5", 550), ("995.00", 99500), ("1,000.50", 100050)]
)
def test_typed_amounts(text: str, minor: int) -> None:
    assert Currency("EUR", 2).parse(text) == minor


@pytest.mark.parametrize("bad", ["5,00", "5.001", "-5", "five", "", "5.", ".5", "1,00,000", "5 00", "1e3",
                                 "0,500", "00,001", "1\u0660500", "\u0665", "\uff15"])
def test_mistyped_amounts_are_refused_with_the_text(bad: str) -> None:
    with pytest.raises(AmountError, match="an amount is written like 5 or 5.00"):
        Currency("EUR", 2).parse(bad)


def test_a_thousands_comma_is_never_a_decimal_comma_misread() -> None:
    """A group led by 0 (``0,500``: half a unit, typed with a decimal comma) was read as 500, and digits of
    other scripts (an Arabic-Indic zero looks like a dot) were taken; at 3 decimals ``5,000`` is five
    thousand to some and five to others: its decimals are asked for (a helper's review, 2026-12-07)."""
    dinar = Currency("KWD", 3)
    with pytest.raises(AmountError, match="ambiguous at 3 decimals"):
        dinar.parse("5,000")
    assert dinar.parse("5,000.000") == dinar.parse("5000") == 5_000_000
    assert dinar.parse("0.500") == 500
    assert Currency("EUR", 2).parse("1,000.50") == 100_050 and Currency("JPY", 0).parse("1,000") == 1000


def test_amounts_without_minor_units() -> None:
    yen = Currency("JPY", 0)
    assert yen.format(1500) == "1,500"
    assert yen.parse("1500") == 1500
    with pytest.raises(AmountError, match=r"like 5 \(JPY, 0 decimals"):
        yen.parse("15.00")


def test_formatting() -> None:
    cur = Currency()
    assert cur.format(99500) == "995.00"
    assert cur.format(-5) == "-0.05"
    assert cur.signed(-500) == "-5.00"
    assert cur.signed(0) == "0.00"  # a push: no sign and no space for one ("house net  0.00" read oddly)
    assert cur.signed(12345678) == "+123,456.78"


def test_leading_zeros_are_no_size() -> None:
    """A review (2026-12-07): the digit count that keeps an amount under 2**63 - 1 minor units counted
    leading zeros, so ``00000000000000000005`` was refused as too large; it is 5."""
    cur = Currency()
    assert cur.parse("0" * 19 + "5") == 500 and cur.parse("00.01") == 1
    with pytest.raises(AmountError, match="too large"):
        cur.parse("9" * 20)

"""The 2WayWinner tools: the exact Dealer Bonus sheet, checked against the evaluator, and the simulator."""

from __future__ import annotations

import json
import random
from fractions import Fraction
from itertools import combinations_with_replacement
from pathlib import Path

import pytest

from controller.cards import DECK, Card
from controller.cli import main
from controller.games.two_way_winner.options import DealerBonusPayTable, community_bonus
from controller.games.two_way_winner.par_sheet import ALL_HANDS, bonus_class_counts, load_paytable, par_sheet
from controller.games.two_way_winner.policy import check_or_bet, choose
from controller.money import Odds
from controller.tools.children import croupier_command


def test_class_counts_are_the_known_five_card_counts() -> None:
    counts = bonus_class_counts()
    assert counts == {
        "royal_flush": 4, "straight_flush": 36, "four_of_a_kind": 624, "full_house": 3744,
        "flush": 5108, "straight": 10200, "three_of_a_kind": 54912, "two_pair": 123552,
        "jacks_or_better": 4 * 84480, None: 1098240 - 4 * 84480 + 1302540,
    }
    assert sum(counts.values()) == ALL_HANDS == 2_598_960


def test_counting_agrees_with_the_evaluator_on_every_rank_pattern() -> None:
    """One hand per rank multiset (and a flush per distinct-rank set), classed by the engine's evaluator."""
    rng = random.Random(3)
    by_rank: dict[int, list[Card]] = {}
    for card in DECK:
        by_rank.setdefault(card.rank_value, []).append(card)
    expect = {k: 0 for k in bonus_class_counts()}
    seen: dict[str | None, int] = dict.fromkeys(expect, 0)
    for ranks in combinations_with_replacement(range(2, 15), 5):
        if max(ranks.count(r) for r in ranks) > 4:
            continue
        cards: list[Card] = []
        for r in set(ranks):
            cards += rng.sample(by_rank[r], ranks.count(r))
        if len(set(cards)) == 5 and len({c.suit for c in cards}) == 1:
            cards[0] = next(c for c in by_rank[cards[0].rank_value] if c.suit != cards[1].suit)
        _, key = community_bonus(cards)
        seen[key] += 1
        if len(set(ranks)) == 5:
            suited = [next(c for c in by_rank[r] if c.suit == "H") for r in ranks]
            _, flush_key = community_bonus(suited)
            seen[flush_key] += 1
    # Rank patterns per class: 10 straights, 1277 other distinct sets, 156 quads, ...
    assert seen == {
        "royal_flush": 1, "straight_flush": 9, "four_of_a_kind": 156, "full_house": 156, "flush": 1277,
        "straight": 10, "three_of_a_kind": 858, "two_pair": 858, "jacks_or_better": 4 * 220,
        None: 1277 + 2860 - 4 * 220,
    }


def test_default_table_return_house_edge_and_hit_rate() -> None:
    sheet = par_sheet(DealerBonusPayTable())
    assert f"{100 * float(sheet['return']):.4f}" == "92.7831"
    assert f"{100 * float(sheet['house_edge']):.4f}" == "7.2169"
    assert f"{100 * float(sheet['hit_rate']):.2f}" == "20.63"
    assert sheet["return"] == Fraction(2_411_396, ALL_HANDS)


def test_changed_table_changes_the_return_by_exactly_its_lines() -> None:
    table = load_paytable(None, ["full_house=30:1", "two_pair=lose"])
    assert table.full_house == Odds(30, 1) and table.two_pair is None
    base, changed = par_sheet(DealerBonusPayTable())["return"], par_sheet(table)["return"]
    assert base - changed == Fraction(3744 * 10 + 123552 * 6, ALL_HANDS)


def test_table_file_then_command_line(tmp_path: Path) -> None:
    path = tmp_path / "table.yaml"
    path.write_text(
        "game: two_way_winner\noptions:\n  dealer_bonus_paytable: {flush: '25:1', straight: '10:1'}\n"
    )
    table = load_paytable(str(path), ["straight=12:1"])
    assert (table.flush, table.straight, table.royal_flush) == (Odds(25, 1), Odds(12, 1), Odds(1000, 1))
    path.write_text("options:\n  dealer_bonus_paytable: {flush: 25:1}\n")  # unquoted: YAML's 1501
    with pytest.raises(ValueError, match="dealer_bonus_paytable.flush: odds must be a quoted string"):
        load_paytable(str(path), [])


def test_math_command_prints_the_bonus_sheet_and_refuses_unknown_keys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["math", "two_way_winner", "--bonus"]) == 0
    out = capsys.readouterr().out
    assert "return     92.7831 %" in out and "hit rate   20.63 %" in out
    assert main(["math", "two_way_winner", "--bonus", "--paytable", "fullhouse=30:1"]) == 2
    assert "dealer_bonus_paytable.fullhouse: unknown key" in capsys.readouterr().err
    assert main(["math", "two_way_winner", "--json", "--paytable", "jacks_or_better=lose"]) == 0
    sheet = json.loads(capsys.readouterr().out)
    assert sheet["hit_rate"] == str(Fraction(536100 - 337920, ALL_HANDS))


def test_simulation_through_the_engine(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["simulate", "two_way_winner", "--rounds", "400", "--seed", "2", "--seats", "3", "--with-bonus"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "house edge per unit of total ante" in out and "Dealer Bonus return" in out
    shares = {line.split()[0]: float(line.split()[1]) for line in out.splitlines() if line.endswith(" %")
              and line.split()[0] in ("blackjack", "poker", "surrender", "take_natural")}
    assert set(shares) == {"blackjack", "poker", "surrender", "take_natural"}
    assert abs(sum(shares.values()) - 100) < 0.05
    # The same seed plays the same rounds.
    assert main(args) == 0
    assert capsys.readouterr().out == out


def test_policy_choices() -> None:
    def cards(text: str) -> list[Card]:
        return [next(c for c in DECK if c.code == t) for t in text.split()]

    up6, up_ace = cards("6D")[0], cards("AD")[0]
    assert choose(cards("AS KH"), up6, ("poker", "take_natural")) == "take_natural"
    assert choose(cards("TS 9H"), up_ace, ("blackjack", "poker")) == "blackjack"
    assert choose(cards("7S 7H"), up6, ("blackjack", "poker", "surrender")) == "poker"
    assert choose(cards("TS 3H"), up6, ("blackjack", "poker", "surrender")) == "blackjack"
    assert choose(cards("TS 3H"), up_ace, ("blackjack", "poker")) == "poker"
    assert choose(cards("TS 3H"), up6, ("surrender",)) == "surrender"
    assert check_or_bet(cards("AS KH"), cards("KD 7C"), True, 100, ("check", "bet"), 200) == ("bet", 200)
    # A paired natural whose credits cover one ante bets the ante: the round refuses twice (the lamp's rule).
    assert check_or_bet(cards("AS KH"), cards("KD 7C"), True, 100, ("check", "bet"), 199) == ("bet", 100)
    assert check_or_bet(cards("9S 3H"), cards("KD 7C"), False, 100, ("check", "bet"), 900) == ("check", None)
    assert check_or_bet(cards("9S 3H"), cards("9D 7C"), False, 100, ("check",), 900) == ("check", None)


def test_math_with_rounds_gives_the_bonus_exactly_and_the_game_by_simulation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from controller.cli import build_parser

    defaults = build_parser().parse_args(["math", "two_way_winner"])
    assert defaults.rounds is None and not defaults.bonus  # the exact sheet needs no option
    assert main(["math", "two_way_winner", "--rounds", "300", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "Dealer Bonus (exact)" in out and "house edge 7.2169 %" in out
    assert "method: simulation (Monte Carlo) through the real engine, 300 rounds x 1 seat, seed 3" in out
    edge_line = next(line for line in out.splitlines() if line.startswith("house edge per unit of total"))
    assert "95 % interval" in edge_line
    assert f"command: {croupier_command()} math two_way_winner --rounds 300 --seed 3" in out

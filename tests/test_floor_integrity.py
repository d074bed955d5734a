"""Issue 27's integrity rules on data: shoe counts, false shuffles and results drift name what is wrong.

The rules are pure functions (controller/floor/integrity), so each is given a seeded shoe or a seeded
run of rounds and must flag exactly the tampered ones. The false-alarm rate on 100,000 shoes is the
bench's (bench/false_shuffle.py), not a test's; here a few shuffled shoes must stay quiet.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from controller.cards import Card, parse_card
from controller.floor.integrity.drift import (
    chi_squared,
    last_rounds_outside,
    laws,
    results_drift,
    rounds_to_detect,
)
from controller.floor.integrity.shoe_count import count_shoe
from controller.floor.integrity.shuffle_check import RUN, ShoeHistory
from controller.floor.integrity.stats import binomial_upper_tail, chi_squared_upper_tail
from controller.floor.report_par import ROUND, baccarat_probabilities, par_for, round_terms
from controller.money import Odds
from controller.simulation.false_shuffles import riffle, shuffled, strips, with_run

KS, KH = parse_card("KS"), parse_card("KH")


def test_a_whole_shoe_counts_right_dealt_out_or_cut() -> None:
    cards = shuffled(random.Random(1))
    assert count_shoe(8, cards, 0).ok
    assert count_shoe(8, cards[:400], 16).ok
    assert count_shoe(8, cards[:400], 16).findings() == []


def test_a_card_missing_from_a_dealt_out_shoe_is_named() -> None:
    cards = shuffled(random.Random(2))
    cards.remove(KS)
    count = count_shoe(8, cards, 0)
    assert count.short == 1 and not count.ok
    assert count.findings() == ["1 card missing from 8 decks (415 seen + 0 undealt = 415, not 416): KS"]


def test_a_card_missing_before_the_cut_card_is_counted_but_cannot_be_named() -> None:
    cards = shuffled(random.Random(3))[:400]
    cards.pop(7)
    assert count_shoe(8, cards, 16).findings() == [
        "1 card missing from 8 decks (399 seen + 16 undealt = 415, not 416) "
        "(which cannot be told: the undealt cards were not read)"]


def test_an_added_card_is_counted_and_the_card_seen_too_often_named() -> None:
    cards = shuffled(random.Random(4))
    cards.insert(100, KH)
    count = count_shoe(8, cards, 0)
    assert count.short == -1
    assert count.findings() == ["1 card added to 8 decks (417 seen + 0 undealt = 417, not 416)",
                                "KH seen 9 times; the shoe holds it 8 times"]


def test_a_card_swapped_for_another_names_both_though_the_total_is_right() -> None:
    cards = shuffled(random.Random(5))
    cards[cards.index(KS)] = KH
    count = count_shoe(8, cards, 0)
    assert count.short == 0 and not count.ok
    assert count.findings() == ["KH seen 9 times; the shoe holds it 8 times", "KS seen 1 time too few"]


def history_of(shoes: int, seed: int) -> tuple[ShoeHistory, list[list[Card]], random.Random]:
    rng = random.Random(seed)
    history, earlier = ShoeHistory(), []
    for n in range(shoes):
        cards = shuffled(rng)
        history.add(f"t{n % 4}:j1:{n}", cards)
        earlier.append(cards)
    return history, earlier, rng


def test_shuffled_shoes_raise_no_false_shuffle_alarm() -> None:
    history, _, rng = history_of(40, 6)
    for _ in range(40):
        verdict = history.check(shuffled(rng))
        assert not verdict.false_shuffle, verdict.findings()


def test_a_shoe_dealt_again_in_the_same_order_is_one_run_of_the_whole_shoe() -> None:
    history, earlier, _ = history_of(20, 7)
    verdict = history.check(earlier[13][:400])  # cut card: 16 left undealt this time
    assert verdict.runs[0].earlier == "t1:j1:13"
    assert [(r.start, r.earlier_start, r.length) for r in verdict.runs] == [(0, 0, 400)]
    assert [k.earlier for k in verdict.kept] == ["t1:j1:13"]
    assert verdict.findings()[0] == "400 cards in the same order as shoe t1:j1:13 (cards 1.. here, 1.. there)"


def test_a_shoe_dealt_in_the_reverse_order_of_an_earlier_one_is_a_reverse_run() -> None:
    """The discard rack put back in the shoe upside down, unshuffled."""
    history, earlier, _ = history_of(20, 10)
    verdict = history.check(earlier[2][::-1][:400])
    assert [(r.earlier, r.start, r.earlier_start, r.length, r.reverse) for r in verdict.runs] == [
        ("t2:j1:2", 0, 16, 400, True)]
    assert verdict.findings()[0] == ("400 cards in the reverse order of shoe t2:j1:2 "
                                     "(cards 1.. here, 17.. there)")


def test_twelve_cards_in_an_earlier_order_alarm_and_eleven_do_not() -> None:
    history, earlier, rng = history_of(20, 8)
    twelve = with_run(earlier[5], rng, RUN)
    runs = history.check(twelve).runs
    assert [(r.earlier, r.length) for r in runs] == [("t1:j1:5", RUN)]
    start, at = runs[0].start, runs[0].earlier_start
    assert twelve[start:start + RUN] == earlier[5][at:at + RUN]
    assert count_shoe(8, twelve, 0).ok  # the bench's planted run keeps the shoe whole
    assert not history.check(with_run(earlier[5], rng, RUN - 1)).false_shuffle


@pytest.mark.parametrize("weak", ["one riffle", "four strips"])
def test_a_weak_shuffle_of_an_earlier_shoe_keeps_too_many_of_its_pairs(weak: str) -> None:
    history, earlier, rng = history_of(20, 9)
    cards = riffle(earlier[3], rng) if weak == "one riffle" else strips(earlier[3], rng)
    kept = history.check(cards).kept
    assert [k.earlier for k in kept] == ["t3:j1:3"]
    assert kept[0].kept >= kept[0].threshold > kept[0].expected


def test_the_binomial_and_chi_squared_tails_match_known_values() -> None:
    exact = sum(Fraction(3, 10) ** j * Fraction(7, 10) ** (12 - j) * math.comb(12, j)
                for j in range(7, 13))
    assert binomial_upper_tail(12, 0.3, 7) == pytest.approx(float(exact), rel=1e-12)
    assert chi_squared_upper_tail(13.815510557964274, 2) == pytest.approx(0.001, rel=1e-9)  # exp(-x/2)
    assert chi_squared_upper_tail(10.827566170662733, 1) == pytest.approx(0.001, rel=1e-6)
    assert chi_squared_upper_tail(3.841458820694124, 1) == pytest.approx(0.05, rel=1e-6)


HONEST = laws(par_for("baccarat", {"decks": 8}))
RIGGED = laws(par_for("baccarat", {"decks": 8, "banker_pays": "1:1"}))


def test_the_rounds_to_detect_a_banker_paid_even_money_are_the_docs_figure() -> None:
    """docs/floor.md states this number: it must be what the rule computes."""
    assert rounds_to_detect(HONEST["banker"], RIGGED["banker"], 0.99) == 52_708


def test_every_game_s_drift_laws_are_its_report_par_and_a_strategy_s_figure_is_a_ceiling() -> None:
    """One source of each game's par: the drift law of every bet type is the report's figure per unit
    (players' mean = - the house's edge, the same variance), and where the par has no variance per wager
    (2WayWinner) one law of the round, its variance the square of the round's bounding spread."""
    for game in ("baccarat", "one_card_poker", "swap_hand", "two_way_winner"):
        par = par_for(game, {})
        judged = laws(par)
        for t, law in judged.items():
            if t != ROUND:
                bet = par.types[t]
                assert (law.mean, law.variance, law.types) == (-bet.edge, bet.variance, (t,))
            assert law.ceiling == (game in ("swap_hand", "two_way_winner") and t != "dealer_bonus"), (game, t)
        assert set(judged) == {"baccarat": {"banker", "player", "tie"}, "one_card_poker": {"tie"},
                               "swap_hand": {"main", "odds_win"},
                               "two_way_winner": {"dealer_bonus", ROUND}}[game]
    par = par_for("two_way_winner", {})
    pooled = laws(par)[ROUND]
    assert set(pooled.types) == {"bj_ante", "poker_ante", "bj_play", "poker_play", "poker_bet"}
    assert par.round_sd is not None and pooled.variance == par.round_sd[1] ** 2
    assert pooled.mean == -sum(par.types[t].edge for t in pooled.types)
    # A ceiling: players far below the best play's figure are not a drift, far above it are.
    law = laws(par_for("swap_hand", {}))["main"]
    assert not results_drift(law, [(200, -200)] * 400).outside
    assert results_drift(law, [(200, 200)] * 400).outside


def test_two_way_winner_drift_takes_every_wagers_share_on_every_ante_and_the_round_s_whole_net() -> None:
    """The sheet's shares are each wager's net per round in antes, 0 in a round without that wager: the
    (round) law is judged per ante of every round, its mean the sum of all five shares, against the
    round's whole net whichever game the seat played (a Blackjack round has no Poker Play or Bet line,
    a Poker round no Blackjack Play), and the expectation is the report's theoretical win negated."""
    par = par_for("two_way_winner", {})
    law = laws(par)[ROUND]
    placed = (("bj_ante", 100), ("poker_ante", 100))
    blackjack = round_terms(par, [("bj_ante", 100, -100), ("poker_ante", 100, -100), ("bj_play", 100, -100)],
                            placed)
    poker = round_terms(par, [("bj_ante", 100, -100), ("poker_ante", 100, 100), ("poker_play", 100, 100),
                              ("poker_bet", 100, 100)], placed)
    assert (law.of(blackjack), law.of(poker)) == ((100, -300), (100, 200))
    shares = {t: b.edge for t, b in par.types.items() if b.base == "bj_ante"}
    assert set(shares) == set(law.types) and law.mean == -sum(shares.values())
    # Each wager's base is the ante in both rounds, its line or not (the report's theoretical win).
    assert all(terms.bases[t] == 100 for terms in (blackjack, poker) for t in shares)
    drift = results_drift(law, [r for r in (law.of(blackjack), law.of(poker)) if r is not None])
    assert (drift.staked, drift.actual, drift.expected) == (200, -100, -sum(shares.values()) * 200)
    # The Dealer Bonus, per its own stake, is judged only where it was placed.
    assert laws(par)["dealer_bonus"].of(blackjack) is None


def banker_rounds(rounds: int, banker_pays: Odds, seed: int) -> list[tuple[int, int]]:
    """A seat staking 100 on Banker every round; winners drawn with the par sheet's exact probabilities."""
    w = baccarat_probabilities(8)["winner"]
    rng, stake = random.Random(seed), 100
    b, p = float(w["banker"]), float(w["player"])
    bets = []
    for _ in range(rounds):
        u = rng.random()
        bets.append((stake, banker_pays.win(stake) if u < b else -stake if u < b + p else 0))
    return bets


def test_a_banker_paid_even_money_drifts_out_of_its_band_within_the_predicted_rounds() -> None:
    n = rounds_to_detect(HONEST["banker"], RIGGED["banker"], 0.99)
    assert last_rounds_outside(HONEST["banker"], banker_rounds(n, Odds(1, 1), 2027), n).outside
    honest = last_rounds_outside(HONEST["banker"], banker_rounds(n, Odds(19, 20), 2027), n)
    assert not honest.outside, honest.finding(2)


def test_outcome_counts_at_their_exact_frequencies_pass_and_doubled_ties_fail() -> None:
    w = baccarat_probabilities(8)["winner"]
    fair = {k: round(float(p) * 5000) for k, p in w.items()}
    assert not chi_squared(fair, w).outside
    rigged = dict(fair, tie=2 * fair["tie"], banker=fair["banker"] - fair["tie"])
    assert chi_squared(rigged, w).outside
    pairs = baccarat_probabilities(8)["player_pair"]
    assert chi_squared({"yes": 600, "no": 4400}, pairs).outside  # 12 % pairs, not 7.5 %
    assert not chi_squared({"yes": 373, "no": 4627}, pairs).outside
    with pytest.raises(ValueError, match="without a probability"):
        chi_squared({"banker": 1, "dragon": 1}, w)



def test_the_compact_run_index_finds_shoes_frozen_and_merged_into_segments_and_confirms_each_hit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from controller.floor.integrity import run_index

    monkeypatch.setattr(run_index, "FREEZE", 1000)  # a segment every few shoes: freezes and merges happen
    rng, history, shoes = random.Random(5), ShoeHistory(), []
    for i in range(20):
        shoes.append(shuffled(rng)[:400])
        history.add(f"t:j:{i}", shoes[-1])
    index = history._run_at
    assert len(index._segments) >= 2 and index._open
    for i in (0, 9, 19):  # in the oldest segment, a merged one, the open dictionary
        (run,) = history.shared_runs(shoes[i][17:300])
        assert (run.earlier, run.start, run.earlier_start, run.length) == (f"t:j:{i}", 0, 17, 283)
    codes = bytes(c.index for c in shoes[3])
    code = sum(c << (6 * (RUN - 1 - k)) for k, c in enumerate(codes[:RUN]))  # the run's exact code
    assert index.first(code, codes[:RUN]) == 3 * 2**16
    assert index.first(code, bytes(reversed(codes[:RUN]))) is None  # the same key, other cards: not a hit

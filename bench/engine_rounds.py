"""Benchmark: Baccarat rounds per second through the engine, beside a bare plain-Python coup loop.

A round is what the daemon does for one coup: open betting, three wagers
(Player, Banker, Tie on three seats), close betting, four to six cards, the
settlement; the engine loop is ``croupier simulate baccarat``'s own
(:func:`play_shoe`: every input through :meth:`Table.apply`, every event
built). The anchor is the same coups played by a bare loop in plain Python,
in the same process: the same cards, the tableau, the three stakes debited
and paid back in integer minor units (the Banker's 19:20 floored), and
nothing else (no events, no checks, no journal record). Both must agree on
every bet's total net in every chunk, which the script checks.

Both loops deal from the same shoes, shuffled beforehand by the seeded
generator of ``croupier simulate`` (untimed): in both a shuffle is a list
copy and a card one call of the shoe's ``draw`` (a list pop). That ratio is
the honest figure. The shuffling itself is timed apart and is in neither
loop: it is neither the engine's work nor the coup's (at the table the cards
come from the shoe's serial line), and it costs about as much as the whole
bare coup, so adding it to both loops would make the ratio look nearly twice
as good as the engine is. The line "were the seeded shuffles in both" shows
that flattering figure, computed from the timings, for comparison with
earlier runs of this script that timed them in both loops; the line "the
draws taken out of both too" subtracts the same cards drawn alone (the
stricter reading, but a subtraction of two noisy timings).

The two loops run interleaved, chunk by chunk (alternating which goes
first; the bare loop plays each chunk ``--bare-repeat`` times in one timed
window, so that both windows are about as long), so a busy machine slows
both alike; the figure is the ratio of their
rates (aim: engine >= 0.10x), from each loop's fastest chunk and from the
totals. Not a test: it prints figures.

    python bench/engine_rounds.py [--rounds 5000] [--chunks 60] [--seed S] [--bare-repeat 10]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

from controller.cards import Card
from controller.games.baccarat.simulation import BETS, CUT_CARD, STAKE, Tally, play_shoe
from controller.simulation.shoe_shuffle import ShuffledShoe

DECKS = 8
#: Baccarat value by ``Card.rank_value`` (2..14): T J Q K 0, A 1.
VALUE = (0, 0, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0, 1)


class DealtShoes:
    """The shoes a seeded :class:`ShuffledShoe` deals, shuffled beforehand: a shuffle is a list copy."""

    def __init__(self, shoes: list[list[Card]], cut_card: int) -> None:
        self._shoes = shoes
        self._taken = 0
        self.cut_card = cut_card
        self.cards: list[Card] = []
        self.shuffle()

    def shuffle(self) -> None:
        self.cards = list(self._shoes[self._taken])
        self._taken += 1

    def needs_shuffle(self) -> bool:
        return len(self.cards) < self.cut_card

    def draw(self) -> Card:
        return self.cards.pop()


def shuffled(seed: int, rounds: int) -> list[list[Card]]:
    """Enough shoes for ``rounds`` coups (six cards at most each), as ``ShuffledShoe(seed)`` deals them."""
    shoe = ShuffledShoe(DECKS, seed, CUT_CARD)
    shoes = [list(shoe.cards)]
    for _ in range(rounds * 6 // (52 * DECKS - CUT_CARD) + 1):
        shoe.shuffle()
        shoes.append(list(shoe.cards))
    return shoes


def cards_taken(left: list[int]) -> list[int]:
    """Cards each round took, from the cards left after each (a shoe due a shuffle starts full)."""
    taken, before = [], 52 * DECKS
    for after in left:
        if before < CUT_CARD:
            before = 52 * DECKS
        taken.append(before - after)
        before = after
    return taken


def draw_only(shoe: DealtShoes, taken: list[int]) -> None:
    """The draws both loops make, with as little else as possible (``taken``: cards per round, 4 to 6)."""
    draw = shoe.draw
    for cards in taken:
        if shoe.needs_shuffle():
            shoe.shuffle()
        draw()
        draw()
        draw()
        draw()
        if cards > 4:
            draw()
            if cards > 5:
                draw()


def shuffle_only(seed: int, count: int) -> None:
    """The seeded shuffles a chunk's shoes took (timed apart; in neither loop)."""
    shoe = ShuffledShoe(DECKS, seed, CUT_CARD)
    for _ in range(count - 1):
        shoe.shuffle()


def bare(rounds: int, shoe: DealtShoes, left: list[int] | None = None) -> Tally:
    """The same coups and nets as :func:`play_shoe`, in the fewest lines of plain Python.

    ``left`` (untimed runs only) collects the cards left after each round, for :func:`cards_taken`.
    """
    sums = {"player": 0, "banker": 0, "tie": 0}
    squares = {"player": 0, "banker": 0, "tie": 0}
    credits = {1: 10**15, 2: 10**15, 3: 10**15}
    draw = shoe.draw
    for _ in range(rounds):
        if shoe.needs_shuffle():
            shoe.shuffle()
        for seat in (1, 2, 3):
            credits[seat] -= STAKE
        p = (VALUE[draw().rank_value] + VALUE[draw().rank_value]) % 10  # P P B B
        b = (VALUE[draw().rank_value] + VALUE[draw().rank_value]) % 10
        if p < 8 and b < 8:
            third = None
            if p <= 5:
                third = VALUE[draw().rank_value]
                p = (p + third) % 10
            if third is None:
                if b <= 5:
                    b = (b + VALUE[draw().rank_value]) % 10
            elif b <= 2 or (b == 3 and third != 8) or (b == 4 and 2 <= third <= 7) or (
                    b == 5 and 4 <= third <= 7) or (b == 6 and 6 <= third <= 7):
                b = (b + VALUE[draw().rank_value]) % 10
        if p > b:
            nets = (STAKE, -STAKE, -STAKE)
        elif b > p:
            nets = (-STAKE, STAKE * 19 // 20, -STAKE)
        else:
            nets = (0, 0, 9 * STAKE)
        for (spot, seat), net in zip(BETS, nets, strict=True):
            credits[seat] += STAKE + net
            sums[spot] += net
            squares[spot] += net * net
        if left is not None:
            left.append(len(shoe.cards))
    return Tally(rounds, sums, squares)


def timed_bare(rounds: int, shoes: list[list[Card]], repeat: int) -> tuple[float, Tally, DealtShoes]:
    """The bare loop played ``repeat`` times over the same shoes: seconds per play, its tally, its shoe.

    Repeated so that its timed window is about as long as the engine's: on a shared machine a
    short window slips between other processes' time slices more often than a long one, and
    its fastest chunk would then flatter the anchor.
    """
    dealt = [DealtShoes(shoes, CUT_CARD) for _ in range(repeat)]
    start = time.perf_counter()
    for shoe in dealt:
        tally = bare(rounds, shoe)
    return (time.perf_counter() - start) / repeat, tally, dealt[-1]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5_000, help="rounds per loop per chunk")
    parser.add_argument("--chunks", type=int, default=60, help="interleaved chunks of each loop")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bare-repeat", type=int, default=10,
                        help="plays of each chunk by the bare loop, timed together (default 10)")
    args = parser.parse_args()
    engine_t: list[float] = []
    bare_t: list[float] = []
    shuffle_t: list[float] = []
    draw_t: list[float] = []
    for chunk in range(args.chunks):
        seed = args.seed + chunk % 10  # ten shoes, each played many times: the fastest run is the figure
        shoes = shuffled(seed, args.rounds)
        engine_shoe = DealtShoes(shoes, CUT_CARD)
        if chunk % 2:
            took, want, bare_shoe = timed_bare(args.rounds, shoes, args.bare_repeat)
            bare_t.append(took)
        start = time.perf_counter()
        got = play_shoe(args.rounds, engine_shoe, DECKS, "9:1")
        engine_t.append(time.perf_counter() - start)
        if not chunk % 2:
            took, want, bare_shoe = timed_bare(args.rounds, shoes, args.bare_repeat)
            bare_t.append(took)
        if (got.sums, got.squares) != (want.sums, want.squares):
            print(f"chunk {chunk}: the engine and the bare loop disagree: {got.sums} vs {want.sums}")
            return 1
        if engine_shoe.cards != bare_shoe.cards:
            print(f"chunk {chunk}: the engine and the bare loop took different cards")
            return 1
        start = time.perf_counter()
        shuffle_only(seed, engine_shoe._taken)
        shuffle_t.append(time.perf_counter() - start)
        left: list[int] = []
        bare(args.rounds, DealtShoes(shoes, CUT_CARD), left)
        taken = cards_taken(left)
        assert all(4 <= n <= 6 for n in taken), "a coup takes four to six cards"
        start = time.perf_counter()
        draw_only(DealtShoes(shoes, CUT_CARD), taken)
        draw_t.append(time.perf_counter() - start)
    n = args.rounds
    print(f"Baccarat, {args.chunks} interleaved chunks of {n:,} rounds per loop, 3 wagers per round, "
          "one core, the same pre-shuffled shoes in both loops;")
    print("rates from each loop's fastest chunk (a shared machine only ever slows a run down), "
          "then from the totals:")
    for label, pick in (("fastest chunk", min), ("all chunks", sum)):
        scale = n * (args.chunks if pick is sum else 1)
        e, b, sh, dr = pick(engine_t), pick(bare_t), pick(shuffle_t), pick(draw_t)
        print(f"  {label}: anchor bare plain-Python loop {scale / b:11,.0f} rounds/s; "
              f"engine {scale / e:9,.0f} rounds/s; ratio {b / e:.3f}x (aim: at least 0.10x)")
        print(f"  {label}, were the seeded shuffles in both (not the coup's work; flatters the ratio): "
              f"{1e6 * sh / scale:.2f} us per round; ratio (bare + shuffles) / (engine + shuffles) "
              f"{(b + sh) / (e + sh):.3f}x")
        print(f"  {label}, the draws taken out of both too: bare {scale / (b - dr):11,.0f} rounds/s; "
              f"engine {scale / (e - dr):9,.0f} rounds/s; ratio {(b - dr) / (e - dr):.3f}x")
    print("  every chunk: both loops' total net per bet identical, the same cards taken")
    print(f"Python {platform.python_version()} on {platform.machine()}")
    print(f"command: python bench/engine_rounds.py --rounds {args.rounds} --chunks {args.chunks} "
          f"--seed {args.seed} --bare-repeat {args.bare_repeat}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

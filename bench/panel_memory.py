"""Memory of a long run with simulated panels: RSS every 1,000 rounds on every shipped simulated table.

    .venv/bin/python bench/panel_memory.py [--rounds 20000] [--every 1000] [--tables baccarat,swap_hand]
    .venv/bin/python bench/panel_memory.py --rounds 3000 --stock-mock-pins   # gpiozero's MockPin: before

For each shipped ``firmware_configs/tables/*_sim.yaml`` (its game, options, limits
and its ``simulation`` players), this process hosts the daemon exactly as
``croupier scenario --through-daemon`` does (daemon thread, journal in a temp
dir, ZeroMQ over ipc://, the simulated shoe on a pty, the panel driver on
gpiozero mock pins with a header per seat: every bet keyed in on chip keys and
put down on a chip sensor, every decision a button press) and plays rounds
chosen by a seeded dealer: a new shoe at the cut card, each simulated player's
wagers as ``croupier demo`` picks them, a random legal decision whenever one is
due. Every event the daemon publishes is checked against a mirror table.

It prints this process's RSS (``/proc/self/status`` VmRSS: the daemon, its
panels and the harness) and its thread count every ``--every`` rounds; the
anchor is the RSS at the first sample, and the figure is the growth from there
to the last sample (aim: within 5 MiB from round 1,000 to 20,000). Not a test.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller import inputs as I  # noqa: E402
from controller.daemon.config import FIRMWARE_CONFIGS, SimulationSpec, load_table  # noqa: E402
from controller.game_base import CardDue, DecisionDue  # noqa: E402
from controller.scenario import Scenario, scenario_from_data  # noqa: E402
from controller.simulation.shoe_shuffle import ShuffledShoe  # noqa: E402
from controller.table import Table  # noqa: E402
from controller.tools.daemon_scenario import ThroughDaemon, play_input, seat_credits  # noqa: E402

#: Every shipped simulated table: firmware_configs/tables/*_sim.yaml, by name.
TABLES = tuple(sorted(p.stem for p in (FIRMWARE_CONFIGS / "tables").glob("*_sim.yaml")))


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def dealer(mirror: Table, sim: SimulationSpec, shoe: ShuffledShoe, rng: random.Random,
           first: bool) -> Iterator[I.Input]:
    """One round's inputs, each chosen after the previous one was applied to ``mirror``."""
    if first or shoe.needs_shuffle():
        if not first:
            shoe.shuffle()
        yield I.NewShoe()
    if first and sim.dp is not None:
        yield I.SetDesignatedPlayer(sim.dp)
    yield I.OpenBetting()
    dp = getattr(mirror.game, "dp_seat", None)
    for player in sim.players:  # as croupier demo's players pick their wagers
        if player.seat == dp or rng.random() < player.sit_out:
            continue
        pick = rng.randrange(max(len(a) for a in player.bets.values()))
        for spot, amounts in player.bets.items():
            yield I.PlaceWager(player.seat, spot, amounts[min(pick, len(amounts) - 1)])
        for spot, chance in player.extras.items():
            if rng.random() < chance:
                yield I.PlaceWager(player.seat, spot, mirror.limits.min_bet)
    yield I.CloseBetting()
    while mirror.phase == "dealing":
        due = mirror.due()
        if isinstance(due, CardDue):
            yield I.CardSeen(shoe.draw())
        elif isinstance(due, DecisionDue):
            seat, actions = rng.choice(sorted(due.choices.items()))
            yield I.Decision(seat, rng.choice(actions))
        else:
            raise RuntimeError(f"the round waits for nothing: {due!r}")


def run_table(name: str, rounds: int, every: int, seed: int) -> list[tuple[int, float, int]]:
    config = load_table(FIRMWARE_CONFIGS / "tables" / f"{name}.yaml")
    game = config.spec.game
    sim = config.spec.simulation
    assert sim is not None, f"{name}.yaml has no simulation section"
    lim = config.limits
    credits = {p.seat: lim.max_credit for p in sim.players}  # as much as the table lets a seat hold
    data = {"game": game, "options": dict(config.spec.options), "credits": credits, "rounds": [],
            "table": {"seats": lim.seats, "unit": lim.unit, "min_bet": lim.min_bet, "max_bet": lim.max_bet}}
    scenario: Scenario = scenario_from_data(data, name)
    samples: list[tuple[int, float, int]] = []
    rng = random.Random(seed)
    shoe = ShuffledShoe(config.options.decks, seed, sim.cut_card)  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory(prefix="croupier-mem-") as tmp, open(os.devnull, "w") as null:
        harness = ThroughDaemon(scenario, name, Path(tmp))
        harness.start()
        try:
            mirror = scenario.new_table()
            seat_credits(harness, scenario)
            for n in range(1, rounds + 1):
                for inp in dealer(mirror, sim, shoe, rng, first=n == 1):
                    play_input(harness, mirror, inp, n, null, True)
                if n % every == 0:
                    gc.collect()
                    samples.append((n, rss_mib(), threading.active_count()))
                    print(f"  {name:<22} round {n:>6}: RSS {samples[-1][1]:6.1f} MiB, "
                          f"{samples[-1][2]} threads", flush=True)
        finally:
            harness.close()
    return samples


def table_name(name: str) -> str:
    """A shipped table by its file's stem (``baccarat_sim``) or by its game's name (``baccarat``), as the
    docstring's example and ``croupier demo --game`` spell it."""
    return name if name in TABLES else f"{name}_sim"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20_000)
    parser.add_argument("--every", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tables", default=",".join(TABLES),
                        help="shipped simulated tables to run (default: every *_sim.yaml)")
    parser.add_argument("--stock-mock-pins", action="store_true",
                        help="gpiozero's own MockPin, which keeps every change (to show the before)")
    args = parser.parse_args()
    asked = args.tables.split(",")
    if unknown := [name for name in asked if table_name(name) not in TABLES]:
        parser.error(f"--tables: no shipped simulated table {', '.join(unknown)} "
                     f"(one of {', '.join(TABLES)}; a game's name is enough: baccarat is baccarat_sim)")
    tables = [table_name(name) for name in asked]
    args.tables = ",".join(tables)
    if args.stock_mock_pins:
        from gpiozero.pins.mock import MockPin

        import drivers.gpio.backend as backend

        backend._quiet_pin_class = lambda: MockPin  # type: ignore[assignment]  # a bench's before/after switch
    pins = "gpiozero's stock MockPin" if args.stock_mock_pins else "drivers.gpio mock pins (no history)"
    print(f"RSS of one process hosting the daemon and its mock panels ({pins}), every {args.every} rounds:")
    results = []
    for name in tables:
        start = time.perf_counter()
        samples = run_table(name, args.rounds, args.every, args.seed)
        results.append((name, samples, time.perf_counter() - start))
    print("summary (anchor: RSS at the first sample):")
    ok = True
    for name, samples, seconds in results:
        (n0, anchor, _), (n1, last, threads) = samples[0], samples[-1]
        growth = max(r for _, r, _ in samples) - anchor
        ok &= growth <= 5.0
        print(f"  {name:<22} round {n0}: {anchor:6.1f} MiB -> round {n1}: {last:6.1f} MiB; "
              f"largest growth over the anchor {growth:+5.1f} MiB (aim: within 5), "
              f"ratio {last / anchor:.3f}; "
              f"{threads} threads; {seconds:.0f} s")
    flags = " --stock-mock-pins" if args.stock_mock_pins else ""
    print(f"command: .venv/bin/python bench/panel_memory.py --rounds {args.rounds} --every {args.every} "
          f"--seed {args.seed} --tables {args.tables}{flags}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Hardware in the loop against the engine: one Baccarat scenario file, engine-only and through the daemon.

    .venv/bin/python bench/scenario_daemon.py [--rounds 200] [--seed 1] [--seats 3]
    .venv/bin/python bench/scenario_daemon.py --write baccarat_200.yaml   # only the file, to run by hand

Writes a scenario of ``--rounds`` Baccarat coups dealt from a seeded 8-deck
shoe (the new shoe and its shuffle when the cut card comes out), with
``--seats`` players each betting an amount drawn from the seed on Player,
Banker and sometimes Tie (amounts from the table minimum to 1,000 units, so a
bet is many units, as on a real table). Then it runs the file the way a user
would: ``croupier scenario FILE`` (the anchor) and ``croupier scenario FILE
--through-daemon`` (the daemon on its thread, the simulated shoe on a pty,
every bet through the panels' bet keys and chip sensors on mock GPIO pins),
each as a subprocess, side by side in one run, and prints both wall times,
their ratio, and whether the settlement lines are byte-identical. Exit 1 when
they are not. Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller import inputs as I  # noqa: E402
from controller.events import RoundSettled  # noqa: E402
from controller.games.baccarat import Baccarat, BaccaratOptions  # noqa: E402
from controller.limits import TableLimits  # noqa: E402
from controller.simulation.shoe_shuffle import ShuffledShoe  # noqa: E402
from controller.table import Table  # noqa: E402

UNIT = 100
CUT_CARD = 16


def make_scenario(rounds: int, seed: int, seats: int) -> dict[str, object]:
    """A Baccarat scenario: each round's cards are what a seeded shoe deals until the coup settles."""
    rng = random.Random(seed)
    shoe = ShuffledShoe(8, seed, CUT_CARD)
    table = Table(Baccarat(BaccaratOptions()), TableLimits(seats=seats))
    out_rounds: list[dict[str, object]] = []
    for n in range(rounds):
        spec: dict[str, object] = {}
        if n == 0 or shoe.needs_shuffle():
            if n > 0:
                shoe.shuffle()
                spec["shuffle"] = True
            table.apply(I.NewShoe())
        bets = {}
        for seat in range(1, seats + 1):
            spots = {rng.choice(("player", "banker")): UNIT * rng.randint(1, 1000)}
            if rng.random() < 0.25:
                spots["tie"] = UNIT * rng.randint(1, 50)
            bets[seat] = spots
        spec["bets"] = bets
        table.apply(I.OpenBetting())
        table.apply(I.CloseBetting())  # no wagers in the mirror: only the cards matter here
        cards: list[str] = []
        settled = False
        while not settled:
            card = shoe.draw()
            cards.append(str(card))
            events = table.apply(I.CardSeen(card))
            if any(e.event == "refused" for e in events):
                raise RuntimeError(f"round {n + 1}: the mirror table refused {card}: {events}")
            settled = any(isinstance(e, RoundSettled) for e in events)
        spec["cards"] = cards
        spec["decisions"] = []
        out_rounds.append(spec)
    credits = {seat: 10**8 for seat in range(1, seats + 1)}  # the default max_credit
    table_spec = {"seats": seats, "unit": UNIT, "min_bet": UNIT, "max_bet": 1_000_000}
    return {"game": "baccarat", "table": table_spec, "credits": credits, "rounds": out_rounds}


def timed(args: list[str]) -> tuple[float, list[str]]:
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, check=False, cwd=ROOT)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return elapsed, done.stdout.splitlines()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seats", type=int, default=3)
    parser.add_argument("--write", metavar="FILE", type=Path,
                        help="only write the generated scenario to FILE (to run `croupier scenario FILE "
                             "[--through-daemon]` by hand) and exit")
    args = parser.parse_args()
    scenario = yaml.safe_dump(make_scenario(args.rounds, args.seed, args.seats), sort_keys=False)
    if args.write is not None:
        # A user checking the aim by hand needs the same file the bench times; writing it is all.
        args.write.write_text(scenario)
        print(f"wrote {args.write}: {args.rounds} Baccarat rounds, {args.seats} seats "
              f"(seed {args.seed}); try\n"
              f"  .venv/bin/croupier scenario {args.write} --settled-only\n"
              f"  .venv/bin/croupier scenario {args.write} --settled-only --through-daemon")
        return 0
    croupier = str(Path(sys.executable).with_name("croupier"))
    with tempfile.TemporaryDirectory(prefix="croupier-bench-") as tmp:
        path = Path(tmp) / "baccarat.yaml"
        path.write_text(scenario)
        run = [croupier, "scenario", str(path), "--settled-only", "--json"]
        engine_s, engine_lines = timed(run)
        daemon_s, daemon_lines = timed([*run, "--through-daemon"])
    same = engine_lines == daemon_lines and len(engine_lines) == args.rounds
    print(f"Baccarat scenario, {args.rounds} rounds, {args.seats} seats (seed {args.seed}), "
          "wall time per run:")
    print(f"  anchor: engine only    {engine_s:8.2f} s   (croupier scenario FILE)")
    print(f"  through the daemon     {daemon_s:8.2f} s   (croupier scenario FILE --through-daemon)")
    print(f"  ratio daemon/engine    {daemon_s / engine_s:8.1f}x   (aim: at most 20x)")
    counts = f"{len(engine_lines)} / {len(daemon_lines)}"
    print(f"  settlement lines identical: {'yes' if same else 'NO'} ({counts})")
    print(f"command: .venv/bin/python bench/scenario_daemon.py --rounds {args.rounds} --seed {args.seed} "
          f"--seats {args.seats}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

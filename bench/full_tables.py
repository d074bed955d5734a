"""The full-size tables' acceptance run: every seat active, through the daemon on the table's own expanders.

    .venv/bin/python bench/full_tables.py [--rounds 200] [--seed 1] [--table baccarat_7seat_sim ...]

For each full-size simulated table (``firmware_configs/tables/*_?seat_sim.yaml``)
it writes a seeded scenario of ``--rounds`` rounds in which every seat with a
panel bets every round (One Card Poker's Designated Player banks)
(:mod:`controller.tools.table_scenario`), then runs it the way a user would:
``croupier scenario FILE --settled-only`` (the engine alone) and ``croupier
scenario FILE --settled-only --through-daemon --table TABLE`` (the daemon on
its thread, the simulated shoe on a pty, every bet keyed on the seat's own
buttons and put on its chip sensor, every decision pressed, all on the
table's simulated MCP23017 lines), each as a subprocess, and prints both wall
times and whether the settlement lines are byte-identical. Exit 1 when any is
not. Not a test: it prints figures (tests/test_full_tables.py plays 3 rounds).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from scenario_daemon import timed  # noqa: E402

from controller.daemon.config import load_table  # noqa: E402
from controller.tools.table_scenario import table_scenario  # noqa: E402

TABLES = ROOT / "firmware_configs" / "tables"
FULL = ("baccarat_7seat_sim", "one_card_poker_6seat_sim", "swap_hand_7seat_sim", "two_way_winner_6seat_sim")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--table", action="append", choices=FULL, help="only these tables (repeatable)")
    args = parser.parse_args()
    croupier = str(Path(sys.executable).with_name("croupier"))
    failed = 0
    with tempfile.TemporaryDirectory(prefix="croupier-bench-") as tmp:
        for name in args.table or FULL:
            table = TABLES / f"{name}.yaml"
            config = load_table(table)
            path = Path(tmp) / f"{name}_{args.rounds}.yaml"
            path.write_text(yaml.safe_dump(table_scenario(config, args.rounds, args.seed), sort_keys=False))
            run = [croupier, "scenario", str(path), "--settled-only"]
            engine_s, engine = timed(run)
            daemon_s, daemon = timed([*run, "--through-daemon", "--table", str(table.relative_to(ROOT))])
            # the settlement lines, then the verdict line ("OK: played to the end, ...")
            same = (engine == daemon and len(engine) == args.rounds + 1
                    and engine[-1].startswith("OK: played to the end"))
            failed += not same
            print(f"{name}: {args.rounds} rounds, seats {config.limits.seats}, every seat active: engine "
                  f"{engine_s:.2f} s, through the daemon on its expanders {daemon_s:.2f} s; settlement lines "
                  f"identical: {'yes' if same else 'NO'} ({len(engine) - 1} / {len(daemon) - 1}, "
                  "and the verdict)")
    tables = "".join(f" --table {t}" for t in args.table or ())
    print(f"command: .venv/bin/python bench/full_tables.py --rounds {args.rounds} --seed {args.seed}{tables}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Help that helps: one example per ``croupier`` subcommand and help text fit for a terminal.

Descriptions come from module docstrings, written for developers in reStructuredText;
:func:`polish` turns them into plain text (``x`` and :class:`a.b.C` become x and C),
escapes the ``%`` that argparse would read as a format (``95 %``) and adds each
command's example as its epilog. ``tests/test_cli_help.py`` checks every subcommand.
"""

from __future__ import annotations

import argparse
import re
from typing import Final

#: One example per subcommand path (``"math swap_hand"``), shown under its help.
EXAMPLES: Final[dict[str, str]] = {
    "": "croupier demo --game swap_hand --rounds 5",
    "scenario": "croupier scenario tests/scenarios/baccarat.yaml --through-daemon",
    "run": "croupier run firmware_configs/tables/baccarat_sim.yaml --log-level WARNING",
    "ctl": "croupier ctl --table firmware_configs/tables/baccarat_sim.yaml bet 1 banker 5.00",
    "watch": "croupier watch --table firmware_configs/tables/baccarat_sim.yaml",
    "keys": "croupier keys new alice --role operator --table firmware_configs/tables/baccarat_sim.yaml",
    "keys new": "croupier keys new carl --role cashier --table firmware_configs/tables/baccarat_sim.yaml",
    "keys request": "croupier keys request alice",
    "keys authorize": "croupier keys authorize alice.key --name alice --role operator "
                      "--table /etc/croupier/tables/baccarat_1.yaml",
    "keys list": "croupier keys list --table firmware_configs/tables/baccarat_sim.yaml",
    "keys server": "croupier keys server --table /etc/croupier/tables/baccarat_1.yaml",
    "demo": "croupier demo --game two_way_winner --rounds 3 --seed 7",
    "roads": "croupier roads tests/scenarios/baccarat.yaml",
    "display": "croupier display firmware_configs/tables/baccarat_sim.yaml --listen 127.0.0.1:8080",
    "gpio": "croupier gpio check firmware_configs/tables/baccarat_sim.yaml --sim",
    "gpio check": "croupier gpio check /etc/croupier/tables/baccarat_1.yaml --report wiring.txt",
    "sim": "croupier sim shoe --profile firmware_configs/shoes/sim_v1.yaml --decks 8",
    "sim shoe": "croupier sim shoe --profile firmware_configs/shoes/sim_v1.yaml --decks 8 --seed 7",
    "sim panel": "croupier sim panel --map firmware_configs/panels/baccarat.yaml",
    "shoe": "croupier shoe read --profile firmware_configs/shoes/sim_v1.yaml --count 10",
    "shoe conformance": "croupier shoe conformance --port /tmp/croupier-shoe-v1 --json report.json",
    "shoe read": "croupier shoe read --profile firmware_configs/shoes/sim_v1.yaml --count 10",
    "shoe sim-control": "croupier shoe sim-control 127.0.0.1:7070 lid open",
    "vision": "croupier vision test /tmp/held-out --deck firmware_configs/decks/sim_classic.yaml",
    "vision enroll": "croupier vision enroll --images /tmp/enrol --out firmware_configs/decks/house.yaml",
    "vision test": "croupier vision test /tmp/held-out --deck firmware_configs/decks/house.yaml --json -",
    "vision scenes": "croupier vision scenes /tmp/held-out --count 2000 --negatives 500 --seed 99",
    "vision calibrate": "croupier vision calibrate --image frame.png --corners '80,60 560,60 560,420 80,420' "
                        "--size-mm 120x90",
    "math": "croupier math baccarat",
    "math baccarat": "croupier math baccarat --decks 6 --tie-pays 9:1",
    "math one_card_poker": "croupier math one_card_poker --decks 1",
    "math swap_hand": "croupier math swap_hand",
    "math two_way_winner": "croupier math two_way_winner --paytable straight_flush=50:1",
    "simulate": "croupier simulate baccarat --rounds 100000 --seed 1",
    "simulate baccarat": "croupier simulate baccarat --rounds 1000000 --seed 1 --workers 2",
    "simulate swap_hand": "croupier simulate swap_hand --rounds 200000 --seed 1",
    "simulate two_way_winner": "croupier simulate two_way_winner --rounds 100000 --seed 1",
}

_ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|obj|exc|ref):`~?([^`]*)`")
_LITERAL = re.compile(r"``([^`]*)``")


def plain(text: str) -> str:
    """reStructuredText roles and literals as plain words: the last dotted part of a role."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], text)
    return _LITERAL.sub(r"\1", text)


def _escape_percent(text: str) -> str:
    """``%`` not starting an argparse ``%(name)s`` field, doubled so argparse prints it as is."""
    return re.sub(r"%(?!\()", "%%", text)


def polish(parser: argparse.ArgumentParser, path: str = "") -> None:
    """Clean every description and help text under ``parser`` and add each command's example."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    if parser.description:
        parser.description = plain(parser.description).strip()
    example = EXAMPLES.get(path)
    if example:
        parser.epilog = f"example:\n  {example}"
    for action in parser._actions:
        if action.help and action.help is not argparse.SUPPRESS:
            action.help = _escape_percent(plain(action.help))
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                if choice.help:
                    choice.help = _escape_percent(plain(choice.help))
            for name, sub in action.choices.items():
                polish(sub, f"{path} {name}".strip())

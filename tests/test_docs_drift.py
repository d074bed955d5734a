"""What a person reads stays true to what the code does: help without internals, every dependency
explained in the README."""

from __future__ import annotations

import argparse
import re
import tomllib
from pathlib import Path

from controller.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
#: Module paths are for developers; a user's help names docs and commands instead.
INTERNAL = re.compile(r"\b(controller|drivers|signage|vision)\.[a-z_]+\.[a-z_]+")


def _parsers(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    found = [(" ".join(words) or "croupier", parser.format_help())]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _parsers(sub, (*words, name))
    return found


def test_no_help_names_a_module_or_an_internal_option() -> None:
    for command, text in _parsers(build_parser()):
        assert not INTERNAL.search(text), (command, INTERNAL.search(text))
        if command != "run":  # run documents it for supervisors (docs/daemon.md); elsewhere it is internal
            assert "--exit-with-parent" not in text, command


def test_every_dependency_is_explained_in_the_readme() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        wanted += extra
    names = {re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0].strip() for spec in wanted}
    names = {n for n in names if n != "croupier" and not n.startswith("types-")}
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("| package | why |"):]
    rows = {line.split("|")[1] for line in table.splitlines() if line.startswith("| ")}
    missing = sorted(n for n in names
                     if not any(re.search(rf"\b{re.escape(n)}\b", row, re.I) for row in rows))
    assert not missing, f"README's dependency table lacks {missing}"

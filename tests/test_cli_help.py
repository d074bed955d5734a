"""Every ``croupier`` subcommand's ``--help`` renders: no traceback, no reStructuredText markup.

The list of subcommands is read from the real parser, so a new subcommand is
checked without editing this file. Each help goes through the real entry
point (``controller.cli.main``), as a user would type it.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

import pytest

from controller.cli import build_parser, main

#: reStructuredText / Sphinx markup that must not reach a terminal.
MARKUP = re.compile(r"``|:(class|func|meth|mod|data|attr|ref):`")


def _subcommands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((*prefix, name))
                found.extend(_subcommands(sub, (*prefix, name)))
    return found


SUBCOMMANDS = _subcommands(build_parser())


def parser_of(command: tuple[str, ...]) -> argparse.ArgumentParser:
    """The real parser of ``croupier COMMAND...``."""
    parser = build_parser()
    for word in command:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return parser


def test_every_command_is_listed() -> None:
    names = {" ".join(c) for c in SUBCOMMANDS}
    for expected in ("run", "ctl", "watch", "demo", "scenario", "math swap_hand", "simulate baccarat",
                     "sim shoe", "sim panel", "shoe read"):
        assert expected in names


@pytest.mark.parametrize("command", [(), *SUBCOMMANDS], ids=lambda c: " ".join(c) or "croupier")
def test_help_renders(command: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    # The real entry point, as typed: argparse prints the help and exits 0; any error raises here.
    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0
    assert out.startswith("usage: croupier")
    assert not MARKUP.search(out), MARKUP.search(out)


@pytest.mark.parametrize("command", SUBCOMMANDS, ids=" ".join)
def test_every_option_says_what_it_does(command: tuple[str, ...]) -> None:
    parser = parser_of(command)
    undocumented = [
        a.option_strings or a.dest
        for a in parser._actions
        if not isinstance(a, argparse._SubParsersAction) and not a.help
    ]
    assert not undocumented


@pytest.mark.parametrize("command", SUBCOMMANDS, ids=" ".join)
def test_every_command_has_an_example(command: tuple[str, ...]) -> None:
    parser = parser_of(command)
    # After the usage lines: the epilog of controller/cli_help.py, or an example in the description.
    body = parser.format_help().split("\n\n", 1)[1]
    assert re.search(r"(?i)example:?\s+croupier " + re.escape(" ".join(command)), body), body


@pytest.mark.parametrize("command", sorted({c[0] for c in SUBCOMMANDS}))
def test_a_command_alone_is_parsed_as_in_the_whole_parser(command: str) -> None:
    """``croupier COMMAND ...`` adds only that command (controller.cli_parser.build_parser): its help, and
    its subcommands' helps, are those of the whole parser."""
    whole = build_parser()
    alone = build_parser([command, "--help"])
    for path in [c for c in SUBCOMMANDS if c[0] == command]:
        assert _help(alone, path) == _help(whole, path), path


def _help(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> str:
    for word in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return parser.format_help()


def test_the_daemon_command_imports_no_other_commands_tools() -> None:
    """``croupier run`` (a restart after a power cut waits for it) loads the daemon, not the floor's, the
    display's, the camera's or the demo's tools; a fresh interpreter, so nothing is imported already (the
    table file's display settings, signage.settings, are the daemon's own)."""
    code = ("import sys; from controller.cli import build_parser; build_parser(['run', 't.yaml'])"
            ".parse_args(['run', 't.yaml']); print(' '.join(sorted(m for m in sys.modules if m.startswith("
            "('controller.floor', 'signage.display', 'signage.roads', 'vision', 'pitboard', "
            "'controller.tools.demo', 'controller.games.swap_hand.exact', 'drivers.shoe.cli')))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == []


def test_the_floor_commands_load_no_demo_or_table_file_reading() -> None:
    """``croupier floor recall`` (a dispute answered from the floor's store) builds its command line without
    the demo's tools or the daemon's table-file reading: the floor demo's ``--ports`` help names
    ``PORTS_PER_TABLE``, which came from the demo's set-up module with all it loads (about 0.25 s)."""
    code = ("import sys; from controller.cli import build_parser; build_parser(['floor', 'recall'])"
            "; print(' '.join(sorted(m for m in sys.modules if m.startswith("
            "('controller.tools.demo_setup', 'controller.daemon.config', 'controller.daemon.table_file')))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == []

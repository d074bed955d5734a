"""The floor stays outside the table: nothing in the core or the daemon imports it, nor its clients."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_core_and_the_daemon_never_import_the_floor() -> None:
    """Only the command line registers the floor's commands (controller/cli.py)."""
    offenders = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "controller").rglob("*.py"))
                 if "controller/floor" not in p.as_posix() and p.name != "cli.py"
                 and "controller.floor" in p.read_text(encoding="utf-8")]
    assert offenders == []


def test_the_floor_s_clients_are_loaded_only_by_the_floor_s_commands() -> None:
    """``croupier run`` and every other command start without nats-py or psycopg."""
    code = ("import sys, controller.cli, controller.daemon.server; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('nats', 'psycopg')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"

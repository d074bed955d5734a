"""Start a ``croupier`` subcommand as a child of the demo (the daemon, the display), and follow a parent.

One way for both, because both need the same three things: the child's output in a log file the
demo can show when it fails; a session of its own, so Ctrl-C reaches the demo only and the demo
stops its children in order; and ``--exit-with-parent``, so a demo killed abruptly (SIGKILL) takes
its children with it (the child's side of that is :func:`controller.orphans.die_with_parent`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from controller.daemon.private import open_log

#: The project root: ``python -m controller.cli`` must find this checkout's packages.
ROOT = Path(__file__).resolve().parents[2]


def start_child(args: list[str], log_path: Path) -> subprocess.Popen[bytes]:
    """Run ``croupier ARGS --exit-with-parent <this pid>`` with stdout and stderr to ``log_path`` (0600)."""
    cmd = [sys.executable, "-m", "controller.cli", *args, "--exit-with-parent", str(os.getpid())]
    with open_log(log_path, append=False) as log:
        return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT)


def croupier_command(cwd: Path | None = None) -> str:
    """How a person types ``croupier`` so that a printed command runs as printed from ``cwd``.

    After ``make demo`` the command lives in the clone's ``.venv/bin``, which is not on PATH: the plain
    word only when PATH finds this very installation, else the script beside this interpreter (relative
    to ``cwd`` when it is below it), else ``python -m controller.cli`` from the project root.
    """
    here = Path.cwd() if cwd is None else cwd
    script = Path(sys.executable).parent / "croupier"
    found = shutil.which("croupier")
    if found is not None and script.exists() and Path(found).resolve() == script.resolve():
        return "croupier"
    if script.exists():
        try:
            return shlex.quote(str(script.relative_to(here)))
        except ValueError:
            return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m controller.cli"

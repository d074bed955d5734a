"""Start a ``croupier`` subcommand as a child of the demo: the daemon and the signage display.

One way for both, because both need the same three things: the child's output in a log file the
demo can show when it fails; a session of its own, so Ctrl-C reaches the demo only and the demo
stops its children in order; and ``--exit-with-parent``, so a demo killed abruptly (SIGKILL) takes
its children with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: The project root: ``python -m controller.cli`` must find this checkout's packages.
ROOT = Path(__file__).resolve().parents[2]


def start_child(args: list[str], log_path: Path) -> subprocess.Popen[bytes]:
    """Run ``croupier ARGS --exit-with-parent <this pid>`` with stdout and stderr to ``log_path``."""
    cmd = [sys.executable, "-m", "controller.cli", *args, "--exit-with-parent", str(os.getpid())]
    with open(log_path, "wb") as log:
        return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT)

"""A command a test will Ctrl-C is started with SIGINT as a terminal's shell leaves it: default, unblocked;
whether a stopped command left a process of its group behind.

Why: a disposition of SIG_IGN is inherited through exec, and Python leaves an ignored SIGINT ignored, so a
command that stops on KeyboardInterrupt (``croupier math``, ``croupier sim shoe``) never sees the Ctrl-C.
A non-interactive shell starts a background job so (``make test &``, ``nohup pytest ... &``): a full run
started that way saw ``croupier math`` run its two million rounds to the end and exit 0 under a Ctrl-C.
"""

from __future__ import annotations

import os
import signal


def as_from_a_terminal() -> None:
    """``preexec_fn`` of a command a test will interrupt: SIGINT's default disposition, unblocked."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def group_alive(pgid: int) -> bool:
    """Whether any process of the process group ``pgid`` is still running (a command's workers)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True

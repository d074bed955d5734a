"""A process that must not outlive its parent: the kernel's signal to it when the parent dies (Linux).

Why a module of its own, under the core's rules: the demo's and the floor's children (the shell,
:mod:`controller.tools.children`) and a parallel simulation's workers (:mod:`controller.simulation`,
which may not import the shell) both need it, and a second copy of the ``prctl`` call would drift.
"""

from __future__ import annotations

import ctypes
import signal
import sys

#: prctl(2) option: the signal this process gets when its parent dies.
PR_SET_PDEATHSIG = 1


def die_with_parent(sig: signal.Signals = signal.SIGTERM) -> bool:
    """Linux: have the kernel send this process ``sig`` when its parent dies (even by SIGKILL).

    Best effort (False elsewhere or if prctl fails): the daemon's parent watch
    (``Daemon(parent_pid=...)``) stops it anyway, within half a second. Also a ``preexec_fn`` for a
    server we do not write (nats-server, postgres): the setting outlives exec, but not a change of
    user, and "parent" is the thread that started the child.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False

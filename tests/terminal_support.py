"""A command a test will stop: started with SIGINT as a terminal's shell leaves it (default, unblocked), read
until it says a word, and its process group (its workers) ended, whatever the test found.

Why: a disposition of SIG_IGN is inherited through exec, and Python leaves an ignored SIGINT ignored, so a
command that stops on KeyboardInterrupt (``croupier math``, ``croupier sim shoe``) never sees the Ctrl-C.
A non-interactive shell starts a background job so (``make test &``, ``nohup pytest ... &``): a full run
started that way saw ``croupier math`` run its two million rounds to the end and exit 0 under a Ctrl-C.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time


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


def read_until(proc: subprocess.Popen[bytes], word: bytes | re.Pattern[bytes], timeout: float = 60) -> bytes:
    """``proc``'s standard error until ``word`` (or a match of the pattern) appears in it (all of it so far);
    fails if it ends first."""
    assert proc.stderr is not None
    deadline, seen = time.monotonic() + timeout, b""
    found = word.search if isinstance(word, re.Pattern) else lambda text: word in text
    while not found(seen):
        assert time.monotonic() < deadline, f"never saw {word!r}: {seen!r}"
        chunk = os.read(proc.stderr.fileno(), 4096)  # blocks until the command writes or ends
        assert chunk, f"it ended before {word!r}: {seen!r}"
        seen += chunk
    return seen


def end_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill whatever is left of ``proc``'s process group (``start_new_session``) and reap ``proc``: the
    clean-up after a test, passed or failed."""
    if proc.poll() is None or group_alive(proc.pid):
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

"""A command a test will stop: started with SIGINT as a terminal's shell leaves it (default, unblocked), read
until it says a word, and its process group (its workers) ended, whatever the test found.

Why: a disposition of SIG_IGN is inherited through exec, and Python leaves an ignored SIGINT ignored, so a
command that stops on KeyboardInterrupt (``croupier math``, ``croupier sim shoe``) never sees the Ctrl-C.
A non-interactive shell starts a background job so (``make test &``, ``nohup pytest ... &``): a full run
started that way saw ``croupier math`` run its two million rounds to the end and exit 0 under a Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def as_from_a_terminal() -> None:
    """``preexec_fn`` of a command a test will interrupt: SIGINT's and SIGTERM's default dispositions,
    unblocked, as a shell starts a command (an ignored disposition would be inherited from the test's own
    process)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


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


@contextlib.contextmanager
def script_group(source: str, folder: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """Python ``source`` written to ``folder`` and run there with ``args``, in its own process group, the
    project importable and SIGINT as a terminal leaves it; its output piped. The group is ended on leaving,
    whatever the test found."""
    script = folder / "script.py"
    script.write_text(source)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, str(script), *args], cwd=folder, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=as_from_a_terminal)
    try:
        yield proc
    finally:
        end_group(proc)


def finish(proc: subprocess.Popen[bytes], timeout: float = 30) -> tuple[str, str, bool]:
    """``proc``'s standard output (empty when not piped) and error once it has ended (within ``timeout`` s: a
    worker left behind holds the pipes open), and whether any process of its group was still running then
    (before a clean-up kills what is left)."""
    out, err = proc.communicate(timeout=timeout)
    return (out or b"").decode(errors="replace"), err.decode(errors="replace"), group_alive(proc.pid)


def assert_stopped_once(proc: subprocess.Popen[bytes], text: str, left: bool) -> None:
    """A parallel run stopped as a user must see it: exit 130, no traceback, "interrupted" once, no worker
    left."""
    assert proc.returncode == 130, text
    assert "Traceback" not in text and "Exception ignored" not in text, text
    assert text.count("interrupted") == 1, text
    assert not left, "a worker outlived the run"

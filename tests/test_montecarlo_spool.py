"""The simulation tools' chunked runs, their results and exceptions handed back: through the pool's pipe
when small, through the spool (controller.simulation.spool) when not, whole, in order, named when the
parent cannot rebuild them, never a hang when a worker is killed while it hands one back."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest
from terminal_support import finish, read_until, script_group
from test_montecarlo import assert_lost, parallel_run

from controller.simulation.montecarlo import _told, run_chunks
from controller.simulation.spool import ROOT, RemoteTraceback

#: Classes whose pickles the parent cannot make again: an exception whose ``__init__`` wants two arguments,
#: and a result that refuses to be made outside the worker. In the module's namespace, before the workers are
#: forked: they pickle by name.
UNREADABLE = """
PARENT = __import__("os").getpid()
class Odd(Exception):
    def __init__(self, a: int, b: int) -> None:
        super().__init__(f"odd {a} {b}")
def rebuilt(data: bytes) -> bytes:
    if __import__("os").getpid() == PARENT:
        raise ValueError("not in the parent")
    return data
class Sealed:
    def __init__(self, size: int) -> None:
        self.data = bytes(size)
    def __reduce__(self) -> tuple[object, tuple[bytes]]:
        return rebuilt, (self.data,)
"""


@pytest.mark.parametrize(("play", "error"), [
    ("raise Odd(1, 2)", "TypeError: Odd.__init__() missing 1 required positional argument: 'b'"),
    ("error = Odd(1, 2)\nerror.payload = bytes(100_000)\nraise error",  # through the spool
     "TypeError: Odd.__init__() missing 1 required positional argument: 'b'"),
    ("return Sealed(100)", "ValueError: not in the parent"),  # through the pipe
    ("return Sealed(100_000)", "ValueError: not in the parent"),  # through the spool
])
def test_a_chunk_result_the_parent_cannot_rebuild_is_named_not_blamed_on_a_kill(
        tmp_path: Path, play: str, error: str) -> None:
    """A chunk's exception or result that pickles but cannot be made again in the parent: the run stops,
    exit 1, naming that error, not an outside kill. Before (helper-147, helper-148), the pool's broken end
    said "killed from outside"; its first fix named the remote traceback's closing quotes; a large result,
    read back from its file, ended in a traceback."""
    with script_group(parallel_run([0.1, 0.1], play, UNREADABLE), tmp_path) as proc:
        _, err, left = finish(proc)
    assert proc.returncode == 1, err
    assert f"a simulation worker's result could not be read ({error}); the run stopped incomplete" in err, err
    assert "killed from outside" not in err and "Traceback" not in err, err
    assert not left, "a worker outlived the run"


#: A parallel run whose workers may write no file over 64 kB (the spool has no room) and return 1 MB each; it
#: prints each result's size as it is merged.
NO_ROOM = parallel_run([0.1, 0.1, 0.1], """
import resource, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of a signal
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 16, 1 << 16))
return bytes([int(seconds * 10)]) * 1_000_000
""").replace("lambda seconds: None", "lambda got: print(len(got))")


def test_a_result_the_spool_has_no_room_for_comes_through_the_pipe_and_says_so(tmp_path: Path) -> None:
    """A spool without room for a result (a small /dev/shm: Docker's is 64 MB; here a file-size limit): the
    result goes through the pool's pipe as before the spool, the run completes, and each worker says why on
    standard error. Before (helper-148), the write's OSError ended the run with a traceback."""
    with script_group(NO_ROOM, tmp_path) as proc:
        out, err, left = finish(proc)
    assert proc.returncode == 0, err
    assert out.split() == ["1000000"] * 3, (out, err)
    assert "no room for a chunk's result" in err and "goes through the pipe" in err, err
    assert "Traceback" not in err, err
    assert not left


def _large(n: int) -> bytes:
    """A chunk's large result (100 kB, more than a pipe's whole write): its number over and over."""
    return bytes([n]) * 100_000


def test_large_results_come_back_whole_in_order_and_leave_no_file() -> None:
    """Results larger than one whole write to a pipe come back through the run's spool folder (memory where
    there is /dev/shm): each as played, merged in the jobs' order, and no file or folder left after."""
    got: list[bytes] = []
    run_chunks([3, 1, 4, 1, 5], _large, got.append, lambda n: 1, 2)
    assert got == [_large(n) for n in [3, 1, 4, 1, 5]]
    left = ROOT.glob(f"croupier-results-{os.getpid()}-*")
    assert list(left) == []


#: A parallel run whose jobs each play their seconds, then say so and return 32 MB (a pipe holds 64 kB); the
#: first job is short.
LARGE_RESULTS = parallel_run([0.1, 5.0, 5.0, 5.0], """
import os
time.sleep(seconds)
print(f"sending {os.getpid()}", file=sys.stderr, flush=True)
return b"x" * (32 << 20)
""")


def test_a_worker_killed_while_it_hands_back_a_large_result_stops_the_run(tmp_path: Path) -> None:
    """SIGKILL of a worker as it hands back 32 MB: caught in the pipe write while the result went through the
    pool's pipe (helper-147: 6 of 6 hung, the pool's thread waiting for the rest of the message for ever, a
    Ctrl-C included); now the result goes through a file and the worker is not seen in a pipe write, so it is
    killed a second after it began, on its next chunk: the run stops, exit 1, says why, no worker left. A kill
    while the file is written is helper-148's (25 of 25 stopped so)."""
    with script_group(LARGE_RESULTS, tmp_path) as proc:
        seen = read_until(proc, re.compile(rb"sending \d+\n")).decode()
        pid = int(re.findall(r"sending (\d+)", seen)[0])
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline and "pipe_write" not in Path(f"/proc/{pid}/wchan").read_text():
            time.sleep(0.0005)
        os.kill(pid, signal.SIGKILL)
        _, err, left = finish(proc)
    assert_lost(proc, seen + err, left)


def _fails(n: int) -> bytes:
    """A chunk that fails with a large exception: a short message, 100 kB more in its pickle."""
    error = ValueError(f"chunk {n} failed")
    error.payload = bytes(100_000)  # type: ignore[attr-defined]
    raise error


def test_a_large_chunk_exception_comes_back_with_the_workers_traceback_and_leaves_no_file() -> None:
    """A chunk's exception whose pickle is larger than one whole pipe write (a long message, a deep stack's
    traceback text) comes back through the spool, raised again in the parent with the worker's traceback as
    its cause, as the pool gives a small one. Before, through the pipe, the run hung: its end SIGKILLs the
    other worker, caught sending its own exception half-way, and the pool's shutdown waited for the rest."""
    with pytest.raises(ValueError, match="chunk 3 failed") as raised:
        run_chunks([3, 1], _fails, lambda result: None, lambda n: 1, 2)
    assert raised.value.payload == bytes(100_000)  # type: ignore[attr-defined]
    cause = raised.value.__cause__
    assert isinstance(cause, RemoteTraceback), "not through the spool"
    assert "in _fails" in str(cause) and "Traceback" in str(cause)
    assert list(ROOT.glob(f"croupier-results-{os.getpid()}-*")) == []


def _fails_unpicklable(n: int) -> None:
    """A chunk that fails with a 100 kB message and a lock among its arguments (it cannot be pickled)."""
    raise ValueError(f"chunk {n} failed " + "m" * 100_000, threading.Lock())


def _exits(n: int) -> None:
    """A chunk that calls ``sys.exit`` with a 100 kB message (a BaseException, not an Exception)."""
    raise SystemExit(f"chunk {n} ended " + "m" * 100_000)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("play", "kind", "said"), [
    (_fails_unpicklable, RuntimeError, "a chunk raised ValueError: ('chunk 3 failed mmm"),
    (_exits, SystemExit, "chunk 3 ended mmm"),
])
def test_a_large_chunk_exception_that_cannot_be_pickled_or_is_a_system_exit_ends_the_run(
        play: Callable[[int], None], kind: type[BaseException], said: str) -> None:
    """Before (helper-149), both went through the pipe, and the run's end SIGKILLed the other worker half-way
    through sending its own: the run hung. The one that cannot be pickled comes back as a RuntimeError that
    names it, its traceback in the worker the cause; the SystemExit as itself."""
    with pytest.raises(kind) as raised:
        run_chunks([3, 1], play, lambda result: None, lambda n: 1, 2)
    assert said in str(raised.value)
    assert isinstance(raised.value.__cause__, RemoteTraceback)
    assert f"in {play.__name__}" in str(raised.value.__cause__)
    assert list(ROOT.glob(f"croupier-results-{os.getpid()}-*")) == []


#: A parallel run whose short first job says so, then fails with an exception of 32 MB (in its pickle).
LARGE_ERROR = parallel_run([0.1, 5.0, 5.0, 5.0], """
import os
time.sleep(seconds)
if seconds < 1:
    print(f"sending {os.getpid()}", file=sys.stderr, flush=True)
    error = ValueError("the short chunk failed")
    error.payload = b"x" * (32 << 20)
    raise error
""")


def test_a_worker_killed_while_it_hands_back_a_large_exception_does_not_hang_the_run(tmp_path: Path) -> None:
    """SIGKILL of a worker as it hands back a chunk's 32 MB exception: the pool's pipe carried it whole, so a
    worker caught in ``pipe_write`` and killed left the run waiting for the rest for ever (the last note's
    open gap). Now the exception goes through a file and the run ends at once with the chunk's error (exit
    1), its own end killing the workers, before the test's kill finds one: no worker left."""
    with script_group(LARGE_ERROR, tmp_path) as proc:
        seen = read_until(proc, re.compile(rb"sending \d+\n")).decode()
        pid = int(re.findall(r"sending (\d+)", seen)[0])
        deadline, wchan = time.monotonic() + 1.0, Path(f"/proc/{pid}/wchan")
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # gone: the run ended already
            while time.monotonic() < deadline and "pipe_write" not in wchan.read_text():
                time.sleep(0.0005)
            os.kill(pid, signal.SIGKILL)
        _, err, left = finish(proc)
    assert proc.returncode == 1, err
    assert "ValueError: the short chunk failed" in err and "RemoteTraceback" in err, err[-2000:]
    assert not left, "a worker outlived the run"


def test_a_run_removes_the_spool_folders_of_runs_killed_before_and_only_theirs() -> None:
    """A run killed by SIGKILL leaves its spool folder (it cannot remove it): the next run removes every
    folder named with a process id no process has now, and leaves one whose process lives (this one's)."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    orphan = Path(tempfile.mkdtemp(prefix=f"croupier-results-{gone}-", dir=ROOT))
    (orphan / "part").write_bytes(b"half a result")
    alive = Path(tempfile.mkdtemp(prefix=f"croupier-results-{os.getpid()}-", dir=ROOT))
    try:
        run_chunks([1, 2], _large, lambda result: None, lambda n: 1, 2)
        assert not orphan.exists() and alive.is_dir()
    finally:
        shutil.rmtree(orphan, ignore_errors=True)
        shutil.rmtree(alive, ignore_errors=True)


PARENT_PID = os.getpid()


def _rebuilt(data: bytes) -> bytes:
    if os.getpid() == PARENT_PID:
        raise ValueError("not in the parent")
    return data


class _Sealed:
    """A result its worker pickles and the parent cannot make again (forked: the worker knows the class)."""

    def __reduce__(self) -> tuple[object, tuple[bytes]]:
        return _rebuilt, (b"sealed",)


def _sealed() -> _Sealed:
    return _Sealed()


def test_a_submit_that_races_the_break_is_told_the_cause_a_task_was_told() -> None:
    """A result the parent cannot read breaks the pool; a task submitted after that is refused with only "the
    pool is broken", no cause, and the run said "killed from outside" (a loaded machine's CI run, 2026-12-07:
    the first chunk's result came back before the second was submitted). The end of that race, made on
    purpose with a real pool: the break the first task was told, with its cause, is the one named."""
    with ProcessPoolExecutor(1) as pool:
        first = pool.submit(_sealed)
        with pytest.raises(BrokenProcessPool):
            first.result(timeout=30)
        with pytest.raises(BrokenProcessPool) as refused:
            pool.submit(_sealed)
    assert refused.value.__cause__ is None  # what the submit is told
    told = _told(refused.value, [first])
    assert told is first.exception() and "ValueError: not in the parent" in str(told.__cause__)
    assert _told(refused.value, []) is refused.value

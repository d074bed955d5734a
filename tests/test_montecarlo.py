"""The simulation tools' shared statistics and chunked runs."""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from terminal_support import assert_stopped_once, finish, group_alive, read_until, script_group

from controller.games.baccarat.simulation import simulate
from controller.simulation.montecarlo import chunks, mean_interval, run_chunks
from controller.simulation.spool import ROOT, RemoteTraceback


def test_mean_interval_matches_the_textbook_formula() -> None:
    data = [3, -1, 4, -1, -5, 9, 2, -6]
    mean, half = mean_interval(sum(data), sum(x * x for x in data), len(data))
    assert mean == pytest.approx(statistics.fmean(data))
    assert half == pytest.approx(1.96 * statistics.stdev(data) / math.sqrt(len(data)))
    with pytest.raises(ValueError):
        mean_interval(1, 1, 1)


def test_chunks_cover_the_run_exactly() -> None:
    assert list(chunks(120, 50)) == [(0, 50), (1, 50), (2, 20)]
    assert sum(n for _, n in chunks(1_000_001, 50_000)) == 1_000_001


@pytest.mark.timeout(120)
def test_the_answer_does_not_depend_on_the_number_of_workers() -> None:
    one = simulate(60_000, seed=9, decks=8, tie_pays="9:1", workers=1)
    two = simulate(60_000, seed=9, decks=8, tie_pays="9:1", workers=2)
    assert one == two and one.rounds == 60_000



def parallel_run(jobs: list[float] | str, play: str, setup: str = "") -> str:
    """A script that plays ``jobs`` (seconds; or a Python expression of them) through ``run_chunks`` in two
    workers, each job by the statements ``play`` (its ``seconds`` given) after ``setup``, and says
    "interrupted" and exits 130 when stopped, as the command line does."""
    listed = jobs if isinstance(jobs, str) else repr(jobs)
    return (
        "import sys, time\n"
        "from controller.simulation.montecarlo import run_chunks\n\n"
        f"def play(seconds: float) -> float:\n{textwrap.indent(play.strip(), '    ')}\n    return seconds\n\n"
        f"if __name__ == '__main__':\n{textwrap.indent(setup.strip() or 'pass', '    ')}\n    try:\n"
        f"        run_chunks({listed}, play, lambda seconds: None, lambda seconds: 1, 2)\n"
        "    except KeyboardInterrupt:\n        print('interrupted', file=sys.stderr, flush=True)\n"
        "        sys.exit(130)\n")


#: A job that says when it has started, then plays its seconds.
STARTED = """
print("started", file=sys.stderr, flush=True)
time.sleep(seconds)
"""


#: A parallel run of a short job and a long one in two workers: the first worker then waits for a task
#: that never comes; says when the short job is done.
IDLE_WORKER = parallel_run([0.2, 60.0], """
time.sleep(seconds)
if seconds < 1:
    print("short job done", file=sys.stderr, flush=True)
""")


def test_a_kill_of_the_whole_group_while_a_worker_waits_for_a_task_stops_the_run(tmp_path: Path) -> None:
    """SIGTERM to the run's whole process group (``timeout``, ``kill -- -PGID``, systemd's stop) while one
    worker waits for a task, as at every run's tail: the run stops, "interrupted" once, no worker left.
    Before, the waiting worker died by SIGTERM's default action holding the task queue's read lock, and
    ``pool.terminate()``, which takes that lock first, waited for ever: the run hung until SIGKILL."""
    with script_group(IDLE_WORKER, tmp_path) as proc:
        seen = read_until(proc, b"short job done").decode()
        time.sleep(0.5)  # the worker back at its wait for a task
        os.killpg(proc.pid, signal.SIGTERM)
        _, err, left = finish(proc)
    assert_stopped_once(proc, seen + err, left)


#: A parallel run of two long jobs in two workers whose pool, once stopped, takes a second to clean up after
#: its workers (``_ExecutorManagerThread.join_executor_internals`` slowed: the test's window inside the
#: pool's shutdown); says when both jobs have started and when the clean-up begins and ends.
SLOW_DRAIN = parallel_run([60.0, 60.0], STARTED, """
from concurrent.futures import process
drain = process._ExecutorManagerThread.join_executor_internals
def slow(self: object) -> None:
    print("draining", file=sys.stderr, flush=True)
    time.sleep(1.0)
    drain(self)
    print("drained", file=sys.stderr, flush=True)
process._ExecutorManagerThread.join_executor_internals = slow
""")


def test_a_second_ctrl_c_while_the_pool_shuts_down_waits_for_the_shutdown(tmp_path: Path) -> None:
    """A second Ctrl-C while the pool, stopped by the first, shuts down (an impatient user): the shutdown is
    finished, then the run says "interrupted" once, exit 130, no worker left. Before (helper-142, with
    ``multiprocessing.Pool``), the second was raised inside ``pool.terminate()``, which was left part done;
    the exit's clean-up then sent the workers a SIGTERM they block, and waited for them for ever."""
    with script_group(SLOW_DRAIN, tmp_path) as proc:
        seen = read_until(proc, re.compile(rb"started[^s]*started"))
        proc.send_signal(signal.SIGINT)
        seen += read_until(proc, b"draining")
        proc.send_signal(signal.SIGINT)
        _, err, left = finish(proc)
    text = seen.decode() + err
    assert_stopped_once(proc, text, left)
    assert text.index("drained") < text.index("interrupted"), text


#: A parallel run of two long jobs in two workers; says when each has started.
BUSY_WORKERS = parallel_run([60.0, 60.0], STARTED)


def test_two_stops_back_to_back_are_one_stop(tmp_path: Path) -> None:
    """A Ctrl-C and, at once, a kill while the workers play: one "interrupted", exit 130, no traceback, no
    worker left. Before, the second was raised inside the wait for a result the first had broken off: a
    RuntimeError traceback ("release unlocked lock") and exit 1 (helper-143: 15 of 15; two Ctrl-Cs 0.1 ms
    apart, as a terminal's under ``timeout``, which passes it on, did so 2 to 4 times in 12: two sent back
    to back here merge into one, so the kill stands in for the second)."""
    with script_group(BUSY_WORKERS, tmp_path) as proc:
        seen = read_until(proc, re.compile(rb"started[^s]*started")).decode()
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGTERM)
        _, err, left = finish(proc)
    assert_stopped_once(proc, seen + err, left)


def test_a_run_killed_alone_leaves_no_worker_playing(tmp_path: Path) -> None:
    """SIGKILL of the run's parent alone (``kill -9 PID``, the OOM killer) while its workers play: they end
    too, by the kernel's SIGKILL when their parent dies (controller.orphans). Before, the workers, which
    block every stop, played their chunks on (a minute each here; a simulation's can be longer) with no one
    to take their results."""
    with script_group(BUSY_WORKERS, tmp_path) as proc:
        read_until(proc, re.compile(rb"started[^s]*started"))
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 30
        while group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not group_alive(proc.pid), "a worker outlived its killed parent"


#: A job that says when it has started, and in which process, then plays its seconds.
STARTED_IN = """
import os
print(f"started in {os.getpid()}", file=sys.stderr, flush=True)
time.sleep(seconds)
"""


def assert_lost(proc: subprocess.Popen[bytes], text: str, left: bool) -> None:
    """A parallel run stopped by a worker lost: exit 1 with the reason, no traceback, no worker left."""
    assert proc.returncode == 1, text
    assert "a simulation worker process ended abruptly" in text and "incomplete" in text, text
    assert "Traceback" not in text and "interrupted" not in text, text
    assert not left, "a worker outlived the run"


def test_a_worker_killed_from_outside_while_it_plays_stops_the_run_and_says_so(tmp_path: Path) -> None:
    """SIGKILL of one worker (the OOM killer picks the largest process) while both play: the run stops at
    once, exit 1, "ended abruptly ... incomplete", the other worker ended too. Before, the pool started a
    new worker, the killed one's chunk was never played again, and the run waited for its result for ever."""
    with script_group(parallel_run([60.0, 60.0], STARTED_IN), tmp_path) as proc:
        seen = read_until(proc, re.compile(rb"started in \d+[^s]*started in \d+")).decode()
        os.kill(int(re.findall(r"started in (\d+)", seen)[0]), signal.SIGKILL)
        _, err, left = finish(proc)
    assert_lost(proc, seen + err, left)


#: A parallel run of a short job and a long one in two workers; the short one's worker says its pid when
#: done, then waits for a task that never comes, holding the task queue's lock.
IDLE_WORKER_PID = parallel_run([0.2, 60.0], """
import os
time.sleep(seconds)
if seconds < 1:
    print(f"short job done in {os.getpid()}", file=sys.stderr, flush=True)
""")


def test_a_worker_killed_from_outside_while_it_waits_for_a_task_stops_the_run(tmp_path: Path) -> None:
    """SIGKILL of the worker that waits for a task (it holds the task queue's read lock, which a dead process
    never gives back): the run stops, exit 1, says why, no worker left. Before, the pool's shutdown took that
    lock first, and the run hung until SIGKILL; the chunk the other worker played was waited for anyway."""
    with script_group(IDLE_WORKER_PID, tmp_path) as proc:
        seen = read_until(proc, re.compile(rb"short job done in \d+\n")).decode()
        time.sleep(0.5)  # the worker back at its wait for a task
        os.kill(int(re.findall(r"done in (\d+)", seen)[0]), signal.SIGKILL)
        _, err, left = finish(proc)
    assert_lost(proc, seen + err, left)


def test_a_worker_lost_while_the_jobs_are_handed_out_stops_the_run_and_says_so(tmp_path: Path) -> None:
    """A worker gone before every job is handed to the pool (here the first job's own worker SIGKILLs itself
    while 200,000 more are submitted): exit 1 and the reason, no traceback, no worker left. Before
    (helper-147), ``submit`` raised BrokenProcessPool outside the run's handling: a traceback."""
    script = parallel_run("[0.0] * 200_000", """
import os, signal
os.kill(os.getpid(), signal.SIGKILL)
""")
    with script_group(script, tmp_path) as proc:
        _, err, left = finish(proc, timeout=60)
    assert_lost(proc, err, left)


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
    open gap); now the exception goes through a file, the worker is killed on its next chunk, and the run
    ends with the chunk's error (exit 1), no worker left."""
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

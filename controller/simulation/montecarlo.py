"""What every simulation tool shares: confidence intervals and chunked, seeded, parallel runs.

A simulation is split into chunks whose seeds are fixed by the run's seed
and the chunk's number, so the answer is the same whatever the number of
worker processes; the chunks' tallies are merged as they come back, with one
progress bar over the whole run.
"""

from __future__ import annotations

import contextlib
import math
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from multiprocessing import popen_fork
from multiprocessing.context import ForkContext, ForkProcess
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Final, TypeVar

from tqdm import tqdm

from controller.orphans import die_with_parent

J = TypeVar("J")
T = TypeVar("T")

#: The signals that stop a run: Ctrl-C, and a kill (a resumable run's, :mod:`controller.tools.resumable`).
STOPS: Final = frozenset({signal.SIGINT, signal.SIGTERM})

#: z for a two-sided 95 % normal interval.
Z95 = 1.96


def mean_interval(total: float, squares: float, n: int) -> tuple[float, float]:
    """The mean of ``n`` observations from their sum and sum of squares, and its 95 % half-width."""
    if n < 2:
        raise ValueError(f"an interval needs at least 2 observations, not {n}")
    mean = total / n
    var = max(squares / n - mean * mean, 0.0) * n / (n - 1)
    return mean, Z95 * math.sqrt(var / n)


def chunk_seed(seed: int, chunk: int) -> int:
    """The seed of one chunk of a run: fixed by the run's seed and the chunk's number."""
    return seed * 1_000_003 + chunk


def chunks(rounds: int, size: int) -> Iterator[tuple[int, int]]:
    """(chunk number, rounds in it) covering ``rounds`` in chunks of at most ``size``."""
    for c, start in enumerate(range(0, rounds, size)):
        yield c, min(size, rounds - start)


def _worker(mask: set[signal.Signals]) -> None:
    """A worker's start: ``mask``, the parent's with Ctrl-C and kills (SIGTERM) blocked. The parent handles
    both and stops the pool; a worker ends only by SIGKILL (:class:`_Killing`), once the pool has stopped
    handing out tasks.

    Why never by a stop sent to it: an idle worker waits for a task holding the task queue's read lock, and
    ``pool.terminate()`` takes that lock before it stops anything. A worker ended by a kill of the whole
    group (``timeout``, ``kill -- -PGID``, systemd's stop) left the lock taken for ever, and the run hung
    until SIGKILL (helper-141; a resumable run's workers, which kept its handler, hung so at their start in
    5 of 24 starts under load). Leaving by an exception instead (SystemExit from a handler) was no better:
    raised just after a worker took the lock, before its ``with`` was entered, it kept the lock too
    (2 of 4 Ctrl-Cs while sixteen workers started).

    And SIGKILL when the parent dies (:func:`controller.orphans.die_with_parent`): a parent killed alone
    (``kill -9``, the OOM killer) left its workers, which no stop reaches, playing their chunks on. The
    "parent" is the thread that forked the worker: the pool's own thread for a worker it starts again,
    which ends with the pool."""
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    die_with_parent(signal.SIGKILL)


class _Killing(popen_fork.Popen):
    """A worker's process handle whose ``terminate()`` sends SIGKILL: the worker blocks SIGTERM
    (:func:`_worker`). The handle, not the process object: the exit's clean-up
    (``multiprocessing.util._exit_function``) ends workers a pool left through it, and its SIGTERM, blocked,
    left the exit waiting for ever (helper-142: a second Ctrl-C within milliseconds of the first)."""

    def terminate(self) -> None:
        self.kill()


class _Worker(ForkProcess):
    """A pool's worker process, ended by SIGKILL (:class:`_Killing`)."""

    @staticmethod
    def _Popen(process_obj: BaseProcess) -> popen_fork.Popen:
        return _Killing(process_obj)


class _Workers(ForkContext):
    """The pool's processes: :class:`_Worker`."""

    Process = _Worker


class Stop:
    """A run's Ctrl-C and kill (SIGTERM), while its pool runs: the first raises KeyboardInterrupt, as
    Python's own Ctrl-C does; a later one is the same stop and is let go (a resumable run's handler is one
    too, :mod:`controller.tools.resumable`).

    Why once: each raising, a second stop within a millisecond of the first was raised inside the wait for a
    result the first had broken off (its ``Condition.wait`` never took its lock back): a RuntimeError
    traceback, exit 1, no "interrupted" (helper-143: SIGINT then SIGTERM back to back, 15 of 15; a terminal's
    Ctrl-C under ``timeout``, which passes it on, 2 of 12). Why SIGTERM too: its default action ended the
    parent alone, and each worker played its chunk on, then printed a BrokenPipeError traceback
    (helper-140)."""

    def __init__(self) -> None:
        self.taken = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.take(signal.Signals(signum).name)

    def take(self, why: str) -> None:
        """Raise KeyboardInterrupt(``why``), unless a stop was taken already."""
        if not self.taken:
            self.taken = True
            raise KeyboardInterrupt(why)


def run_chunks(
    jobs: Sequence[J],
    play: Callable[[J], T],
    merge: Callable[[T], None],
    weight: Callable[[J], int],
    workers: int,
    unit: str = "round",
) -> None:
    """Play every job (in ``workers`` processes when above 1) and ``merge`` each result as it arrives.

    ``play`` must be a module-level function (it is pickled to the workers);
    ``weight`` says how far one job moves the progress bar. Ctrl-C reaches every process of the
    terminal's group: the workers block it and the parent stops the pool and says "interrupted" once,
    instead of each worker printing its own traceback. A kill (SIGTERM) of the parent does the same, and a
    second stop is the first's (:class:`Stop`), unless the caller handles them itself (a resumable run).
    """
    total = sum(weight(j) for j in jobs)
    if workers <= 1:
        with tqdm(total=total, unit=unit, file=sys.stderr, mininterval=0.5) as bar:
            for job in jobs:
                merge(play(job))
                bar.update(weight(job))
        return
    sizes = {id(job): weight(job) for job in jobs}
    with contextlib.ExitStack() as owned:
        # Ctrl-C and kills (SIGTERM) are blocked while the bar's monitor thread and the workers start: they
        # inherit the block (a worker has no window before an initializer would run; a thread taking a
        # stop meant for the parent would make a handler raising KeyboardInterrupt, Python's for SIGINT
        # or a resumable run's for both, raise it mid-way through ``Pool()``, leaving workers no one
        # stops, and the exit waiting for them for ever). A stop meanwhile waits, pending, until the block
        # is lifted, when the pool is already the stack's to terminate. Each worker keeps both blocked
        # (``_worker``), and ``pool.terminate()`` ends it by SIGKILL (``_Worker``).
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, set())  # read only: blocked inside the try
        try:
            signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
            stop = Stop()  # a plain run's stops, given back last (a resumable run keeps its own handler)
            plain = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
            main = threading.current_thread() is threading.main_thread()
            for signum, handler in plain.items():
                if main and signal.getsignal(signum) is handler:
                    owned.callback(signal.signal, signum, signal.signal(signum, stop))
            owned.callback(signal.pthread_sigmask, signal.SIG_SETMASK, mask)  # a stop meanwhile taken here
            bar = owned.enter_context(tqdm(total=total, unit=unit, file=sys.stderr, mininterval=0.5))
            pool = owned.enter_context(_Workers().Pool(workers, _worker, (mask | STOPS,)))
            # First at the end, stopped or not: the stops blocked again while the pool shuts down, and taken
            # once it is gone. One raised inside ``pool.terminate()`` left it part done (a second Ctrl-C
            # within milliseconds of the first: helper-142), its workers then ended by the exit's clean-up,
            # or never. The shutdown cannot wait for ever on a worker a signal ended (they block both); only
            # a worker SIGKILLed from outside while it held the task queue's lock would hang it.
            owned.callback(signal.pthread_sigmask, signal.SIG_BLOCK, STOPS)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for job, result in zip(jobs, pool.imap(play, jobs), strict=True):
            merge(result)
            bar.update(sizes[id(job)])

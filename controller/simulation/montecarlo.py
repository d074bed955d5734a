"""What every simulation tool shares: confidence intervals and chunked, seeded, parallel runs.

A simulation is split into chunks whose seeds are fixed by the run's seed
and the chunk's number, so the answer is the same whatever the number of
worker processes; the chunks' tallies are merged as they come back, with one
progress bar over the whole run.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from multiprocessing import popen_fork
from multiprocessing.context import ForkContext, ForkProcess
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Any, Final, TypeVar

from tqdm import tqdm

from controller.orphans import die_with_parent
from controller.simulation.spool import Unreadable, spool_folder, spooled, unspooled

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


def _worker(mask: Iterable[int]) -> None:
    """A worker's start: ``mask``, the parent's with Ctrl-C and kills (SIGTERM) blocked. The parent handles
    both and stops the run; a worker ends only by SIGKILL (:class:`_Killing`, :func:`_shut_down`).

    Why never by a stop sent to it: an idle worker waits for a task holding the task queue's read lock. With
    ``multiprocessing.Pool`` (until 2026-12-06), whose ``terminate()`` takes that lock first, a worker ended
    by a kill of the whole group (``timeout``, ``kill -- -PGID``, systemd's stop) hung the run until SIGKILL
    (helper-141; 5 of 24 resumable starts under load); leaving by an exception (SystemExit from a handler)
    kept the lock too (2 of 4 Ctrl-Cs while sixteen workers started). The executor's own way of ending its
    workers waits on them too (:func:`_shut_down`), and a worker ended by a stop would break the pool: the run
    would report a lost worker, not "interrupted".

    And SIGKILL when the parent dies (:func:`controller.orphans.die_with_parent`): a parent killed alone
    (``kill -9``, the OOM killer) left its workers, which no stop reaches, playing their chunks on. The
    "parent" is the thread that forked the worker: the run's own, since the pool forks every worker at its
    first task and never starts one again."""
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    die_with_parent(signal.SIGKILL)


class _Killing(popen_fork.Popen):
    """A worker's process handle whose ``terminate()`` sends SIGKILL: the worker blocks SIGTERM
    (:func:`_worker`). The handle, not the process object: the exit's clean-up
    (``multiprocessing.util._exit_function``) ends workers a pool left through it, and its SIGTERM, blocked,
    left the exit waiting for ever (helper-142: a second Ctrl-C within milliseconds of the first); a broken
    pool ends the workers left through it too."""

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


def give_back(stop: Stop, signum: int, handler: Any) -> None:
    """The run's end: ``signum``'s handler given back, but a kill (SIGTERM) ignored from now once the run was
    stopped: the process is on its way out, and a kill sent with the stop that came in as the handlers were
    given back killed it (-15) after it had said "interrupted" (1 run in many, on a loaded machine), or, for a
    resumable run (:mod:`controller.tools.resumable`), before it said where it stopped (a CI run, 2026-12-07:
    SIGINT and SIGTERM sent back to back, the second delayed by the sender's load).
    A caller's own handler is given back as it was (only the default action is what ends a process that is
    still saying where it stopped)."""
    stopped = stop.taken and signum == signal.SIGTERM and handler == signal.SIG_DFL
    signal.signal(signum, signal.SIG_IGN if stopped else handler)


class WorkerLost(SystemExit):
    """A worker process ended while the run was not stopping (SIGKILL from outside: the OOM killer, a
    ``kill -9`` of its pid): the run stops, incomplete, and says so (exit 1 with this message), instead of
    waiting for ever for a chunk no one plays. What was merged before stands (a resumable run's state)."""


def _told(broken: BrokenProcessPool, submitted: list[Future[Any]]) -> BrokenProcessPool:
    """The break a task submitted before ``broken`` was told, where it says its cause: a result the parent
    could not read breaks the pool with that cause on its tasks, and a submit racing the break is told only
    that the pool is broken (a loaded machine's CI run, 2026-12-07: "killed from outside", the result's
    error unsaid). The tasks are told a moment after the pool is marked broken: waited for (at most 5 s)."""
    wait(submitted, timeout=5)
    for future in submitted:
        told = future.exception() if future.done() and not future.cancelled() else None
        if isinstance(told, BrokenProcessPool) and told.__cause__ is not None:
            return told
    return broken


def _lost(done: int, total: int, unit: str, broken: BrokenProcessPool | Unreadable) -> WorkerLost:
    """The run's end when ``broken``: a worker gone (no cause), or a result the parent could not read (the
    pool's cause, whose last line is the error, or :class:`Unreadable`'s), said as what it was."""
    cause = broken if isinstance(broken, Unreadable) else broken.__cause__
    lines = [] if cause is None else [ln.strip() for ln in str(cause).splitlines() if ln.strip().strip("'")]
    why = ("a simulation worker process ended abruptly (killed from outside: the OOM killer, or a kill of "
           "its pid; or it crashed)" if cause is None else
           f"a simulation worker's result could not be read ({lines[-1] if lines else type(cause).__name__})")
    return WorkerLost(f"{why}; the run stopped incomplete, {done:,} of {total:,} {unit}s played")


def _shut_down(pool: ProcessPoolExecutor) -> None:
    """The pool shut down, at the run's end or stopped (Ctrl-C, a kill, a worker lost, an error in a merge):
    every worker ended by SIGKILL first, then the pool's own shutdown, which finds them gone and cleans up
    without waiting on any lock they held. Why always: stopped, they block the stops and a chunk may play for
    minutes; at the end, every result merged, they are idle, and the pool's way of telling them to leave
    (one "leave" each on the task queue, then a join of each) watches no worker: one killed there while it
    waited for a task kept the task queue's read lock, no other read its "leave", and the run hung
    (helper-147, with the window widened: 3 of 3)."""
    for worker in multiprocessing.active_children():
        if isinstance(worker, _Worker):
            worker.kill()
    pool.shutdown(wait=True)  # never ``cancel_futures``: it races the pool's thread as ``pool.map`` does


def run_chunks(
    jobs: Sequence[J],
    play: Callable[[J], T],
    merge: Callable[[T], None],
    weight: Callable[[J], int],
    workers: int,
    unit: str = "round",
) -> None:
    """Play every job (in ``workers`` processes when above 1) and ``merge`` each result as it arrives, in
    the jobs' order.

    ``play`` must be a module-level function (it is pickled to the workers);
    ``weight`` says how far one job moves the progress bar. Ctrl-C reaches every process of the
    terminal's group: the workers block it and the parent stops the pool and says "interrupted" once,
    instead of each worker printing its own traceback. A kill (SIGTERM) of the parent does the same, and a
    second stop is the first's (:class:`Stop`), unless the caller handles them itself (a resumable run).
    A worker ended from outside stops the run with :class:`WorkerLost`.

    Why :class:`concurrent.futures.ProcessPoolExecutor`, not ``multiprocessing.Pool``: a Pool worker killed
    from outside was replaced and its chunk lost, and the run waited for that chunk for ever; killed while
    it waited for a task, it kept the task queue's lock, which the Pool's shutdown takes first, and the run
    hung. The executor watches its workers: one ending breaks the pool, every result still awaited raises
    ``BrokenProcessPool``. The run then ends every worker by SIGKILL before the pool's shutdown
    (:func:`_shut_down`), which so waits on no lock a dead worker may hold.

    A large result comes back through a file (:mod:`controller.simulation.spool`): a worker killed part-way
    through sending one through the pool's pipe left the pool's thread waiting for the rest for ever.
    """
    total = sum(weight(j) for j in jobs)
    if workers <= 1:
        with tqdm(total=total, unit=unit, file=sys.stderr, mininterval=0.5) as bar:
            for job in jobs:
                merge(play(job))
                bar.update(weight(job))
        return
    with contextlib.ExitStack() as owned:
        # Ctrl-C and kills (SIGTERM) are blocked while the bar's monitor thread, the workers and the pool's
        # threads start: they inherit the block (a worker has no window before its initializer runs; a thread
        # taking a stop meant for the parent would make a handler raising KeyboardInterrupt, Python's for
        # SIGINT or a resumable run's for both, raise it mid-way through the pool's start, leaving workers no
        # one stops, and the exit waiting for them for ever). A stop meanwhile waits, pending, until the
        # block is lifted, when the pool is already the stack's to shut down. Each worker keeps both blocked
        # (``_worker``), and the run's end, stopped or not, ends them by SIGKILL (:func:`_shut_down`).
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, set())  # read only: blocked inside the try
        try:
            signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
            stop = Stop()  # a plain run's stops, given back last (a resumable run keeps its own handler)
            plain = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
            main = threading.current_thread() is threading.main_thread()
            for signum, handler in plain.items():
                if main and signal.getsignal(signum) is handler:
                    owned.callback(give_back, stop, signum, signal.signal(signum, stop))
            owned.callback(signal.pthread_sigmask, signal.SIG_SETMASK, mask)  # a stop meanwhile taken here
            bar = owned.enter_context(tqdm(total=total, unit=unit, file=sys.stderr, mininterval=0.5))
            folder = owned.enter_context(spool_folder())  # removed last, once no worker is left
            pool = ProcessPoolExecutor(workers, _Workers(), _worker, (mask | STOPS,))
            owned.callback(_shut_down, pool)
            # First at the end, stopped or not: the stops blocked again while the pool shuts down, and taken
            # once it is gone. One raised inside the shutdown would leave it part done, its workers ended by
            # the exit's clean-up, or never (helper-142, with the Pool before).
            owned.callback(signal.pthread_sigmask, signal.SIG_BLOCK, STOPS)
            # Every worker is forked at the first task, with the stops blocked. Submitted one by one, not by
            # ``pool.map``, whose results, once one raises, cancel the rest while the pool's thread fails
            # them: in Python 3.11 that thread then dies of InvalidStateError, a traceback, the pool not
            # cleaned up (a worker killed under a resumable run, 1 of 1). A worker lost before the last task
            # is handed over breaks the pool there (helper-147: 5 of 15 kills just after the fork).
            results: list[Future[Any]] = []
            try:
                for job in jobs:
                    results.append(pool.submit(partial(spooled, play, folder), job))
            except BrokenProcessPool as broken:
                raise _lost(0, total, unit, _told(broken, results)) from None
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        done = 0
        try:
            for job, result in zip(jobs, results, strict=True):
                merge(unspooled(result.result()))
                step = weight(job)
                done += step
                bar.update(step)
        except (BrokenProcessPool, Unreadable) as broken:
            raise _lost(done, total, unit, broken) from None

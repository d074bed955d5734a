"""Long simulation runs that stop and go on: the running sums kept in a state file, written atomically.

A run of many hours (a ten-million-round bench) may be stopped (Ctrl-C, a
kill, the end of a session) and continued later to its full size with the
same command plus ``--state FILE``. The run is a list of numbered chunks whose
seeds are fixed by their numbers, and the sums are integers, so the order and
the sessions the chunks were played in change nothing: a run continued from
its state prints exactly what one uninterrupted run prints. The state holds
the run's parameters (a state of another run is refused), the chunks done
(number and rounds) and the sums; it is rewritten (0600, atomically) at most
every ``every`` seconds as chunks finish, and once more when the run ends or
is interrupted, so a kill loses at most the chunks since the last write (a second stop while that
last write is made waits for it; a kill after the run was stopped is ignored from then on when SIGTERM had
its default action, as at a plain run's end: the caller is on its way out, saying where it stopped).
A longer run with the same parameters continues a shorter one's state when
its first chunks are the same (same chunk size).
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any, Generic, TypeVar

from controller.daemon.private import make_dir, write_atomic
from controller.simulation.montecarlo import STOPS, Stop, WorkerLost, give_back, run_chunks

J = TypeVar("J")
T = TypeVar("T")


class Chunk(Generic[J]):
    """One numbered piece of a run: its number fixes its seed, ``rounds`` moves the progress bar."""

    def __init__(self, number: int, rounds: int, job: J) -> None:
        self.number, self.rounds, self.job = number, rounds, job


def _numbered(play: Callable[[J], T], chunk: Chunk[J]) -> tuple[int, int, T]:
    return chunk.number, chunk.rounds, play(chunk.job)


class _Stops(Stop):
    """Ctrl-C and kills (SIGTERM) end the run, the state written first; one arriving while a chunk is
    merged waits for the merge (a stop between adding the sums and noting the chunk done would count
    it twice, or never, once continued). Taken once, as any run's (:class:`Stop`). A handler, not a signal
    mask: a process-directed signal may land on another thread (the progress bar's) and still run its
    handler in the main one at once. Never in a worker: the pool's workers keep both stops blocked."""

    def __init__(self) -> None:
        super().__init__()
        self.merging = False
        self.asked = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.merging:
            self.asked = True
            return
        super().__call__(signum, frame)

    def merged(self) -> None:
        self.merging = False
        if self.asked:
            self.take("a stop while a chunk was merged")


class Resumable:
    """The sums of a run (``dump``/``restore`` as JSON) and the chunks already played, in ``state``."""

    def __init__(self, state: Path | None, params: dict[str, Any], dump: Callable[[], Any],
                 restore: Callable[[Any], None], every: float = 5.0) -> None:
        self.state, self.params, self.dump, self.every = state, params, dump, every
        self.done: dict[int, int] = {}
        if state is not None and state.exists():
            saved = json.loads(state.read_text())
            if saved["params"] != params:
                raise SystemExit(f"{state} is the state of another run ({saved['params']}), not of {params}")
            self.done = {int(n): r for n, r in saved["done"].items()}
            restore(saved["sums"])
        self._written = time.monotonic()

    @property
    def rounds(self) -> int:
        """Rounds played so far (in this session and the ones before)."""
        return sum(self.done.values())

    def pending(self, chunks: Sequence[Chunk[J]]) -> list[Chunk[J]]:
        """The chunks still to play; refused if the state holds chunks that are not this run's."""
        planned = {c.number: c.rounds for c in chunks}
        for number, rounds in self.done.items():
            if planned.get(number) != rounds:
                raise SystemExit(f"{self.state} holds chunk {number} of {rounds} rounds, which this run "
                                 f"{'has not' if number not in planned else 'plays with other rounds'}: "
                                 "continue it with at least its rounds (and the same chunk size)")
        return [c for c in chunks if c.number not in self.done]

    def write(self) -> None:
        if self.state is not None:
            make_dir(self.state.parent)
            body = {"params": self.params, "done": self.done, "sums": self.dump()}
            write_atomic(self.state, json.dumps(body, sort_keys=True) + "\n")
        self._written = time.monotonic()

    def run(self, chunks: Sequence[Chunk[J]], play: Callable[[J], T], merge: Callable[[T], None],
            workers: int) -> bool:
        """Play the chunks not done yet, merging each; True if the run is complete (not interrupted)."""

        stops = _Stops()

        def taken(item: tuple[int, int, T]) -> None:
            number, rounds, result = item
            stops.merging = True
            merge(result)
            self.done[number] = rounds
            stops.merged()
            if time.monotonic() - self._written >= self.every:
                self.write()

        todo = self.pending(chunks)
        previous = [signal.signal(s, stops) for s in STOPS]
        try:
            run_chunks(todo, partial(_numbered, play), taken, lambda c: c.rounds, workers)
        except KeyboardInterrupt:
            return False
        except WorkerLost as lost:  # the state is written below all the same: the run continues from it
            if self.state is None:
                raise
            raise WorkerLost(f"{lost.code}; {self.state} holds the chunks merged: the same command with "
                             "it continues the run") from None
        finally:
            # The state first, its own handlers still set and deferring: a second stop (an impatient
            # Ctrl-C, a kill after a kill) during the write waits for it, since the run ends either way.
            # Before, the handlers were given back first: a second stop ended the run mid-write, by a
            # traceback or by SIGTERM's default action, and the chunks since the last write were lost.
            stops.merging = True
            try:
                self.write()
            finally:  # a write that fails (a full disk) gives the stops back all the same; a kill is
                for s, handler in zip(STOPS, previous, strict=True):  # ignored once stopped (give_back)
                    give_back(stops, s, handler)
        return True

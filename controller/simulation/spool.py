"""A chunk's result back from its worker process: through the pool's pipe when small, through a file when not.

Why: a worker killed part-way through sending its result (the OOM killer picks the largest process, and a
result being pickled is a peak of its memory) leaves the message half written, and the pool's thread that
reads it waits for the rest for ever: the run hangs, Ctrl-C included (helper-147, a 32 MB result). One
write of at most 4 KiB (``PIPE_BUF``) to a pipe is whole or not at all, so a result larger than
:data:`INLINE` is written by the worker to a file in the run's spool folder, and only the file's name
travels through the pipe. A worker killed while it writes the file leaves a part of a file no one reads
(the run stops: :class:`controller.simulation.montecarlo.WorkerLost`), removed with the folder. Where the
folder has no room for a result (a small /dev/shm: Docker's is 64 MB), the worker says so on standard error
and the result goes through the pipe, as before the spool: the run is right, only a kill while it is sent
would hang it. A chunk's exception goes the same way: the pool sends it with its traceback's text, which
a deep stack or a long message takes past 4 KiB; a large one is written to a file with that text, and
raised again in the parent from it, the worker's traceback as its cause (as the pool does). One that cannot
be pickled (a lock among its arguments) is sent as a RuntimeError naming its kind and the start of its
message; a small one, pickled or not, is left to the pool, as before the spool.

The folder is private (0700, each file 0600 from its first byte, :func:`tempfile.mkstemp`), in
``/dev/shm`` where there is one (memory, as the pipe was: no SD card written 21 MB a chunk); the file is
read only once the worker has closed it and returned its name, so it needs neither fsync nor rename: it
is a hand-over, removed when read, never a record.
"""

from __future__ import annotations

import os
import pickle
import shutil
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, NamedTuple, TypeVar

from controller.digits import whole_number

J = TypeVar("J")
T = TypeVar("T")

#: A result whose pickle is at most this many bytes travels through the pipe: with the pool's own framing
#: (a few dozen bytes), one message of at most 4 KiB.
INLINE: Final = 3072
#: Where the spool folder is made: memory (tmpfs) where the system has it and lets us write there, else the
#: temporary folder.
ROOT: Final = Path("/dev/shm" if os.access("/dev/shm", os.W_OK | os.X_OK) else tempfile.gettempdir())


class Spooled(NamedTuple):
    """A result left in a file: its path."""

    path: str


class Raised(NamedTuple):
    """A chunk's exception left in a file, with the text of its traceback in the worker: its path."""

    path: str


class RemoteTraceback(Exception):
    """The cause given to a chunk's exception raised again in the parent: the worker's traceback, as text,
    set off by triple quotes as the pool's own (so it does not read as a traceback of the parent)."""

    def __str__(self) -> str:
        return f'\n"""\n{self.args[0]}"""'


class Unreadable(Exception):
    """A spooled result or exception the parent cannot make again from its pickle (its class's ``__init__``
    wants other arguments): the run's end names the error, as for one that came through the pipe."""


#: The spool folders' names: the run's process id between these.
PREFIX: Final = "croupier-results-"


@contextmanager
def spool_folder() -> Iterator[str]:
    """A private folder for one run's spooled results, removed with whatever is left in it. The folders of
    runs killed before they could remove theirs (``kill -9``, the OOM killer) are removed first: a folder
    named with a process id that no process has now."""
    _remove_orphans()
    folder = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=ROOT)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _remove_orphans() -> None:
    """Remove the spool folders whose run is gone. A folder whose process id a live process has now (the id
    used again) is left: it may be a run's."""
    for folder in ROOT.glob(f"{PREFIX}*-*"):
        pid = whole_number(folder.name[len(PREFIX):].split("-")[0], 7)  # pid_max is at most 2**22
        if not pid:  # not a number, or 0 (os.kill(0, ...) asks about our own process group)
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:
            pass  # another user's live process


def spooled(play: Callable[[J], T], folder: str, job: J) -> T | Spooled | Raised:
    """``play(job)`` in a worker: the result itself when its pickle is small, else written to a file in
    ``folder`` and its :class:`Spooled` name; a large exception so too (:class:`Raised`), a small one or
    one that cannot be pickled raised for the pool to send."""
    try:
        result = play(job)
    except BaseException as error:  # SystemExit and KeyboardInterrupt too: the pool sends them back as well
        told = "".join(traceback.format_exception(error))
        data = _pickled((error, told))
        if data is None and len(told.encode()) > INLINE:  # the pool's own word for it would quote it all
            data = _pickled((_stand_in(error), told))
        path = None if data is None or len(data) <= INLINE else _written(data, folder, "exception")
        if path is None:
            raise  # small, or it cannot be pickled: the pool sends it (or says why not), as before the spool
        return Raised(path)
    data = pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
    path = None if len(data) <= INLINE else _written(data, folder, "result")
    return result if path is None else Spooled(path)


def _pickled(value: object) -> bytes | None:
    """``value``'s pickle, or None when it cannot be pickled (a lock, a lambda among its attributes)."""
    try:
        return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    except Exception:
        return None


def _stand_in(error: BaseException) -> RuntimeError:
    """What is raised in the parent for a chunk's large exception that cannot be pickled: its kind and the
    start of its message (its whole traceback is the cause)."""
    try:
        said = str(error)
    except Exception:
        said = "?"
    said = said if len(said) <= 500 else f"{said[:500]}... ({len(said):,} characters)"
    return RuntimeError(f"a chunk raised {type(error).__name__}: {said} (it cannot be pickled to be sent "
                        "back: its traceback in the worker is the cause)")


def _written(data: bytes, folder: str, what: str) -> str | None:
    """The file in ``folder`` that now holds ``data``; None, said on standard error, where it has no room."""
    fd, path = tempfile.mkstemp(dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
    except OSError as error:  # no room (a small /dev/shm: Docker's is 64 MB): the pipe, as always before
        os.unlink(path)
        print(f"croupier: no room for a chunk's {what} in {folder} ({error.strerror}): it goes through "
              "the pipe, where a worker killed while it sends it would hang the run", file=sys.stderr)
        return None
    return path


def unspooled(result: T | Spooled | Raised) -> T:
    """A worker's result, read back (and its file removed) when it was spooled; its exception raised."""
    if not isinstance(result, Spooled | Raised):
        return result
    try:
        with open(result.path, "rb") as saved:
            value = pickle.load(saved)
    except Exception as error:  # a class whose pickle does not make it again; never a file half written
        raise Unreadable(f"{type(error).__name__}: {error}") from error
    finally:
        os.unlink(result.path)
    if isinstance(result, Raised):
        raised, told = value
        raise raised from RemoteTraceback(told)
    got: T = value
    return got

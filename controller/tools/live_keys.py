"""Single keys typed into the live view (``croupier demo --hold-betting``: ``c`` closes betting).

The terminal is put in cbreak mode (keys arrive one by one, unechoed; Ctrl-C still interrupts) only while
the view runs, and put back as it was whatever happens: a demo must never leave a shell that does not echo.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import termios
import threading
import tty
from collections.abc import Callable, Iterator, Mapping


@contextlib.contextmanager
def keys_pressed(actions: Mapping[str, Callable[[], None]]) -> Iterator[None]:
    """While inside, each key of ``actions`` typed on the terminal calls its action (in a thread of its
    own); without a terminal on stdin nothing is read."""
    if not actions or not sys.stdin.isatty():
        yield
        return
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                continue
            key = os.read(fd, 1).decode(errors="replace").lower()
            action = actions.get(key)
            if action is not None:
                action()

    tty.setcbreak(fd)
    thread = threading.Thread(target=read, name="live view keys", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=1.0)
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)

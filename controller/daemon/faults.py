"""Fault injection: end the daemon at a named instant, so tests can crash it at the worst moments.

Off unless the environment asks for it: ``CROUPIER_FAULT=POINT[:N[:ACTION]]`` (several separated
by commas) makes the N-th time (default 1) the process passes POINT do ACTION:

* ``kill`` (default): SIGKILL to itself, at once; nothing after the point runs, as in a crash;
* ``term``: SIGTERM to itself, then carry on: a clean stop arriving at exactly that instant;
* ``eio``: raise ``OSError(EIO)`` there: storage failing in the middle of a write.

``CROUPIER_FAULT_JOURNAL_PAGES=N`` caps the journal at N pages of SQLite (``PRAGMA
max_page_count``): a disk that fills up, without root or a small filesystem.

Points (each named where it sits):

* ``journal_write``: before a journal transaction begins;
* ``journal_commit``: right after a journal transaction committed;
* ``shoe_received``: the loop has read and decoded a new shoe frame; it is not journaled yet;
* ``shoe_committed``: the loop has journaled a shoe frame; it has not acknowledged it yet;
* ``shoe_acked``: the loop has just acknowledged a shoe frame;
* ``file_created``, ``file_written``, ``file_synced``, ``file_renamed``: the steps of every atomic
  file write (controller.daemon.private: keys, the journal's marker): the temporary file exists
  empty, holds the text, is fsynced, was renamed over its target (its folder not yet fsynced);
* ``journal_created``: a new journal is complete under its temporary name, not yet renamed.
* ``dispense_due``: a dealing shuffler's card is due and none is asked for yet: nothing journaled or sent;
* ``dispense_journaled``: that DISPENSE is journaled (controller.daemon.feed_state), not sent yet;
* ``shoe_reset_sent``: RESET (``ctl shoe reset``) was journaled and sent; its HELLO has not come.
* ``camera_read``: the camera thread has a stable card (its frame saved); it is not journaled yet;
* ``camera_committed``: the loop has journaled a camera card; the camera link has not noted it yet;
* ``camera_delivered``: the camera link has noted the card it journaled (both are done).
* ``floor_published``: ``croupier uplink`` has sent a row to JetStream; its ack is not awaited yet;
* ``floor_committed``: ``croupier floor record`` has committed a batch; it has not acknowledged it yet.

Why an environment variable and not a test-only API: the crash tests run the real ``croupier run``
in a subprocess, and a variable reaches it without any option a production unit could set by
mistake. The table is read once, at import; with the variable unset every point is one dict lookup.
"""

from __future__ import annotations

import errno
import os
import signal
import threading
from typing import Final

from controller.digits import whole_number
from controller.quote import quote

ENV: Final = "CROUPIER_FAULT"
POINTS: Final = frozenset(
    {"journal_write", "journal_commit", "shoe_received", "shoe_committed", "shoe_acked",
     "file_created", "file_written", "file_synced", "file_renamed", "journal_created",
     "dispense_due", "dispense_journaled", "shoe_reset_sent",
     "camera_read", "camera_committed", "camera_delivered",
     "floor_published", "floor_committed"}
)
ACTIONS: Final = ("kill", "term", "eio")
PAGES_ENV: Final = "CROUPIER_FAULT_JOURNAL_PAGES"


class FaultSpecError(ValueError):
    """``CROUPIER_FAULT`` does not parse; the message names the variable and the bad part."""


#: The most digits of a hit number or a page count: far past any test's, and far below the 4,300 past
#: which int() raised its own ValueError (not FaultSpecError, which names the variable).
MAX_DIGITS: Final = 9


def _count(text: str) -> int | None:
    """ASCII digits (``int()`` took ``²`` and ``1_0``), at most :data:`MAX_DIGITS` of them, else None."""
    return whole_number(text, MAX_DIGITS)


def parse(spec: str) -> dict[str, tuple[int, str]]:
    """``"shoe_committed:3:kill,journal_write"`` -> ``{point: (hit number, action)}``."""
    table: dict[str, tuple[int, str]] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, _, rest = part.partition(":")
        count_text, _, action = rest.partition(":")
        if name not in POINTS:
            raise FaultSpecError(f"{ENV}: unknown point {quote(name)} (points: {', '.join(sorted(POINTS))})")
        if action and action not in ACTIONS:
            raise FaultSpecError(f"{ENV}: unknown action {quote(action)} in {quote(part)} "
                                 f"({', '.join(ACTIONS)})")
        count = _count(count_text or "1")
        if count is None or count < 1:
            raise FaultSpecError(f"{ENV}: hit number must be an integer >= 1 (at most {MAX_DIGITS} digits) "
                                 f"in {quote(part)}")
        table[name] = (count, action or "kill")
    return table


def journal_max_pages() -> int | None:
    """The journal's page cap from :data:`PAGES_ENV`, if set."""
    text = os.environ.get(PAGES_ENV, "").strip()
    if not text:
        return None
    pages = _count(text)
    if pages is None:
        raise FaultSpecError(f"{PAGES_ENV}: must be a page count (at most {MAX_DIGITS} digits), "
                             f"not {quote(text)}")
    return pages


_ARMED: Final = parse(os.environ.get(ENV, ""))
_hits: dict[str, int] = {}
_lock = threading.Lock()


def point(name: str) -> None:
    """Pass the point ``name``: a no-op unless :data:`ENV` arms it."""
    armed = _ARMED.get(name)
    if armed is None:
        return
    with _lock:
        _hits[name] = hits = _hits.get(name, 0) + 1
    if hits != armed[0]:
        return
    if armed[1] == "eio":
        raise OSError(errno.EIO, f"{os.strerror(errno.EIO)} (injected at {name})")
    os.kill(os.getpid(), signal.SIGKILL if armed[1] == "kill" else signal.SIGTERM)

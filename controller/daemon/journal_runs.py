"""The daemon runs a journal has served, and whether a follower's history is this journal's.

Why: a journal restored from an older copy keeps its journal id, and the events played after the copy
reuse the seqs the lost events had. A display away while that happened comes back to a heartbeat
*ahead* of it and asks for the events after its seq: refilled from the restored journal, it showed the
lost history up to its seq and the new one after it, and nothing said so (docs/zeromq.md, step 5, left
it open). Each start now records its run (the ``run`` of heartbeats and snapshot replies) and the first
seq it may publish, in the journal file itself, so a copy knows only the runs it was copied with. A
follower asking ``{"since": N, "journal_id": J, "run": R}`` saw events up to N from R or earlier runs,
R having been live when it last drew (its snapshot's or reply's ``run``); this journal's history up to
N is the follower's when R is among its runs and the run after R (if any) began after N. Otherwise the
reply carries the state alone and the follower redraws: a redraw too many (a run not recorded, as a
start killed before its write, or one older than :data:`KEPT_RUNS` starts) costs a repaint, never a
wrong screen.
"""

from __future__ import annotations

import json
from typing import Final

from controller.daemon.journal import Journal, JournalFault

#: The journal header's key of the runs: a JSON list of ``[run, first_seq]``, oldest first.
RUNS_KEY: Final = "runs"
#: Runs kept: a follower away for more starts than this redraws, which costs nothing but a repaint.
KEPT_RUNS: Final = 1000


def runs(journal: Journal) -> list[tuple[str, int]]:
    """The runs recorded in ``journal``'s header, oldest first (none: written before runs were kept)."""
    try:
        recorded = json.loads(journal.header.get(RUNS_KEY, "[]"))
        return [(str(run), int(first)) for run, first in recorded]
    except (ValueError, TypeError):
        return []  # unreadable: every follower redraws once, and this start's write replaces it


def record_run(journal: Journal, run: str, first_seq: int) -> None:
    """Record this start's ``run``, whose first event will have ``first_seq``: one small write per start.
    A journal faulted (by the replay, or by this write) is left to say so as the start does for any
    fault: the run is then not recorded, and its followers redraw once, nothing worse."""
    kept = [*runs(journal), (run, first_seq)][-KEPT_RUNS:]
    value = json.dumps([list(r) for r in kept])
    try:
        journal.write("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (RUNS_KEY, value))
    except JournalFault:
        return
    journal.header[RUNS_KEY] = value


def continues(journal: Journal, run: str | None, since: int) -> bool:
    """Whether a follower that drew from ``run`` and shows events up to ``since`` shows this journal's
    history (see the module); a follower that names no run (written before runs) is taken at its word."""
    if run is None:
        return True
    recorded = runs(journal)
    at = next((k for k, (r, _) in enumerate(recorded) if r == run), None)
    if at is None:
        return False
    return at + 1 == len(recorded) or recorded[at + 1][1] > since

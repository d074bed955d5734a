"""The ``<table>.heartbeat`` side topic: who the table is, where it stands, what its lamps show.

Why a heartbeat: PUB/SUB never tells a subscriber what it missed. A display
that reconnects after a daemon restart, or whose messages were dropped, would
otherwise only learn of it at the next event, which may never come. Every
``zeromq.heartbeat`` seconds the daemon publishes the table id, the journal
id (a new journal means everything shown is void), the daemon's ``run`` (new at
every start: the journal may have been restored from an older copy meanwhile, so a
display redraws), the ``seq`` of its last
event (``last_seq``: a display behind it has a gap), the round and phase, the
tilt and offline devices, and the lamps with their counter, so a display is
right within one interval without asking. Like the other side topics it has
no ``seq`` of its own and is never journaled (docs/zeromq.md).
"""

from __future__ import annotations

import time
from typing import Any

from controller.table import Table


def heartbeat_payload(
    table_id: str,
    journal_id: str,
    run: str,
    seq: int,
    table: Table,
    lamps: dict[str, Any] | None,
    interval: float,
    at: float | None = None,
    journal_fault: dict[str, str] | None = None,
    tilt: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The heartbeat message (docs/events.md, "heartbeat"); ``lamps`` is the lamps message or None."""
    return {
        "event": "heartbeat",
        "table": table_id,
        "journal_id": journal_id,
        "run": run,
        "last_seq": seq,
        "round": table.round_no,
        "phase": table.phase,
        "tilt": tilt,
        "journal_fault": journal_fault,
        "offline": dict(table.offline),
        "lamps": None if lamps is None else {k: v for k, v in lamps.items() if k not in ("event", "table")},
        "limits": table.limits.model_dump(),
        "interval": interval,
        "at": round(time.time() if at is None else at, 3),
    }

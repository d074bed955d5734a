"""Which recorded journal rows are significant events (GLI-13), logged in the batch that records them.

A row is significant when it is an operator's act, a device or the journal going offline or coming
back, a tilt or a tilt's end (:func:`row_kind` names it). Its entry in the event log carries the
row whole (input, source, key, time and every event it caused), with the origin
``row:<table>:<journal>:<row>``, so a redelivered batch or a second recorder logs nothing twice.

The daemon does not journal key changes (docs/security.md: the authorised-keys folder is re-read
live and a replaced server key is only said in its log), so the floor cannot see them. What it sees
is the key each command was journaled under (``command:KEY``): the first command of each key at each
table is logged once as ``key_first_used`` (origin ``key:<table>:<key>``), so a key nobody knew of
acting at a table is in the log.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import psycopg

from controller.devices import JOURNAL_DEVICE
from controller.floor import eventlog
from controller.floor.wire import RowMessage

#: A source of a command from the command socket: ``command:KEY`` or ``command:KEY by LABEL``.
COMMAND: Final = "command:"
#: Inputs that are an operator's act from whatever source (a dealer panel's button as much as a
#: command): they move money (credits), end or alter a round other than by its cards (void, burn,
#: take, clear), change who banks or deals, start a shoe, or change the table's limits (the table
#: file's, journaled at a start: controller.daemon.journal_limits). Any input from the command socket is an
#: operator's act too (a bet, a card or a decision keyed in by hand), however common it is otherwise.
OPERATOR_INPUTS: Final = frozenset({
    "void", "clear_tilt", "take_held", "declare_burn", "credit_in", "credit_out", "set_dp",
    "dealer_in", "dealer_out", "new_shoe", "limits",
})
#: Every input kind that is significant whatever its source (the recorder's SQL picks these rows out).
SIGNIFICANT_INPUTS: Final = OPERATOR_INPUTS | {"device"}


def key_name(source: str) -> str | None:
    """The CURVE key a command was journaled under (``command:alice by dealer 7``: alice), else None."""
    if not source.startswith(COMMAND):
        return None
    return source[len(COMMAND):].split(" by ", 1)[0]


def row_kind(m: RowMessage) -> str | None:
    """The kind of event log entry row ``m`` is, or None if it is not significant.

    The first that applies: ``operator_command``; ``journal_fault`` / ``journal_ok`` (the daemon's
    check of its journal file); ``device_offline`` / ``device_online``; ``tilt``; ``tilt_cleared``.
    """
    kind = m.input.get("input")
    if m.source.startswith(COMMAND) or kind in OPERATOR_INPUTS:
        return "operator_command"
    if kind == "device":
        online = bool(m.input.get("online"))
        if m.input.get("device") == JOURNAL_DEVICE:
            return "journal_ok" if online else "journal_fault"
        return "device_online" if online else "device_offline"
    caused = {e.get("event") for e in m.events}
    if "tilt" in caused:
        return "tilt"
    if "tilt_cleared" in caused:
        return "tilt_cleared"
    return None


def _row_body(m: RowMessage) -> dict[str, Any]:
    return {"journal": m.journal_id, "row": m.row, "at": m.at, "source": m.source, "ref": m.ref,
            "input": m.input, "events": m.events}


def entries(messages: Sequence[RowMessage]) -> list[eventlog.Entry]:
    """The event log entries of ``messages``, in their order (a key's first use before its row)."""
    out: list[eventlog.Entry] = []
    keys: set[str] = set()
    for m in messages:
        key = key_name(m.source)
        if key is not None and key not in keys:
            keys.add(key)
            out.append(eventlog.Entry(m.table_id, "key_first_used", f"key:{m.table_id}:{key}",
                                      {"key": key, "journal": m.journal_id, "row": m.row, "at": m.at}))
        kind = row_kind(m)
        if kind is not None:
            out.append(eventlog.Entry(m.table_id, kind, f"row:{m.table_id}:{m.journal_id}:{m.row}",
                                      _row_body(m)))
    return out


def log_batch(cur: psycopg.Cursor[Any], messages: Sequence[RowMessage]) -> int:
    """Log the significant rows of a batch in its transaction (last, after its row locks); how many."""
    return eventlog.append_many(cur, entries(messages))

"""A resent input command answered exactly as it was first: refs scoped per key, bodies compared.

A client that timed out resends its command with the same ``ref`` (docs/commands.md), so the
reply to the resend must say what the first one did: a refused cash-out answered as a success
would pay out twice on the floor. Three rules make that so:

* a ``ref`` belongs to the key that sent it: it is journaled as ``key:NAME:REF``
  (:func:`journal_ref`; key names have no ``:``), so one key's refs can neither block nor
  answer for another key's commands;
* a resend must be the same request: the same input and the same journaled source (key and
  ``by``); another body under a used ref is refused, naming both (a client reusing refs is a
  bug that would otherwise lose the second command silently);
* the first reply is kept in the journal's ``replies`` table (row -> reply JSON, created at
  replay: controller.daemon.service), written right
  after the input was applied; a resend gets it back with ``"duplicate": true``. When it is
  missing because the daemon died between the input's commit and the reply's, the next start
  keeps it from its replay (:func:`keep_replayed`); when the row is older than the newest
  checkpoint (a journal older than this table, a failed write), a resend derives it by replaying
  rows 1..N through a fresh table (on the loop: seconds for a long journal, once per such row).
  Either way it is the first reply: the journal holds inputs and the core is deterministic.

A refusal given before the journal (the key's role may not send the command; an amount or a seat the
table's limits refuse) is an answer too: it is kept in the journal file's ``refused`` table under the ref
(:func:`refuse`), and a resend gets it back with ``"duplicate": true`` even once the role or the limits
would take the command (a cashier told "refused" hands the chips back; a resend applied later would credit
them twice). A transient refusal (a journal fault) is not kept: it asks for the resend.

Refs journaled before scoping (plain ``REF``) are read as belonging to the key named in their
row's source (``command:NAME``): a resend across the upgrade is still recognised.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable
from typing import Any, Final

from controller.daemon.commands import CommandError, InputCommand, error_reply, parse_command
from controller.daemon.journal import Entry, Journal, JournalFault, starting_limits
from controller.daemon.service import Applied, TableService, event_payload
from controller.inputs import Input, input_from_dict
from controller.limits import MAX_SEATS
from controller.table import Table

log = logging.getLogger("croupier.daemon")


#: ``submit(input, source, ref)``: the daemon's one input path (journal, apply, publish).
Submit = Callable[[Input, str, "str | None"], Applied]


def journal_ref(key: str, ref: str) -> str:
    """The ref as journaled: scoped to the key that sent it."""
    return f"key:{key}:{ref}"


def first_reply(cmd: str, applied: Applied, seq: int) -> dict[str, Any]:
    """The reply to an input command that was journaled and applied (``seq``: the table's after it)."""
    refused = applied.refused
    if refused is not None:
        return {"ok": False, "cmd": cmd, "error": refused, "refused": True, "row": applied.row, "seq": seq}
    return {"ok": True, "cmd": cmd, "row": applied.row, "seq": seq, "events": applied.payloads}


class RefUnread(Exception):
    """The journal could not be read for a ref: whether its input was applied is not known (``fault``:
    the journal's fault, the table halted)."""

    def __init__(self, fault: JournalFault) -> None:
        super().__init__(str(fault))
        self.fault = fault


def run(service: TableService, submit: Submit, command: InputCommand, key: str) -> dict[str, Any]:
    """Answer ``command`` from ``key``: apply it, or repeat the first reply to its ``ref``.

    :class:`~controller.daemon.journal.JournalFault` passes through (nothing was applied);
    :class:`RefUnread` when the ref's row could not be looked up (applied or not: unknown).
    """
    source = command.source(key)
    if command.ref is None:
        applied = submit(command.input, source, None)
        return first_reply(command.name, applied, service.seq)
    answer = repeat(service, command, key)
    if answer is not None:
        return answer
    applied = submit(command.input, source, journal_ref(key, command.ref))
    reply = first_reply(command.name, applied, service.seq)
    _keep(service.journal, applied.row, reply)
    return reply


def repeat(service: TableService, command: InputCommand, key: str) -> dict[str, Any] | None:
    """The answer to ``command`` from ``key`` if its ``ref`` was used before: the first reply with
    ``"duplicate": true``, or the refusal of another body under that ref; None when the ref is new (or
    there is none). :class:`RefUnread` when the ref's row could not be looked up."""
    if command.ref is None:
        return None
    source = command.source(key)
    try:
        prior = _find(service.journal, key, command.ref)
        if prior is None:
            return _refused_before(service, command, key)
        if (prior.input, prior.source) != (command.input, source):
            return _reused(command, key, prior.input, prior.source)
        return {**_kept_reply(service, prior, command.name), "duplicate": True}
    except sqlite3.Error as exc:
        raise RefUnread(service.journal.mark_fault(f"read failed: {type(exc).__name__}: {exc}")) from exc
    except JournalFault as exc:
        raise RefUnread(exc) from exc


#: Refusals kept per key for its resends: a resend comes within seconds of its request, so a key's last
#: 256 refused refs answer it; older ones are dropped, so that no key can grow the journal file.
KEPT_REFUSALS: Final = 256


def refuse(service: TableService, command: InputCommand, key: str, reply: dict[str, Any]) -> dict[str, Any]:
    """``reply``, a refusal of ``command`` from ``key`` given before the journal, kept as its ref's first
    answer (the first kept stands). A failed write is logged: a resend is then judged again."""
    if command.ref is not None:
        try:
            conn = service.journal.connection
            conn.execute(
                "INSERT OR IGNORE INTO refused(ref, key, input, source, reply) VALUES (?, ?, ?, ?, ?)",
                (journal_ref(key, command.ref), key, json.dumps(command.input.to_dict(), sort_keys=True),
                 command.source(key), json.dumps(reply)))
            # A key's newest KEPT_REFUSALS only: a read-only key sending refused commands under new refs
            # grew the journal file without bound (a review, 2026-12-07: 4.9 MB from 1,000 in 2 s).
            conn.execute("DELETE FROM refused WHERE key = ? AND rowid <= (SELECT rowid FROM refused "
                         "WHERE key = ? ORDER BY rowid DESC LIMIT 1 OFFSET ?)", (key, key, KEPT_REFUSALS))
        except sqlite3.Error as exc:
            log.warning("the refusal of ref %r from key %r was not kept (%s): a resend is judged again",
                        command.ref, key, exc)
    return reply


def _refused_before(service: TableService, command: InputCommand, key: str) -> dict[str, Any] | None:
    """The refusal kept for ``command``'s ref (:func:`refuse`) as a duplicate, the refusal of another body
    under it, or None."""
    assert command.ref is not None
    journal = service.journal
    try:
        found = journal.connection.execute("SELECT input, source, reply FROM refused WHERE ref = ?",
                                           (journal_ref(key, command.ref),)).fetchone()
    except sqlite3.Error as exc:
        raise journal.mark_fault(f"read failed: {type(exc).__name__}: {exc}") from exc
    if found is None:
        return None
    first = input_from_dict(json.loads(found[0]))
    if (first, found[1]) != (command.input, command.source(key)):
        return _reused(command, key, first, found[1])
    kept: dict[str, Any] = json.loads(found[2])
    if "cmd" in kept:  # the resend's name (an alias: card, input), as for a journaled command's reply
        kept["cmd"] = command.name
    return {**kept, "duplicate": True}


def _reused(command: InputCommand, key: str, first: Input, first_source: str) -> dict[str, Any]:
    """The refusal of ``command`` under a ref first used for another request, naming both."""
    return error_reply(
        f"ref {command.ref!r} was first used for {describe(first, first_source)}; this request is "
        f"{describe(command.input, command.source(key))}: nothing done (use a new ref for a new request)",
        cmd=command.name, ref_reused=True)


def taken_before(service: TableService, raw: bytes, key: str, refusal: dict[str, Any],
                 ) -> InputCommand | dict[str, Any]:
    """The request ``raw``, which the table's limits now refuse (an amount over today's maximum, a
    seat the table no longer has; ``refusal``: the reply saying so), if it is a resend of a command
    ``key`` journaled under its ref: limits change at a start (docs/daemon.md, "Limits"), so a command
    taken under the old ones and resent after must get its first answer, not a refusal of a bet that
    stands. Else the reply: the refusal kept for its ref, or ``refusal``, kept as its ref's first answer
    (:func:`refuse`) when it is a ref'd input command at all. A request understood but for the limits
    is refused naming its ``cmd``, as every refusal of an understood command is; an invalid one is not
    (docs/commands.md: ``cmd`` tells a client which refusals its ref keeps)."""
    try:
        parsed = parse_command(raw, MAX_SEATS, service.table_id)  # taken under more seats, maybe
    except CommandError:
        return refusal
    refusal = {**refusal, "cmd": parsed.name}
    if not isinstance(parsed, InputCommand) or parsed.ref is None:
        return refusal
    if _find(service.journal, key, parsed.ref) is not None:
        return parsed
    return _refused_before(service, parsed, key) or refuse(service, parsed, key, refusal)


def describe(inp: Input, source: str) -> str:
    """``credit_in seat 5 amount 700 (command:cashier)``: an input as a person reads it."""
    fields = inp.to_dict()
    words = [str(fields.pop("input"))]
    words += [f"{name} {json.dumps(value)}" for name, value in fields.items() if value is not None]
    return " ".join(words) + f" ({source})"


def _find(journal: Journal, key: str, ref: str) -> Entry | None:
    """The input ``key`` first sent with ``ref``: scoped, or an unscoped ref of an older journal whose
    row's source names that key. A ref of the scoped form itself (``key:NAME:OLD``) is never looked up
    unscoped: it would find the row of the key's own ref ``OLD`` and answer a new request as its resend,
    never applied (a review, 2026-12-07)."""
    entry = journal.find_ref(journal_ref(key, ref))
    if entry is not None or ref.startswith("key:"):
        return entry
    legacy = journal.find_ref(ref)
    prefix = f"command:{key}"
    if legacy is not None and legacy.source.startswith(prefix):
        rest = legacy.source[len(prefix):]
        if not rest or rest.startswith(" by "):
            return legacy
    return None


def _keep(journal: Journal, row: int, reply: dict[str, Any]) -> None:
    """Keep the first reply to a ref'd command. A failed write loses nothing: it is derived again."""
    try:
        journal.connection.execute("INSERT OR REPLACE INTO replies(row, reply) VALUES (?, ?)",
                                   (row, json.dumps(reply)))
    except sqlite3.Error as exc:
        log.warning("the reply to journal row %d was not kept (%s): a resend will replay the journal to "
                    "answer it", row, exc)


def keep_replayed(service: TableService) -> None:
    """At start, after the replay: keep the replies of the ref'd command rows replayed that have none
    (a crash came between an input's commit and its reply's: the last row, most often), so a resend
    of one is answered at once. ``cmd`` is left empty: :func:`_kept_reply` gives the resend's."""
    conn = service.journal.connection
    for applied in service.replayed_commands:
        if conn.execute("SELECT 1 FROM replies WHERE row = ?", (applied.row,)).fetchone() is None:
            applied.payloads = [event_payload(service.table_id, applied.first_seq + i, e)
                                for i, e in enumerate(applied.events)]
            _keep(service.journal, applied.row, first_reply("", applied, applied.last_seq))
    service.replayed_commands = []


def _kept_reply(service: TableService, prior: Entry, cmd: str) -> dict[str, Any]:
    """The first reply to row ``prior.id``: kept, or derived by replaying rows 1..N (then kept). Its
    ``cmd`` is the resend's (the same input, so the same command but for an alias: ``card``, ``input``)."""
    found = service.journal.connection.execute(
        "SELECT reply FROM replies WHERE row = ?", (prior.id,)).fetchone()
    if found is not None:
        kept: dict[str, Any] = json.loads(found[0])
        return {**kept, "cmd": cmd}
    table = Table(service.config.new_game(), starting_limits(service.journal.header, service.config.limits))
    seq = 0
    reply: dict[str, Any] = {}
    for entry in service.journal.entries(1, prior.id):
        events = table.apply(entry.input)
        if entry.id == prior.id:
            payloads = [event_payload(service.table_id, seq + i, e) for i, e in enumerate(events, 1)]
            reply = first_reply(cmd, Applied(entry.id, seq + 1, events, payloads=payloads), seq + len(events))
        seq += len(events)
    log.info("derived the first reply to journal row %d by replaying rows 1..%d", prior.id, prior.id)
    _keep(service.journal, prior.id, reply)
    return reply

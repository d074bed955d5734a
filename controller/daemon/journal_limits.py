"""The table's limits in its journal: the ones its first row was played under, and each change since.

Why the journal and not the table file: a row must replay under the limits it
was played under, or a wager accepted then (1000 under a maximum of 1000) is
refused in the replay (under a maximum of 500), and the rebuilt rounds,
credits and event seqs differ from what was published and paid. So the
journal's header keeps the limits its rows start under (key ``limits``), and
a change of the table file's limits is journaled as a ``limits`` input (source
``config``) at the start that finds it, before any other input if the table
is between rounds, else right after the input that ends the round in play (as
a floor changes its sign between hands, never inside one): it takes effect
from that row on, never before (docs/daemon.md, "Limits").

A journal written before limits were recorded gets the table file's limits of
the start that first opens it, as its starting limits: the best that can be
known (those rows were replayed under the file's limits at every start until
then), said in the log once, when it is written; but never fewer seats than
its rows name, so a seat that holds money is not dropped by the replay (its
credit_in refused, its money gone) but refuses the start as a change would.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from controller.daemon.journal_read import LIMITS_KEY, JournalMismatch, starting_limits
from controller.inputs import SetLimits
from controller.limits import MAX_SEATS, TableLimits

if TYPE_CHECKING:
    from controller.daemon.journal import Journal
    from controller.table import Table

log = logging.getLogger("croupier.daemon")

#: The journal source of a limits change taken from the table file.
SOURCE = "config"


def record_starting_limits(journal: Journal, limits: TableLimits) -> TableLimits:
    """The journal's starting limits, written to its header first if it has none (one statement:
    a crash leaves it written or not, and a start that finds it missing writes it then)."""
    if LIMITS_KEY not in journal.header:
        named = _seats_named(journal)  # its rows were played with those seats, whatever the file says now
        if named > limits.seats:
            limits = TableLimits.model_validate({**limits.model_dump(), "seats": named})
        text = limits.model_dump_json()
        journal.write("INSERT INTO meta(key, value) VALUES (?, ?)", (LIMITS_KEY, text))
        journal.header[LIMITS_KEY] = text
        if journal.last_id:
            log.warning("%s: written before the journal recorded limits: its %d row(s) are taken as played "
                        "under the table file's limits now, with every seat its rows name (%s), and any "
                        "change is journaled from here on",
                        journal.path, journal.last_id, text)
    return starting_limits(journal.header, limits)


def _seats_named(journal: Journal) -> int:
    """The highest seat any row names (0: none): read once, at the first start of a journal written
    before limits were recorded (a start that replays every row anyway: checkpoints are per code)."""
    named = (getattr(e.input, "seat", None) for e in journal.entries())
    return max((s for s in named if isinstance(s, int) and s <= MAX_SEATS), default=0)  # beyond: refused


def limits_input(limits: TableLimits) -> SetLimits:
    """The ``limits`` input that makes ``limits`` the table's from its row on."""
    return SetLimits(**limits.model_dump())


def change_due(journal: Journal, table: Table, limits: TableLimits) -> SetLimits | None:
    """The input to journal if the table file's ``limits`` differ from the table's (the journal's last);
    :class:`JournalMismatch` if they cannot take effect (a seat still holding money would go)."""
    if table.limits == limits:
        return None
    why = refusal(table, limits)
    if why is not None:
        raise JournalMismatch(journal.path, f"the table file's limits cannot take effect: {why}")
    when = "now" if table.phase == "idle" else f"when round {table.round_no} in play ends"
    log.warning("%s: the table file's limits differ from the journal's (%s, now %s): journaling the "
                "change %s; the rows before it keep the limits they were played under",
                journal.path, table.limits.model_dump_json(), limits.model_dump_json(), when)
    return limits_input(limits)


def refusal(table: Table, limits: TableLimits) -> str | None:
    """Why ``limits`` cannot replace the table's (None if they can): money held would be dropped or
    rescaled. Checked at the start, and again when a change that waited for the round's end is due."""
    why = table.limits_refusal(limits)
    if why is None and limits.minor_units != table.limits.minor_units and table.phase != "idle":
        # The round's commands would be typed in decimals not yet in force: no waiting for its end.
        why = (f"currency.minor_units {table.limits.minor_units} -> {limits.minor_units} while a round is "
               "in play (its commands are typed in the table file's currency: change it between rounds)")
    return why


def deferred_refusal(table: Table, change: SetLimits) -> str | None:
    """Why a change that waited for the round in play cannot be made at its end (None if it can): the
    round's own inputs (a credit_in at a seat the new limits leave out) made it drop money. The daemon
    then makes no change and halts, as a start refused for it would (docs/daemon.md, "Limits")."""
    why = refusal(table, TableLimits(**change.limits()))
    if why is None:
        return None
    log.critical("the table file's limits cannot take effect at the end of round %d: %s", table.round_no, why)
    return (f"the table file's limits cannot take effect at the end of round {table.round_no}: {why}; "
            "play stops: restart under the old table file to settle it, then under the new one")

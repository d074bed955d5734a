"""What the host asked a dealing shuffler, kept in the journal's file so a restart knows what is on its way.

A DISPENSE and a RESET are commands to a device, not table inputs, so the
journal of inputs does not hold them; a restarted daemon that only replays
inputs cannot tell "the card was committed and its successor never asked
for" from "the successor was asked for and has not come", nor whether a
RESET it sent is still to be answered by a HELLO. This module keeps those
facts in one row of the ``dispenser`` table of the journal's SQLite file,
written (committed, like an input) *before* the command goes out:

* ``dispense_row``: the journal's last input row when a DISPENSE went out.
  A card input on a later row answered it; no card after it means that
  DISPENSE may still bring a card. NULL: nothing was asked, or the answer
  was SHOE_EMPTY, or a reset's HELLO voided it.
* ``reset_row``: a RESET was sent and its HELLO has not come yet (NULL: none).
* ``empty``: SHOE_EMPTY answered, and no SHUFFLE_COMPLETE since.

The table is created when a dealing shuffler's daemon first opens the
journal (``CREATE TABLE IF NOT EXISTS``, as the checkpoints table is): a
journal without it is one an older version wrote, and older versions ignore
it, so the journal's format version is unchanged in both directions.
Checkpoints do not hold it: it is read from the file at every start, and the
input rows after ``dispense_row`` are always in the journal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from controller.daemon.journal import Journal
from controller.inputs import CardSeen

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS dispenser (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    dispense_row INTEGER,      -- the last input row when an unanswered DISPENSE went out (NULL: none)
    reset_row INTEGER,         -- the last input row when a RESET not yet answered by HELLO went out
    empty INTEGER NOT NULL     -- 1: SHOE_EMPTY answered, no SHUFFLE_COMPLETE since
)
"""
_SAVE: Final = "INSERT OR REPLACE INTO dispenser(id, dispense_row, reset_row, empty) VALUES (1, ?, ?, ?)"


@dataclass(frozen=True, slots=True)
class FeedState:
    """The dealing shuffler's commands whose answers the journal does not hold yet."""

    dispense_row: int | None = None
    reset_row: int | None = None
    empty: bool = False


class FeedLog:
    """The ``dispenser`` row of one journal: read at start, written before each DISPENSE and RESET."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        journal.connection.execute(_SCHEMA)
        row = journal.connection.execute(
            "SELECT dispense_row, reset_row, empty FROM dispenser WHERE id = 1").fetchone()
        #: As saved; None: this journal has no row yet (new, or written by a version without it).
        self.saved: FeedState | None = None if row is None else FeedState(row[0], row[1], bool(row[2]))

    def save(self, state: FeedState) -> None:
        """Commit ``state`` as the row (durable when this returns); JournalFault if it cannot be."""
        self.journal.write(_SAVE, (state.dispense_row, state.reset_row, int(state.empty)))
        self.saved = state

    def here(self) -> int:
        """The journal's last input row now (what ``dispense_row`` and ``reset_row`` record)."""
        return self.journal.last_id

    def card_since(self, row: int) -> bool:
        """A card was journaled after input row ``row``: the DISPENSE sent there was answered."""
        return any(isinstance(entry.input, CardSeen) for entry in self.journal.entries(row + 1))

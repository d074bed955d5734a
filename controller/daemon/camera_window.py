"""The camera window's memory in the journal: the card the camera delivered last and has not seen gone.

Why: the camera reports a card once and not again while it lies in the
window (vision.stable), but that memory is the process's; a restarted daemon
that forgot it would deal a card still lying in the window a second time.
So the journal keeps it, and the camera link starts from it:

* the card's own journal row is the token: a ``card`` input of source
  ``camera`` says "this card was delivered, and was in the window", in the
  card's one-row commit (nothing to keep in step, nothing extra per card);
* the ``camera_window`` row records that the window was then seen empty
  (``card`` NULL), with the last input row when it was seen: a camera card
  on a later row is newer. One small write per card, once it is gone.

At start the memory is the last camera card after that row, else the row's
card. A write lost in a crash only makes the memory older, never newer: the
card is taken to be still there, so the restarted camera asks the dealer
(a ``repeat_card`` tilt) rather than deal it again. The table is created if
missing (``CREATE TABLE IF NOT EXISTS``): an older daemon ignores it, and a
newer one reading an older one's rows still finds their camera cards, so
the journal's format version does not change (docs/daemon.md, "Exactly once
on the camera path").
"""

from __future__ import annotations

import json
from typing import Final

from controller.cards import Card, parse_card
from controller.daemon.journal import Journal, JournalError
from controller.inputs import CardSeen, InputError, input_from_dict

#: The journal source of every input the camera makes (cards and its device statuses).
SOURCE: Final = "camera"

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS camera_window (id INTEGER PRIMARY KEY CHECK (id = 1), "
    "card TEXT, row INTEGER NOT NULL)"
)
_SET: Final = "INSERT OR REPLACE INTO camera_window(id, card, row) VALUES (1, ?, ?)"


def in_window(journal: Journal) -> Card | None:
    """The card the camera delivered last and never saw gone, as the journal says (None: none).

    Reads only the rows after the ``camera_window`` row, newest first, up to the first camera card.
    """
    conn = journal.connection
    conn.execute(_SCHEMA)
    saved = conn.execute("SELECT card, row FROM camera_window WHERE id = 1").fetchone()
    floor = 0 if saved is None else int(saved[1])
    rows = conn.execute(
        "SELECT id, input FROM inputs WHERE id > ? AND source = ? ORDER BY id DESC", (floor, SOURCE))
    for row_id, text in rows:
        try:
            inp = input_from_dict(json.loads(text))
        except (ValueError, InputError) as exc:
            raise JournalError(journal.path, f"input does not parse: {exc}", row_id) from None
        if isinstance(inp, CardSeen):
            return inp.card
    return None if saved is None or saved[0] is None else parse_card(str(saved[0]))


def record_gone(journal: Journal) -> None:
    """The window was seen empty after the last camera card: it cannot be in the window any more.

    :class:`~controller.daemon.journal.JournalFault` if the write fails (the table halts, as for a card).
    """
    journal.write(_SET, (None, journal.last_id))


"""Driving a dealing shuffler: DISPENSE exactly when the rules call for a card, never twice for one.

A dealing shuffler (profile ``mode: dealing_shuffler``) delivers a card only when the host sends
DISPENSE. The round says what it waits for (:meth:`controller.table.Table.due`); after every input
the daemon applies, :meth:`Dispenser.after_apply` looks: a card is due and none is on its way, so
one DISPENSE goes out. That is the only place a DISPENSE is sent.

A DISPENSE is never repeated by the host: a repeat could put two cards on the layout. If its card
has not come within the profile's ``dispense_timeout``, the table tilts (device ``shoe feed``
offline) and the dealer looks. What ends it:

* the card arrives late: the feed is back (the tilt clears) and the card is dealt as usual;
* the shoe reports SHOE_EMPTY instead of a card: ``shoe feed`` stays offline until the shuffler
  reports SHUFFLE_COMPLETE, then one DISPENSE asks again;
* the dealer clears a jam and resets the shoe (``croupier ctl shoe reset`` sends RESET): the
  HELLO that answers it says every earlier DISPENSE is void, so one DISPENSE asks again.

Timers run on the daemon's loop; nothing here blocks or sleeps.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Final

from controller.games.base import CardDue
from controller.inputs import DeviceStatus, Input
from controller.table import Table
from drivers.shoe import ShoeError, ShoeReader

log = logging.getLogger("croupier.daemon.dispenser")

#: Device name of a dealing shuffler whose card did not come (journaled like the shoe's own).
SHOE_FEED: Final = "shoe feed"


class Dispenser:
    """Sends DISPENSE for each card the round calls for; tilts (never repeats) when one does not come."""

    def __init__(self, reader: ShoeReader, loop: asyncio.AbstractEventLoop,
                 submit: Callable[[Input, str], Any], timeout: float, table: Table) -> None:
        self.reader = reader
        self._loop = loop
        self._submit = submit
        self.timeout = timeout
        #: DISPENSEs sent since start, for ``status`` and tests.
        self.sent = 0
        self._timer: asyncio.TimerHandle | None = None
        self._empty = False
        self._resetting = False
        #: A DISPENSE was sent and its card has not come yet. At a start mid-deal the previous
        #: process may have sent one whose card the shoe still holds: wait for it (the timeout
        #: tilts for the dealer) rather than risk a second card.
        self.outstanding = isinstance(table.due(), CardDue)
        if self.outstanding:
            self._timer = loop.call_later(timeout, self._timed_out, self.sent)

    def after_apply(self, table: Table) -> None:
        """After every applied input (and on shoe news): send one DISPENSE if a card is due now."""
        if self.outstanding or self._empty or not isinstance(table.due(), CardDue):
            return
        if SHOE_FEED in table.offline:
            return
        try:
            self.reader.request_card()
        except ShoeError as exc:  # not connected: asked again when the shoe says it is back
            log.warning("card due but cannot send DISPENSE: %s", exc)
            return
        self.sent += 1
        self.outstanding = True
        self._timer = self._loop.call_later(self.timeout, self._timed_out, self.sent)

    def before_card(self, table: Table) -> None:
        """A card came from the shoe and is about to be applied: a late card ends the feed tilt first.

        The DISPENSE stays outstanding until :meth:`after_card`, so nothing asks for the next card
        before this one is on the layout.
        """
        if SHOE_FEED in table.offline:
            self._submit(DeviceStatus(SHOE_FEED, True, "the card came"), "shoe")

    def after_card(self, table: Table) -> None:
        """The card was applied: its DISPENSE is answered; ask for the next one if it is due."""
        self._answered()
        self.after_apply(table)

    def on_status(self, status: str, table: Table) -> None:
        """The shoe's news that changes what is on its way (called before after_apply)."""
        if status == "shoe_empty" and self.outstanding:
            self._answered()
            self._empty = True
            self._offline(table, "shoe empty: load cards and shuffle")
        elif status == "shuffle_complete":
            self._empty = False
            self._online(table, "shuffle complete")
        elif status == "hello" and self._resetting:
            # The HELLO after our RESET: no earlier DISPENSE will be answered, so ask again. (A
            # HELLO we did not ask for, e.g. the power-up HELLO arriving late, voids nothing: the
            # card may still come, and the timeout tilts for the dealer if it does not.)
            self._resetting = False
            self._answered()
            self._online(table, "shoe reset (HELLO)")

    def reset(self) -> None:
        """Send RESET (the dealer cleared a jam or a feed): ShoeError if the shoe is not connected."""
        self.reader.reset()
        self._resetting = True

    def view(self) -> dict[str, Any]:
        return {"mode": "dealing_shuffler", "dispense_outstanding": self.outstanding,
                "dispensed": self.sent, "dispense_timeout": self.timeout}

    # --- internals --------------------------------------------------------------------------

    def _answered(self) -> None:
        self.outstanding = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _timed_out(self, which: int) -> None:
        if not self.outstanding or which != self.sent:
            return
        self._timer = None
        log.warning("no card %.1f s after DISPENSE %d: a tilt for the dealer, not a repeat", self.timeout,
                    which)
        # Still outstanding: a late card counts for this DISPENSE; the dealer resets the shoe otherwise.
        self._submit(DeviceStatus(SHOE_FEED, False, f"no card {self.timeout:g} s after DISPENSE"), "shoe")

    def _offline(self, table: Table, why: str) -> None:
        if SHOE_FEED not in table.offline:
            self._submit(DeviceStatus(SHOE_FEED, False, why), "shoe")

    def _online(self, table: Table, why: str) -> None:
        if SHOE_FEED in table.offline:
            self._submit(DeviceStatus(SHOE_FEED, True, why), "shoe")

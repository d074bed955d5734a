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

Across a restart (docs/daemon.md, "A dealing shuffler across a restart"): every DISPENSE and RESET is
journaled before it goes out (:mod:`controller.daemon.feed_state`). A restarted table whose card is
due and whose last DISPENSE was answered by a journaled card asks for the card at once; one whose
DISPENSE has no card after it waits for that card, and if it does not come, tilts saying the table
cannot know whether that DISPENSE reached the shuffler (never repeating it). A RESET sent before the
restart is still pending: the HELLO that answers it does not void the unanswered DISPENSE, since a
card that process's reader held back (docs/shoe-protocol.md, host rule 10) would come after it and
answer it; the timeout tilts if none comes, and the dealer's reset then asks again.

Timers run on the daemon's loop; nothing here blocks or sleeps.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from controller.daemon import faults
from controller.daemon.feed_state import FeedLog, FeedState
from controller.daemon.journal import Journal, JournalFault
from controller.devices import SHOE_EMPTY, SHOE_FEED
from controller.game_base import CardDue
from controller.inputs import DeviceStatus, Input
from controller.table import Table
from drivers.shoe import ShoeError, ShoeReader

log = logging.getLogger("croupier.daemon.dispenser")



class Dispenser:
    """Sends DISPENSE for each card the round calls for; tilts (never repeats) when one does not come."""

    def __init__(self, reader: ShoeReader, loop: asyncio.AbstractEventLoop,
                 submit: Callable[[Input, str], Any], timeout: float, table: Table,
                 journal: Journal, faulted: Callable[[JournalFault], None]) -> None:
        self.reader = reader
        self._loop = loop
        self._submit = submit
        self._faulted = faulted
        self.timeout = timeout
        #: DISPENSEs sent since start, for ``status`` and tests.
        self.sent = 0
        self._timer: asyncio.TimerHandle | None = None
        self.log = FeedLog(journal)
        due = isinstance(table.due(), CardDue)
        state = self.log.saved
        #: Why the table cannot know whether the DISPENSE it waits for reached the shuffler (a restart).
        self._unknown = ""
        if state is None:  # a journal from before DISPENSEs were journaled: mid-deal, one may be on its way
            state = FeedState(dispense_row=self.log.here() if due else None)
            if due:
                self._unknown = "this journal has no record of DISPENSEs (an older version wrote it)"
        self._state = state
        if self.log.saved is None:
            self._save(state)
        self._empty = state.empty
        #: A RESET went out (before a restart, too) and its HELLO has not come: that HELLO voids.
        self._resetting = state.reset_row is not None
        #: That RESET was written by this process, whose reader knows whether it held a card back.
        self._reset_here = False
        #: That RESET is sent again once the shoe is connected (see :meth:`_reset_again`).
        self._reset_again_due = self._resetting
        self._reset_task: asyncio.Task[None] | None = None
        #: A DISPENSE was sent and its card has not come yet. At a start mid-deal the previous
        #: process may have sent one whose card the shoe still holds: wait for it (the timeout
        #: tilts for the dealer) rather than risk a second card.
        self.outstanding = (not state.empty and state.dispense_row is not None
                            and not self.log.card_since(state.dispense_row))
        if self.outstanding:
            self._unknown = self._unknown or (
                f"the process before this restart journaled a DISPENSE for it (after row "
                f"{state.dispense_row}) and stopped: the table cannot know whether that DISPENSE "
                "reached the shuffler")
            log.warning("restart mid-deal: waiting for the card due, never asking twice: %s", self._unknown)
            self._arm()
        elif due:
            log.info("restart mid-deal: no DISPENSE is on its way for the card due: asking for it")

    def after_apply(self, table: Table) -> None:
        """After every applied input (and on shoe news): send one DISPENSE if a card is due now."""
        if self.outstanding or self._empty or not isinstance(table.due(), CardDue):
            return
        if SHOE_FEED in table.offline:
            return
        faults.point("dispense_due")
        if not self.reader.connected:  # asked when the shoe says it is back
            log.warning("card due but the shoe is not connected: DISPENSE once it is")
            return
        if not self._save(replace(self._state, dispense_row=self.log.here())):
            return  # the journal failed: the table is halted, nothing is asked for
        faults.point("dispense_journaled")
        try:
            self.reader.request_card()
        except ShoeError as exc:  # not connected: asked again when the shoe says it is back
            log.warning("card due but cannot send DISPENSE: %s", exc)
            self._save(replace(self._state, dispense_row=None))
            return
        self._unknown = ""
        self.sent += 1
        self.outstanding = True
        self._arm()

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
        if status == "connected" and self._reset_again_due:
            self._reset_again_due = False
            # After the reader's greeting (its resume NAK); kept, so the task is not collected.
            self._reset_task = self._loop.create_task(self._reset_again())
        if status == "shoe_empty" and self.outstanding:
            self._answered()
            self._empty = True
            self._save(replace(self._state, dispense_row=None, empty=True))
            self._offline(table, f"{SHOE_EMPTY}: load cards and shuffle")
        elif status == "shuffle_complete":
            self._empty = False
            if self._state.empty:
                self._save(replace(self._state, empty=False))
            self._online(table, "shuffle complete")
        elif status == "hello" and self._resetting:
            # The HELLO after our RESET (sent by this process or the one before a restart): no
            # earlier DISPENSE will be answered, so ask again. (A HELLO we did not ask for, e.g. the
            # power-up HELLO arriving late, voids nothing: the card may still come, and the timeout
            # tilts for the dealer if it does not.) Unless the reader held a card back while the
            # RESET waited to go out: that card answered the DISPENSE and comes again after this
            # HELLO, so the DISPENSE stays answered-to-be and is not asked again (a second card).
            # A RESET the process before a restart wrote may have held one back too, unknown here:
            # the DISPENSE is not asked again either, and the timeout tilts if no card comes.
            self._resetting, here, self._reset_here = False, self._reset_here, False
            self._unknown = ""
            if self.outstanding and (self.reader.held_a_card or not here):
                if here:
                    log.info("a card held back by the RESET answers the DISPENSE: it comes again after HELLO")
                else:
                    self._unknown = (
                        "the process before this restart sent a RESET and stopped; its HELLO came after "
                        "the restart, and a card that process held back would come after it: the table "
                        "cannot know whether the DISPENSE was answered")
                    log.warning("HELLO for the RESET sent before the restart: waiting for the card due, "
                                "never asking twice: %s", self._unknown)
                self._save(replace(self._state, reset_row=None))
                # The HELLO brings the feed back (below): the card it may bring has the timeout again,
                # or the table tilts again saying why; a feed tilt before it would otherwise end with
                # nothing on its way and nothing to say so.
                self._arm()
            else:
                self._save(replace(self._state, dispense_row=None, reset_row=None))
                self._answered()
            self._online(table, "shoe reset (HELLO)")

    def reset(self) -> None:
        """Send RESET (the dealer cleared a jam or a feed): ShoeError if the shoe is not connected.

        Journaled before it goes out, so a restart before the HELLO still takes that HELLO as its answer.
        """
        before = self._state
        if not self._save(replace(before, reset_row=self.log.here())):
            raise ShoeError("the journal cannot be written (the table is halted): RESET not sent")
        try:
            self.reader.reset(wait=0)  # on the loop: the caller waited for the proof (prepare_reset)
        except ShoeError:
            self._save(before)
            raise
        self._reset_here = True
        faults.point("shoe_reset_sent")
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

    def _arm(self) -> None:
        """The outstanding DISPENSE's card is due within :attr:`timeout` from now, or the table tilts."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._loop.call_later(self.timeout, self._timed_out, self.sent)

    def _save(self, state: FeedState) -> bool:
        """Journal ``state`` before the command it records goes out; False (the table halts) if it cannot."""
        try:
            self.log.save(state)
        except JournalFault as exc:
            self._faulted(exc)
            return False
        self._state = state
        return True

    async def _reset_again(self) -> None:
        """A RESET sent before a restart whose HELLO this process has not seen: send it once more.

        Runs after the shoe's first frame since the start: if that frame was the HELLO, it answered
        the RESET and this does nothing (the reader never acknowledges a HELLO unseen: its greeting
        never NAKs 1, docs/shoe-protocol.md, "Delivery", host rule 3). Any other first frame means the
        RESET never reached the shoe (the process died between journaling it and writing it). RESET,
        unlike DISPENSE, is safe to repeat: a second one only restarts the numbering again and voids
        the same unanswered DISPENSE the dealer's reset was for; a card already out is sent again
        after its HELLO.
        """
        if not self._resetting:
            return
        try:
            # Off the loop: the reader may run on it, and the shoe's next frame is what it waits for.
            await asyncio.to_thread(self.reader.prepare_reset)
            if not self._resetting:  # the HELLO came meanwhile: it answered the first RESET
                self.reader.cancel_reset()
                return
            self.reader.reset(wait=0)
            self._reset_here = True
        except ShoeError as exc:
            self.reader.cancel_reset()
            log.warning("a RESET sent before the restart is unanswered, and cannot be sent again: %s", exc)
            return
        log.warning("a RESET sent before the restart had not been answered by HELLO: sent it again")

    def _timed_out(self, which: int) -> None:
        if not self.outstanding or which != self.sent:
            return
        self._timer = None
        # Still outstanding: a late card counts for this DISPENSE; the dealer resets the shoe otherwise.
        if self._unknown:
            pending = "; a RESET sent before the restart has had no HELLO either" if self._resetting else ""
            why = (f"no card {self.timeout:g} s after the restart: {self._unknown}{pending}; not repeated "
                   "(a second card could come): look at the shuffler, then shoe reset")
            log.warning("%s", why)
        else:
            log.warning("no card %.1f s after DISPENSE %d: a tilt for the dealer, not a repeat", self.timeout,
                        which)
            why = f"no card {self.timeout:g} s after DISPENSE"
        self._submit(DeviceStatus(SHOE_FEED, False, why), "shoe")

    def _offline(self, table: Table, why: str) -> None:
        if SHOE_FEED not in table.offline:
            self._submit(DeviceStatus(SHOE_FEED, False, why), "shoe")

    def _online(self, table: Table, why: str) -> None:
        if SHOE_FEED in table.offline:
            self._submit(DeviceStatus(SHOE_FEED, True, why), "shoe")

"""The shoe on the daemon's side: frames journaled exactly once, statuses that halt play, ``shoe reset``.

The shoe's reader calls :func:`on_shoe_frame` on the daemon's loop (through
:class:`controller.daemon.shoe_link.ShoeLink`) and acknowledges the frame only
when it returns True, so a card is never lost and never taken twice
(docs/daemon.md, "Exactly once"); a line status becomes a journaled device
input when it must stop a deal (docs/daemon.md, "Shoe statuses").
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from controller.daemon.commands import error_reply
from controller.daemon.host import DaemonHost
from controller.daemon.journal import JournalFault
from controller.devices import SHOE_FAULT, SHOE_HELLO, SHOE_LID
from controller.inputs import CardSeen, DeviceStatus
from drivers.shoe import FrameId, ShoeCard, ShoeError, ShoeEvent, ShoeStatus

log = logging.getLogger("croupier.daemon")


#: How a protocol error's words start in the shoe fault's detail: one such fault at a time is journaled.
PROTOCOL_ERROR = "protocol error: "

#: Shoe frames accepted (heartbeats, statuses) before the shoe cursor is journaled without an input:
#: well under 128, so a restarted reader never takes a new frame for an old one (docs/daemon.md).
SHOE_CURSOR_LAG = 64


def on_shoe_frame(d: DaemonHost, frame: FrameId | None, event: ShoeEvent | None) -> bool:
    """Loop thread: take a shoe frame (or a line status: ``frame`` None); True once it is durable.

    A card is journaled with its frame id; another frame moves the journal's shoe cursor
    when it starts a new session (HELLO) or the cursor is :data:`SHOE_CURSOR_LAG` behind.
    """
    journal = d.service.journal if d.service is not None else None
    assert journal is not None
    try:
        said = event.status if isinstance(event, ShoeStatus) else None
        # A HELLO says so itself; a frame that cannot be decoded (a HELLO of another protocol version among
        # them) is no sign of a shoe that works, and must not pass the self-test.
        if frame is not None and said not in ("hello", "protocol_error"):
            # The frame's id goes with the frame's last row only: a card committed after a row that already
            # carried its frame id would be lost to a kill between the two (the shoe's resend taken for a
            # frame already journaled).
            _shoe_heard(d, frame, last=event is None)
        if event is not None:
            on_shoe_event(d, event, frame)
        cursor = journal.shoe_cursor
        if frame is not None and cursor != frame and (
            cursor is None or cursor.session != frame.session
            or (frame.seq - cursor.seq) & 0xFF >= SHOE_CURSOR_LAG
        ):
            journal.record_shoe_frame(frame)
    except JournalFault as exc:
        d.journal_faulted(exc)
        return False
    except Exception:
        # A bug after the commit must not make the shoe's resend a second card: the frame is
        # durable exactly when the journal's cursor is this frame.
        log.exception("shoe frame %s (%r) failed", frame, event)
        return frame is not None and journal.shoe_cursor == frame
    return True


def _shoe_heard(d: DaemonHost, frame: FrameId, last: bool) -> None:
    """Any good v1 frame is the shoe's hello for the self-test: a shoe that was running when the
    daemon restarted sends no HELLO (it resends the frame it holds, or answers STATUS_REQUEST),
    and must not be taken for a silent one (docs/daemon.md, "Start-up: the self-test"). The row
    carries ``frame`` only when it is the ``last`` the frame makes (the frame holds no event)."""
    assert d.service is not None
    if d.selftest.observe("hello", {"seq": frame.seq}) and SHOE_HELLO in d.service.table.offline:
        d.submit(DeviceStatus(SHOE_HELLO, True, "shoe answered"), "shoe", frame=frame if last else None)


def on_shoe_event(d: DaemonHost, event: ShoeEvent, frame: FrameId | None = None) -> None:
    """Loop thread: a card becomes an input; the line going down or up becomes a device input."""
    assert d.service is not None
    dispenser = d.dispenser
    if isinstance(event, ShoeCard):
        if dispenser is not None:
            dispenser.before_card(d.service.table)
        d.submit(CardSeen(event.card, event.burn), "shoe", frame=frame)
        if dispenser is not None:
            dispenser.after_card(d.service.table)
        return
    assert isinstance(event, ShoeStatus)
    if d.selftest.observe(event.status, event.detail) and SHOE_HELLO in d.service.table.offline:
        d.submit(DeviceStatus(SHOE_HELLO, True, f"shoe said {event.status}"), "shoe")
    d.shoe_status = {"at": time.time(), **event.to_dict()}
    d.publish_side("shoe_status", {"event": f"shoe_{event.status}", "table": d.config.table_id,
                                   "at": round(d.shoe_status["at"], 3), **event.detail})
    offline = d.service.table.offline
    burst = event.detail.get("burst") if event.status == "framing_error" else None
    if burst == "ongoing":
        pass  # counted on shoe_status each interval; the log has one line per burst (and its end)
    elif event.status == "protocol_error" and PROTOCOL_ERROR in offline.get(SHOE_FAULT, ""):
        log.info("shoe %s: %s (at fault for a protocol error already)", event.status, event.detail)
    elif event.status in ("fault", "protocol_error", "lid_open", "shoe_empty") or burst == "start":
        log.warning("shoe %s: %s", event.status, event.detail)
    else:
        log.info("shoe %s: %s", event.status, event.detail)
    # Statuses that must stop a deal are journaled device inputs (a tilt mid-deal, no close
    # while they last); the rest are only published and logged (docs/daemon.md, "Shoe statuses").
    if event.status == "disconnected" and "shoe" not in offline:
        reason = str(event.detail.get("reason", "disconnected"))
        d.submit(DeviceStatus("shoe", False, reason), "shoe", frame=frame)
    elif event.status == "connected" and "shoe" in offline:
        d.submit(DeviceStatus("shoe", True, "connected"), "shoe", frame=frame)
    elif event.status == "lid_open" and SHOE_LID not in offline:
        d.submit(DeviceStatus(SHOE_LID, False, "lid open"), "shoe", frame=frame)
    elif event.status == "lid_closed" and SHOE_LID in offline:
        d.submit(DeviceStatus(SHOE_LID, True, "lid closed"), "shoe", frame=frame)
    elif event.status == "fault":
        what = f"{event.detail.get('fault', 'fault')}: {event.detail.get('text', '')}".rstrip(": ")
        d.submit(DeviceStatus(SHOE_FAULT, False, what), "shoe", frame=frame)
    elif event.status == "protocol_error" and PROTOCOL_ERROR not in offline.get(SHOE_FAULT, ""):
        # Once until the shoe is reset: a firmware repeating a bad frame every second must not write
        # a journal row, an event and a warning each time (the first says what; the log keeps the rest).
        # A shoe at fault for something else (a jam) gets the words added: a card dropped then was only
        # logged, and a restart, or the journal read later, no longer said that a card was lost (a review).
        words = f"{PROTOCOL_ERROR}{event.detail['reason']}"
        before = offline.get(SHOE_FAULT)
        d.submit(DeviceStatus(SHOE_FAULT, False, words if before is None else f"{before}; {words}"), "shoe")
    elif event.status == "hello" and SHOE_FAULT in offline:
        d.submit(DeviceStatus(SHOE_FAULT, True, "shoe reset (HELLO)"), "shoe", frame=frame)
    elif burst == "start" and _plain(d) and SHOE_FAULT not in offline:
        # A plain line resends nothing: a line that is no card may have been one or two cards, out of the
        # shoe and on the layout, and the next card would be dealt in their place (a review, 2026-12-07).
        lost = (f"{event.detail['reason']}: a card may be lost (a plain line resends nothing): void the "
                "round if one is dealt, then shoe reset")
        d.submit(DeviceStatus(SHOE_FAULT, False, lost), "shoe")
    if dispenser is not None:
        dispenser.on_status(event.status, d.service.table)
        dispenser.after_apply(d.service.table)


def _plain(d: DaemonHost) -> bool:
    """Whether the table's shoe speaks the plain-line profile (docs/shoe-protocol.md)."""
    return d.shoe_profile is not None and d.shoe_profile.protocol != "v1"


async def shoe_command(d: DaemonHost, action: str, key: str) -> dict[str, Any]:
    """``shoe reset``: RESET to the shoe, e.g. after the dealer cleared a jam (docs/commands.md); on a plain
    line, which has no RESET, the dealer's word that the layout is right again (the key's, journaled).

    The RESET waits (off the event loop, at most ``RESET_CONFIRM_WAIT`` s, usually not at all) until
    the shoe holds no card this table was dealt: see ``ShoeReader.prepare_reset``.
    """
    if d.shoe is None:
        return error_reply("shoe reset: this table has no shoe")
    if _plain(d):
        assert d.service is not None
        d.shoe.reader.bursts.restart()  # a line lost from now on is a burst's first: a fault again
        if SHOE_FAULT in d.service.table.offline:
            cleared = DeviceStatus(SHOE_FAULT, True, "shoe reset by the dealer (plain line)")
            try:
                d.submit(cleared, f"command:{key}")
            except JournalFault as exc:
                d.journal_faulted(exc)
                return error_reply(f"shoe reset: the journal cannot be written ({exc}); the fault stands")
        return {"ok": True, "cmd": "shoe", "action": action, "sent": None}
    reader = d.shoe.reader
    try:
        await asyncio.to_thread(reader.prepare_reset)
        if d.dispenser is not None:
            d.dispenser.reset()  # the HELLO that answers voids an unanswered DISPENSE
        else:
            reader.reset(wait=0)  # on the loop: never waits here (the worker did)
    except ShoeError as exc:
        reader.cancel_reset()
        return error_reply(f"shoe reset: {exc}")
    log.info("RESET sent to the shoe")
    return {"ok": True, "cmd": "shoe", "action": action, "sent": "RESET"}


async def await_shoe_hello(d: DaemonHost) -> None:
    """The shoe's part of the self-test: its hello in time, else a journaled, visible fault."""
    assert d.shoe_profile is not None and d.service is not None
    if await d.selftest.wait_hello(d.hello_timeout):
        return
    what = (f"no {'HELLO' if d.shoe_profile.protocol == 'v1' else 'connection'} from "
            f"{d.shoe_profile.port} within {d.hello_timeout:g} s of start (self-test)")
    d.selftest.failed("shoe", what)
    log.error("shoe: %s; the table is halted until it says hello", what)
    if SHOE_HELLO not in d.service.table.offline:
        d.submit_from_device(DeviceStatus(SHOE_HELLO, False, what), "selftest")

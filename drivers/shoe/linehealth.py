"""What the reader tells about the line and the device, without flooding anyone.

Two small state machines the transport feeds, both pure (the caller passes
``now``), so their rules are tested without a port:

* :class:`ErrorBursts` — damaged bytes come in bursts (a bad cable, a wrong
  baud rate, a shoe resending a frame the line keeps mangling). The first
  error of a burst is reported at once; the rest are counted and reported as
  one ``framing_error`` per interval on the ``shoe_status`` side topic, and
  once more when the burst is over (a quiet interval). NAKs are rate-limited
  too, so a host can never be driven into a NAK storm.
* :class:`DeviceFlags` — a HEARTBEAT carries the lid, empty and faulted flags.
  A flag that says something the host has not been told by a LID, SHOE_EMPTY
  or FAULT message raises the same status those messages raise, once per
  change, so a shoe that reports its lid only in heartbeats halts play too.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Final, Protocol

from drivers.shoe.events import ShoeStatus
from drivers.shoe.messages import Fault, Heartbeat, Hello, Lid, Message, ShoeEmpty, ShuffleComplete

#: Seconds over which further framing errors are counted into one report.
REPORT_INTERVAL: Final = 1.0
#: Shortest time between two NAKs: a shoe resends at once on NAK, so this caps a damage loop at 10/s.
NAK_MIN_INTERVAL: Final = 0.1


class ErrorBursts:
    """Rate-limited reports of framing errors, and the NAK limiter (docs/shoe-protocol.md, host rule 6)."""

    def __init__(self, interval: float = REPORT_INTERVAL, nak_interval: float = NAK_MIN_INTERVAL) -> None:
        self.interval = interval
        self.nak_interval = nak_interval
        self._active = False
        self._burst_start = 0.0
        self._period_start = 0.0
        self._period_errors = 0
        self._period_naks = 0
        self._burst_errors = 0
        self._burst_naks = 0
        self._last_reason = ""
        self._last_nak: float | None = None
        #: Totals since the reader started, for ``status``.
        self.total_errors = 0
        self.total_naks = 0

    def error(self, reason: str, raw: bytes, now: float) -> ShoeStatus | None:
        """Count one error; the status to report now (the first of a burst), else None."""
        self.total_errors += 1
        self._last_reason = reason
        self._burst_errors += 1
        if self._active:
            self._period_errors += 1
            return None
        self._active = True
        self._burst_start = self._period_start = now
        detail = {"reason": reason, "raw": raw.hex(" "), "count": 1, "burst": "start"}
        return ShoeStatus("framing_error", detail)

    def may_nak(self, now: float) -> bool:
        """True (and counted) if a NAK may go out now."""
        if self._last_nak is not None and now - self._last_nak < self.nak_interval:
            return False
        self._last_nak = now
        self.total_naks += 1
        self._burst_naks += 1
        self._period_naks += 1
        return True

    def restart(self) -> None:
        """The next error reported at once, as a burst's first: after the dealer's ``shoe reset`` on a plain
        line, a line lost is news (counted into the burst before, it halted nothing: a review, 2026-12-07)."""
        self._active = False
        self._burst_errors = self._burst_naks = self._period_errors = self._period_naks = 0

    def tick(self, now: float) -> ShoeStatus | None:
        """Called on every pass of the reader loop: the per-interval count, or the end of a burst."""
        if not self._active or now - self._period_start < self.interval:
            return None
        span = round(now - self._period_start, 3)
        if self._period_errors:
            count = self._period_errors
            status = ShoeStatus("framing_error", {
                "reason": f"{count} more framing errors in {span} s (last: {self._last_reason})",
                "count": count, "naks": self._period_naks, "interval": span, "burst": "ongoing"})
            self._period_start, self._period_errors, self._period_naks = now, 0, 0
            return status
        # A quiet interval: the burst is over. A lone error was reported in full already.
        self._active = False
        total, naks = self._burst_errors, self._burst_naks
        self._burst_errors = self._burst_naks = self._period_naks = 0
        if total <= 1:
            return None
        return ShoeStatus("framing_error", {
            "reason": f"burst over: {total} framing errors and {naks} NAKs in "
                      f"{round(now - self._burst_start, 3)} s (last: {self._last_reason})",
            "count": total, "naks": naks, "burst": "end"})


@dataclass
class DeviceFlags:
    """The device state the host has been told, so a HEARTBEAT raises only what is news."""

    lid_open: bool = False
    empty: bool = False
    faulted: bool = False

    def on_message(self, message: Message) -> list[ShoeStatus]:
        """Update from a delivered message; the statuses a HEARTBEAT's flags add (else none)."""
        if isinstance(message, Lid):
            self.lid_open = message.open
        elif isinstance(message, ShoeEmpty):
            self.empty = True
        elif isinstance(message, ShuffleComplete):
            self.empty = False
        elif isinstance(message, Fault):
            self.faulted = True
        elif isinstance(message, Hello):
            self.faulted = False  # only a HELLO (power-up or RESET) clears a fault
        elif isinstance(message, Heartbeat):
            return self._from_heartbeat(message)
        return []

    def _from_heartbeat(self, beat: Heartbeat) -> list[ShoeStatus]:
        out: list[ShoeStatus] = []
        source = {"source": "heartbeat"}
        if beat.lid_open != self.lid_open:
            self.lid_open = beat.lid_open
            out.append(ShoeStatus("lid_open" if beat.lid_open else "lid_closed", source))
        if beat.empty and not self.empty:
            out.append(ShoeStatus("shoe_empty", source))
        self.empty = beat.empty
        if beat.faulted and not self.faulted:
            self.faulted = True
            out.append(ShoeStatus("fault", {"code": 0, "fault": "unknown",
                                            "text": "faulted flag set in HEARTBEAT", **source}))
        return out


class LineReport(Protocol):
    """What :func:`shoe_health` reads of a reader (a :class:`drivers.shoe.transport.ShoeReader`)."""

    last_heartbeat: Heartbeat | None
    flags: DeviceFlags
    bursts: ErrorBursts
    unknown_types: dict[int, int]


def shoe_health(reader: LineReport) -> dict[str, Any]:
    """What ``status`` shows of a reader: the flags it knows, the last heartbeat, the counters."""
    beat = reader.last_heartbeat
    return {
        "flags": asdict(reader.flags),
        "last_heartbeat": None if beat is None else asdict(beat),
        "framing_errors": reader.bursts.total_errors,
        "naks": reader.bursts.total_naks,
        "unknown_types": {f"0x{t:02X}": n for t, n in sorted(reader.unknown_types.items())},
    }

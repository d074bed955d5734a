"""``croupier shoe conformance``: the scripted checks a shoe or shuffler must pass (docs/shoe-conformance.md).

The kit is the host, through a :class:`~drivers.shoe.probe.Probe` that does only what each check
says. Checks run in a fixed order, each from a known state (the shoe idle, everything ACKed), and
each records pass, fail or skip with what was seen, so a maker can tell what to fix. Times are
checked within a tolerance (``TOLERANCE`` of the documented value, plus a fixed ``SLACK`` for the
line and the host), never exactly.

Steps that need something done to the device (open the lid, make it run empty, jam it) go through
an *operator*: a person at a terminal, or the simulator's control socket; without one they are
skipped, never passed.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Final

from drivers.shoe.codec import encode_frame
from drivers.shoe.messages import (
    PROTOCOL_VERSION,
    Ack,
    CardMsg,
    Dispense,
    Fault,
    Heartbeat,
    Hello,
    Lid,
    Nak,
    Reset,
    ShoeEmpty,
    StatusRequest,
)
from drivers.shoe.probe import Probe, Seen
from drivers.shoe.profile import ShoeProfile

#: Relative tolerance on a documented time, and fixed slack for the line and the host (seconds).
TOLERANCE: Final = 0.25
SLACK: Final = 0.08
#: The resend waits the document asks for: 200 ms doubling up to 1 s.
RESEND_WAITS: Final = (0.2, 0.4, 0.8, 1.0)

#: An operator does what a prompt asks to the device (``lid open``...); False if it cannot.
Operator = Callable[[str], bool]


@dataclass
class CheckResult:
    name: str
    passed: bool | None  # None: skipped
    seen: str
    rule: str

    @property
    def verdict(self) -> str:
        return {True: "PASS", False: "FAIL", None: "SKIP"}[self.passed]


class CheckFailed(Exception):
    """A check saw something the document forbids; the message says what."""


def _within(got: float, want: float) -> bool:
    return abs(got - want) <= want * TOLERANCE + SLACK


def _need(seen: Seen | None, what: str) -> Seen:
    if seen is None:
        raise CheckFailed(f"no {what}")
    return seen


def _is(kind: type) -> Callable[[Seen], bool]:
    return lambda s: isinstance(s.frame.message, kind)


class Conformance:
    """Runs the checks against one device; :attr:`results` in order."""

    def __init__(self, probe: Probe, profile: ShoeProfile | None, operator: Operator | None) -> None:
        self.probe = probe
        self.profile = profile
        self.operator = operator
        self.results: list[CheckResult] = []

    # --- helpers ---------------------------------------------------------------------------------

    def settle(self, quiet: float = 0.3) -> None:
        """ACK everything until the shoe has been quiet a moment (a heartbeat may still come later)."""
        self.probe.collect(quiet)

    def in_flight(self) -> Seen:
        """Ask for a HEARTBEAT and do not ACK it: a frame in flight, as a check needs one."""
        self.settle(0.1)
        self.probe.command(StatusRequest())
        return _need(self.probe.next(1.5, _is(Heartbeat)), "HEARTBEAT within 1.5 s of STATUS_REQUEST")

    def run(self, name: str, rule: str, check: Callable[[], str],
            on_result: Callable[[CheckResult], None] | None = None) -> None:
        try:
            result = CheckResult(name, True, check(), rule)
        except CheckFailed as exc:
            result = CheckResult(name, False, str(exc), rule)
        except _Skip as exc:
            result = CheckResult(name, None, str(exc), rule)
        self.results.append(result)
        if on_result is not None:
            on_result(result)
        with contextlib.suppress(OSError):  # the port is gone: the next check says so
            self.settle(0.2)

    # --- the checks ------------------------------------------------------------------------------

    def check_hello(self) -> str:
        self.settle()
        self.probe.command(Reset())
        start = time.monotonic()
        seen = _need(self.probe.next(2.0, _is(Hello)), "HELLO within 2 s of RESET")
        self.probe.ack(seen)
        hello = seen.frame.message
        assert isinstance(hello, Hello)
        took = f"{(seen.at - start) * 1000:.0f} ms after RESET"
        if seen.frame.seq != 0:
            raise CheckFailed(f"HELLO with SEQ {seen.frame.seq}, not 0 ({took})")
        if hello.protocol != PROTOCOL_VERSION:
            raise CheckFailed(f"HELLO announces protocol version {hello.protocol}, not {PROTOCOL_VERSION}")
        who = f"{hello.model!r} {hello.firmware!r} {hello.serial!r}"
        return f"HELLO seq 0, protocol {hello.protocol}, {who}, {took}"

    def check_status_request(self) -> str:
        self.settle()
        self.probe.command(StatusRequest())
        start = time.monotonic()
        seen = _need(self.probe.next(0.5 + SLACK, _is(Heartbeat)), "HEARTBEAT within 0.5 s of STATUS_REQUEST")
        self.probe.ack(seen)
        return f"HEARTBEAT seq {seen.frame.seq} {(seen.at - start) * 1000:.0f} ms after STATUS_REQUEST"

    def check_heartbeat_cadence(self) -> str:
        self.settle()
        got = [s for s in self.probe.collect(3.6) if isinstance(s.frame.message, Heartbeat)]
        gaps = [b.at - a.at for a, b in zip(got, got[1:], strict=False)]
        shown = ", ".join(f"{g:.2f}" for g in gaps)
        if len(got) < 3:
            raise CheckFailed(f"{len(got)} heartbeats in 3.6 s idle (want one per second)")
        if not all(_within(g, 1.0) for g in gaps):
            raise CheckFailed(f"heartbeat gaps {shown} s (want 1.0 s each)")
        return f"{len(got)} heartbeats, gaps {shown} s"

    def timed_resend(self, first: Seen, k: int) -> Seen:
        """The ``k``-th resend of the unacknowledged frame ``first``, within 2 s; anything else fails."""
        seen = _need(self.probe.next(2.0), f"resend {k} of an unacknowledged frame within 2 s")
        if seen.frame != first.frame:
            raise CheckFailed(f"while seq {first.frame.seq} was unacknowledged, got {seen}, not a resend")
        return seen

    def check_resend_timing(self) -> str:
        first = self.in_flight()
        times = [first.at]
        while len(times) <= len(RESEND_WAITS):
            times.append(self.timed_resend(first, len(times)).at)
        self.probe.ack(first)
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        shown = ", ".join(f"{g:.2f}" for g in gaps)
        if not all(_within(g, w) for g, w in zip(gaps, RESEND_WAITS, strict=True)):
            raise CheckFailed(f"resend waits {shown} s (want {', '.join(map(str, RESEND_WAITS))})")
        return f"seq {first.frame.seq} resent identical after {shown} s"

    def check_nak(self) -> str:
        """The NAK is sent just after the frame's second timed resend, when the next is 0.8 s away. Sent just
        after the frame itself, a host slow by 50 ms (a loaded machine) met the 0.2 s timer's resend within
        150 ms of its NAK and took it for the NAK's: a shoe that ignores NAK n but takes NAK n+1 as an ACK
        passed, and one that ignores every NAK failed for another reason than its own."""
        first = self.in_flight()
        seq = first.frame.seq
        self.timed_resend(first, 1)
        timed = self.timed_resend(first, 2)
        self.probe.send((seq + 5) & 0xFF, Ack())  # an ACK for another SEQ is ignored ...
        self.probe.send(seq, Nak())  # ... and NAK n for the frame in flight resends it now
        start = time.monotonic()
        again = _need(self.probe.next(0.15), f"resend of seq {seq} within 150 ms of NAK {seq}")
        if again.frame != first.frame:
            raise CheckFailed(f"NAK {seq} answered with {again}, not a resend of seq {seq}")
        if not again.at - timed.at < RESEND_WAITS[2] * (1 - TOLERANCE) - SLACK:
            raise CheckFailed(f"the resend came {again.at - timed.at:.2f} s after the timed resend, too late "
                              "to tell the NAK's from the next timed one (a busy host: run the kit again)")
        took = (again.at - start) * 1000
        self.probe.send((seq + 1) & 0xFF, Nak())  # NAK n+1: acknowledges the frame in flight
        # Past the longest wait a shoe may then keep (one that doubles it on a NAK is at 1 s by now).
        later = self.probe.next(RESEND_WAITS[-1] * (1 + TOLERANCE) + SLACK, lambda s: s.frame.seq == seq)
        if later is not None:
            raise CheckFailed(f"seq {seq} resent after NAK {(seq + 1) & 0xFF}, which acknowledges it")
        return (f"NAK {seq} resent in {took:.0f} ms; ACK of another SEQ ignored; "
                f"NAK {(seq + 1) & 0xFF} acknowledged it")

    def check_damaged_host_frame(self) -> str:
        first = self.in_flight()
        bad = bytearray(encode_frame(first.frame.seq, Ack()))
        bad[-2] ^= 0x01  # the CRC's low byte
        self.probe.write(bytes(bad))
        again = _need(self.probe.next(1.0, lambda s: s.frame == first.frame),
                      f"resend of seq {first.frame.seq} after an ACK with a bad CRC (it must be ignored)")
        self.probe.ack(again)
        later = (again.at - first.at) * 1000
        return f"ACK with a bad CRC ignored: seq {first.frame.seq} resent {later:.0f} ms later"

    def check_stuffing(self) -> str:
        """Drive the SEQ through 7D, 7E and 7F both ways: the shoe's frames and our ACKs are stuffed."""
        self.settle()
        specials = {0x7D, 0x7E, 0x7F}
        seen_special: set[int] = set()
        deadline = time.monotonic() + 30
        while seen_special != specials:
            if time.monotonic() > deadline:
                raise CheckFailed(f"30 s and frames with SEQ {sorted(specials - seen_special)} never came")
            self.probe.command(StatusRequest(), seq=0x7E)  # a stuffed command SEQ too
            seen = self.probe.next(1.5, _is(Heartbeat))
            if seen is None:
                bad = f"; bad frames: {self.probe.errors[-1]}" if self.probe.errors else ""
                raise CheckFailed(f"no HEARTBEAT for STATUS_REQUEST (sent at SEQ 0x7E) within 1.5 s{bad}")
            self.probe.ack(seen)
            seq = seen.frame.seq
            if seq in specials:
                seen_special.add(seq)
                again = self.probe.next(0.35, lambda s: s.frame.seq == seq)  # noqa: B023 - used at once
                if again is not None:
                    raise CheckFailed(f"seq 0x{seen.frame.seq:02X} resent after its ACK (stuffed as 7D "
                                      f"{seen.frame.seq ^ 0x20:02X}): the shoe did not unstuff it")
        return "frames with SEQ 7D, 7E, 7F decoded; their stuffed ACKs and a command at SEQ 7E understood"

    def check_line_clean(self) -> str:
        if self.probe.errors:
            errors = self.probe.errors
            raise CheckFailed(f"{len(errors)} bad frames on a clean line, first: {errors[0]}")
        return "every frame from the shoe had a good CRC and decoded"

    def check_reset_resends(self) -> str:
        first = self.in_flight()
        self.probe.command(Reset())
        hello = _need(self.probe.next(2.0, _is(Hello)), "HELLO after RESET")
        self.probe.ack(hello)
        if hello.frame.seq != 0:
            raise CheckFailed(f"HELLO after RESET has SEQ {hello.frame.seq}, not 0")
        again = _need(self.probe.next(0.5), f"frame within 0.5 s of HELLO: the unacknowledged {first} "
                                            "was not sent again")
        self.probe.ack(again)
        if again.frame.message != first.frame.message or again.frame.seq != 1:
            raise CheckFailed(f"after HELLO 0 came {again}, not the unacknowledged "
                              f"{type(first.frame.message).__name__} as seq 1")
        return f"HELLO seq 0, then the unacknowledged {again} (was seq {first.frame.seq})"

    def check_unplug(self) -> str:
        first = self.in_flight()
        self.probe.close()
        time.sleep(1.5)
        self.probe.open()
        again = _need(self.probe.next(3.0, lambda s: s.frame == first.frame),
                      f"seq {first.frame.seq} resent after the port was closed 1.5 s and reopened")
        self.probe.ack(again)
        return f"seq {first.frame.seq} held across the unplug, resent {again.at - first.at:.1f} s later"

    def check_dispense(self) -> str:
        if self.profile is None or self.profile.mode != "dealing_shuffler":
            raise _Skip("the profile is not a dealing shuffler (mode: dealing_shuffler)")
        self.settle()
        self.probe.command(Dispense())
        start = time.monotonic()
        timeout = self.profile.dispense_timeout
        card = _need(self.probe.next(timeout, _is(CardMsg)), f"CARD within {timeout:g} s of DISPENSE")
        self.probe.ack(card)
        extra = [s for s in self.probe.collect(1.0) if isinstance(s.frame.message, CardMsg)]
        if extra:
            raise CheckFailed(f"one DISPENSE gave {1 + len(extra)} cards")
        return f"one DISPENSE, one {card} after {(card.at - start) * 1000:.0f} ms"

    def check_operator(self, action: str, undo: str | None, kind: type, flag: str | None) -> str:
        if self.operator is None:
            raise _Skip(f"needs an operator to '{action}' (--operator or --sim-control)")
        self.settle()
        if not self.operator(action):
            raise _Skip(f"the operator could not '{action}'")
        seen = _need(self.probe.next(30.0, _is(kind)), f"{kind.__name__} within 30 s of '{action}'")
        self.probe.ack(seen)
        note = f"{seen}"
        if flag is not None:
            self.probe.command(StatusRequest())
            beat = _need(self.probe.next(1.5, _is(Heartbeat)), "HEARTBEAT for STATUS_REQUEST")
            self.probe.ack(beat)
            if not getattr(beat.frame.message, flag):
                raise CheckFailed(f"after {seen} the HEARTBEAT flag {flag} is not set")
            note += f", then HEARTBEAT with {flag}"
        if undo == "reset":
            self.probe.command(Reset())
            hello = _need(self.probe.next(2.0, _is(Hello)), "HELLO after RESET")
            self.probe.ack(hello)
            self.settle()
            self.probe.command(StatusRequest())
            beat = _need(self.probe.next(1.5, _is(Heartbeat)), "HEARTBEAT after RESET")
            self.probe.ack(beat)
            if flag is not None and getattr(beat.frame.message, flag):
                raise CheckFailed(f"RESET did not clear the HEARTBEAT flag {flag}")
            note += "; RESET cleared it"
        elif undo is not None:
            self.operator(undo)
            back = _need(self.probe.next(30.0, _is(kind)), f"{kind.__name__} within 30 s of '{undo}'")
            self.probe.ack(back)
            note += f"; '{undo}' gave {back}"
        return note

    def run_all(self, only: set[str] | None = None,
                on_result: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
        self.settle(1.2)  # a frame the shoe sent before we opened (its power-up HELLO) is resent within 1 s
        for name, rule, check in self.plan():
            if only is None or name in only:
                self.run(name, rule, check, on_result)
        self.run("line_clean", "every frame the shoe sent during the run had a good CRC and payload",
                 self.check_line_clean, on_result)
        return self.results

    def plan(self) -> list[tuple[str, str, Callable[[], str]]]:
        op = self.check_operator
        return [
            ("hello", "RESET is answered by HELLO with SEQ 0 and protocol version 1", self.check_hello),
            ("status_request", "STATUS_REQUEST is answered by a HEARTBEAT within 0.5 s",
             self.check_status_request),
            ("heartbeat_cadence", "an idle shoe sends a HEARTBEAT every 1 s", self.check_heartbeat_cadence),
            ("resend_timing", "an unacknowledged frame is resent, identical, after 200, 400, 800, 1000 ms",
             self.check_resend_timing),
            ("nak", "NAK n resends frame n at once; NAK n+1 acknowledges it; an ACK of another SEQ is not",
             self.check_nak),
            ("damaged_host_frame", "a host frame with a bad CRC is ignored", self.check_damaged_host_frame),
            ("stuffing", "7D, 7E and 7F are stuffed both ways (SEQs 7D..7F, a command at SEQ 7E)",
             self.check_stuffing),
            ("reset", "after RESET: HELLO 0, then the unacknowledged frame again as SEQ 1",
             self.check_reset_resends),
            ("unplug", "a frame not acknowledged is held across an unplug and resent", self.check_unplug),
            ("dispense", "(dealing shuffler) one DISPENSE gives exactly one CARD", self.check_dispense),
            ("lid", "LID open and closed are reported, and the HEARTBEAT lid flag follows",
             lambda: op("lid open", "lid closed", Lid, "lid_open")),
            ("fault", "FAULT is reported, the HEARTBEAT faulted flag is set, and RESET clears it",
             lambda: op("fault jam", "reset", Fault, "faulted")),
            ("empty", "SHOE_EMPTY is reported and the HEARTBEAT empty flag is set",
             lambda: op("empty", None, ShoeEmpty, None)),
        ]


class _Skip(Exception):
    """The check cannot run here (no operator, not a shuffler); the message says why."""


def report(results: list[CheckResult], url: str, profile: str | None) -> dict[str, Any]:
    """The JSON report: every check with its verdict, and the totals."""
    count = {v: sum(r.verdict == v for r in results) for v in ("PASS", "FAIL", "SKIP")}
    return {"port": url, "profile": profile, "protocol": PROTOCOL_VERSION,
            "checks": [{**asdict(r), "verdict": r.verdict} for r in results],
            "passed": count["PASS"], "failed": count["FAIL"], "skipped": count["SKIP"]}

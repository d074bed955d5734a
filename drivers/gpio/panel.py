"""The panel driver: pins in, plain pin events out, lamps lit as it is told; it knows pins, not games.

The daemon owns one :class:`Panel` per pin map, through :class:`controller.panels.link.PanelLink`,
which says what the events mean. Its contract:

* ``Panel(pin_map, backend, on_event)`` opens every pin of the map; every lamp is off.
* ``on_event(event)`` is called with a :class:`PinEvent` for every debounced
  change of an input (a press or release, a stuck button and its recovery,
  chips on or off a spot's sensor, a panel's presence loop) and every repeat
  step of a held ``bet_up``/``bet_down``, from the panel's worker thread,
  always with :attr:`Panel.lock` held, so the calls form one total order.
  ``on_event`` must not block; it may call :meth:`show`.
* ``show(modes)``: the lamps to light, lamp name -> :class:`LampMode`.
* ``start()`` starts the worker thread; ``stop()`` stops it and releases the pins.

Every edge from every pin goes into one queue, stamped with the clock when
the backend reported it; the worker replays edges and debounce deadlines in
time order, so simultaneous presses come out in a definite order and a
quick press-release between two wake-ups is still a press. Tests drive the
same code without the thread: an injected clock and :meth:`pump`.
"""

from __future__ import annotations

import contextlib
import logging
import math
import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from drivers.gpio.backend import InputLine, OutputLine, PinBackend
from drivers.gpio.betkeys import HoldRepeat
from drivers.gpio.debounce import Change, Debouncer
from drivers.gpio.events import EDGES, InputKind, LampMode, PinEvent
from drivers.gpio.line_check import InputCheck, probe
from drivers.gpio.pinmap import InputPin, LampPin, PinMap

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Input:
    """One input pin: what it is, its debouncer and the seq of its last edge (for ordering)."""

    kind: InputKind
    seat: int | None  # None: the dealer panel
    name: str  # the button's word or the spot
    pin: int
    chip: str
    line: InputLine | None
    debouncer: Debouncer
    last_edge: int = 0
    #: bet_up/bet_down with press-and-hold repeat (the map's ``bet_hold``); None otherwise.
    hold: HoldRepeat | None = None

    def deadline(self) -> float | None:
        """The earliest of the debouncer's and the hold repeat's next deadline."""
        d = self.debouncer.deadline()
        h = None if self.hold is None else self.hold.deadline()
        if d is None or h is None:
            return h if d is None else d
        return min(d, h)


class Panel:
    """Seat panels, the dealer panel and the tower light of one pin map."""

    def __init__(self, pin_map: PinMap, backend: PinBackend, on_event: Callable[[PinEvent], None],
                 *, clock: Callable[[], float] = time.monotonic) -> None:
        self.map = pin_map
        self.backend = backend
        self._on_event = on_event
        self._clock = clock
        #: Held around every ``on_event`` call; hold it to change the lamps in step with the events.
        self.lock = threading.RLock()
        #: Notified by the worker after every pump, so :meth:`flush` wakes when there is news, not on a poll.
        self._pumped = threading.Condition(self.lock)
        self._queue: queue.SimpleQueue[tuple[int, int, bool, float] | None] = queue.SimpleQueue()
        self._seq = 0
        self._done_seq = 0  # the last edge seq replayed (see flush)
        self._seq_lock = threading.Lock()
        self._pending: list[tuple[int, int, bool, float]] = []
        self._inputs: list[_Input] = []
        self._lamps: dict[str, OutputLine] = {}
        self._modes: dict[str, LampMode] = {}
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._started = False
        self._lamps_failed = False  # a lamp write raised: reported once, until every failed line is written
        self._failed_lamps: set[str] = set()
        now = clock()
        try:
            self._open(now)
        except Exception:
            self._close_lines()
            raise
        self._check = InputCheck(pin_map.input_check_s, now)  # every input line read again (line_check)
        self._probes = [probe(e.line, e.chip, e.pin, e.kind, e.seat, e.name) for e in self._inputs]
        self._apply_lamps(now)

    # ------------------------------------------------------------------ set-up
    def _open(self, now: float) -> None:
        m = self.map
        for seat, panel in m.seats.items():
            for word, button in panel.buttons.items():
                self._add_input("button", seat, word, button, now)
                if button.lamp is not None:
                    self._add_lamp(f"seat {seat} {word}", button.lamp)
            for spot, spec in panel.spots.items():
                self._add_input("sensor", seat, spot, spec.sensor, now)
                if spec.lamp is not None:
                    self._add_lamp(f"seat {seat} spot {spot}", spec.lamp)
            if panel.presence is not None:
                self._add_input("presence", seat, "presence", panel.presence, now)
        if m.dealer is not None:
            for word, button in m.dealer.buttons.items():
                self._add_input("button", None, word, button, now)
                if button.lamp is not None:
                    self._add_lamp(f"dealer {word}", button.lamp)
            if m.dealer.presence is not None:
                self._add_input("presence", None, "presence", m.dealer.presence, now)
        if m.tower is not None:
            for name in ("idle", "betting", "in_play", "fault"):
                self._add_lamp(f"tower {name}", getattr(m.tower, name))
        for k, canary in enumerate(m.canaries):  # judged by the check alone (line_check), never reported
            self._add_input("canary", None, f"canary {k}", canary, now)

    def _add_input(self, kind: InputKind, seat: int | None, name: str, spec: InputPin, now: float) -> None:
        ms = self.map.debounce_ms if spec.debounce_ms is None else spec.debounce_ms
        stuck = self.map.stuck_after_s if kind == "button" else None
        index = len(self._inputs)
        chip = self.map.chip_of(spec)
        entry = _Input(kind, seat, name, spec.pin, chip, None, Debouncer(ms / 1000.0, stuck, False, now))
        if kind == "button" and seat is not None and name in ("bet_up", "bet_down") and self.map.bet_hold:
            entry.hold = HoldRepeat(self.map.bet_hold)
        self._inputs.append(entry)
        entry.line = self.backend.input(
            spec.pin, pull=spec.pull, active_high=spec.active == "high",
            on_change=lambda active: self._edge(index, active), chip=chip)
        entry.debouncer = Debouncer(ms / 1000.0, stuck, entry.line.is_active, now)

    def _add_lamp(self, lamp_id: str, spec: LampPin) -> None:
        self._lamps[lamp_id] = self.backend.output(spec.pin, active_high=spec.active == "high",
                                                   chip=self.map.chip_of(spec))

    def resample(self) -> None:
        """Take every input's level now as its settled starting level (before :meth:`start`): simulated pins
        set up after the panel opened them (a presence loop closed, chips put back) start there, no edges."""
        if self._started:
            raise RuntimeError("resample() is for a panel not started yet")
        now = self._clock()
        with self.lock:
            for entry in self._inputs:
                assert entry.line is not None
                old = entry.debouncer
                entry.debouncer = Debouncer(old.settle, old.stuck_after, entry.line.is_active, now)

    def sensors(self) -> dict[tuple[int, str], bool]:
        """Each seat spot's chip sensor as it has settled: (seat, spot) -> covered."""
        return {(seat, name): on for (seat, name), on in self.settled("sensor").items() if seat is not None}

    def settled(self, kind: str) -> dict[tuple[int | None, str], bool]:
        """Each input of ``kind`` (sensor, button, presence) as settled: (seat or None, name) -> active."""
        with self.lock:
            return {(e.seat, e.name): e.debouncer.stable for e in self._inputs if e.kind == kind}

    def unconfirmed_lamps(self) -> None:
        """Every lamp line failed until written (a restart on a journaled lamp fault): each pass tries them
        all, "written" once every one is; a line the view leaves dark is tried too (a review, 2026-12-07)."""
        with self.lock:
            self._failed_lamps, self._lamps_failed = set(self._lamps), True

    # --------------------------------------------------------------- the API
    def start(self, *, thread: bool = True) -> None:
        """Report panels already missing, then (with ``thread``) run the worker. Call once."""
        if self._started:
            raise RuntimeError("panel already started")
        self._started = True
        with self.lock:
            for entry in self._inputs:
                if entry.kind == "presence" and not entry.debouncer.stable:
                    self._emit(PinEvent("presence", entry.seat, entry.name, entry.pin, "inactive",
                                        chip=entry.chip))
            levels = [e.debouncer.stable for e in self._inputs]
            if self._check.at_open(self._probes, [e.kind == "button" for e in self._inputs], levels):
                self._emit(PinEvent("inputs", None, "inputs", -1, "failed", detail=self._check.detail))
        if thread:
            self._thread = threading.Thread(target=self._run, name="gpio-panel", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop the worker, turn the lamps off and release every pin."""
        self._stopping.set()
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        with self.lock:
            for out in self._lamps.values():
                with contextlib.suppress(OSError):  # a dead expander: every pin is released all the same
                    out.set(False)
            self._close_lines()

    def show(self, modes: Mapping[str, LampMode]) -> None:
        """Light the lamps as ``modes`` says (lamp name -> mode); a lamp it does not name is off."""
        with self.lock:
            self._modes = dict(modes)
            self._apply_lamps(self._clock())

    def lamp_modes(self) -> dict[str, LampMode]:
        with self.lock:
            return dict(self._modes)

    def lamp_levels(self) -> dict[str, bool]:
        """Whether each lamp is lit right now (a blinking lamp is caught mid-blink)."""
        with self.lock:
            return {lamp_id: out.lit for lamp_id, out in self._lamps.items()}

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every edge reported so far has settled and been handed on; False on timeout.

        This is what a simulated finger needs instead of sleeping "long enough":
        after ``flush`` the panel has seen the pins as they are now (a press has
        been reported, chips lifted are known to the listener), however busy the
        machine is. It waits the debounce time, because that is when a level counts.
        With the worker running it sleeps until the worker has pumped (no polling);
        without it, it pumps itself at each debounce deadline.
        """
        with self._seq_lock:
            target = self._seq
        deadline = time.monotonic() + timeout
        with self._pumped:
            while True:
                if self._thread is None:
                    self.pump()
                settled = all(e.debouncer.raw == e.debouncer.stable for e in self._inputs)
                if self._done_seq >= target and settled:
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                if self._thread is None:
                    due = [d for e in self._inputs if (d := e.debouncer.deadline()) is not None]
                    left = min(left, max(0.0, min(due) - self._clock())) if due else left
                self._pumped.wait(left)

    def pump(self, now: float | None = None) -> None:
        """Process every edge reported so far and every deadline up to ``now`` (the clock's by default)."""
        read, before = None, self._seq  # the edges before the read: a later one is newer than its level
        if not self._stopping.is_set() and (self._clock() if now is None else now) >= self._check.due:
            read = self._check.read(self._probes, self._stopping.is_set)  # unlocked: a hung bus is slow
        with self.lock:
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    self._pending.append(item)
            now = self._clock() if now is None else now
            self._replay(now)
            if read is not None and not self._stopping.is_set():
                self._checked(read, now, before)
            self._apply_lamps(now)
            self._pumped.notify_all()

    # -------------------------------------------------------------- internals
    def _edge(self, index: int, active: bool) -> None:
        """Backend callback (any thread): stamp and queue; never blocks on the panel's lock."""
        t = self._clock()
        with self._seq_lock:
            self._seq += 1
            seq = self._seq
        self._queue.put((seq, index, active, t))

    def _replay(self, now: float) -> None:
        pending = sorted(self._pending)
        self._pending = []
        i = 0
        while True:
            due = [(d, e.last_edge, k) for k, e in enumerate(self._inputs)
                   if (d := e.deadline()) is not None and d <= now]
            first = min(due) if due else None
            # An edge at the very instant a level would settle comes first: a level must hold longer than
            # the debounce time, so a bounce of exactly debounce_ms (5 ms at the floor) is no second press
            # (a review, 2026-12-07: it was).
            if i < len(pending) and (first is None or pending[i][3] <= first[0]):
                seq, index, active, t = pending[i]
                i += 1
                entry = self._inputs[index]
                entry.last_edge = seq
                self._done_seq = max(self._done_seq, seq)
                entry.debouncer.edge(active, t)
            elif first is not None:
                at, entry = first[0], self._inputs[first[2]]
                for change in entry.debouncer.poll(at):
                    self._changed(entry, change, at)
                if entry.hold is not None:
                    for units in entry.hold.poll(at):
                        self._emit(PinEvent(entry.kind, entry.seat, entry.name, entry.pin, "repeat", units,
                                            entry.chip))
            else:
                return

    def _changed(self, entry: _Input, change: Change, at: float) -> None:
        if entry.kind == "canary":  # no input of a panel: the check reads it (drivers.gpio.line_check), at
            self._check.due = min(self._check.due, at)  # once when it moved (a dying chip's garbage edges)
            return
        if entry.hold is not None:
            if change is Change.ACTIVE:
                if not self._check.failed:  # the map's inputs failed: no key repeats (line_check)
                    entry.hold.press(at)
            else:  # released, or stuck: a stuck button does not keep raising the bet
                entry.hold.release()
        self._emit(PinEvent(entry.kind, entry.seat, entry.name, entry.pin, EDGES[change], chip=entry.chip))

    def _checked(self, read: list[bool | str | None], now: float, before: int) -> None:
        """What the check of every input line found (:mod:`drivers.gpio.line_check`), reported once; a
        level read only ever stops a repeat, and only of a key pressed before the read (``before``: the
        last edge's seq then; a press that came while the lines were read is not undone by its old level)."""
        change = self._check.judge(self._probes, read, [(e.debouncer.raw, e.last_edge) for e in self._inputs],
                                   now)
        for entry, level in zip(self._inputs, read, strict=True):
            stale = entry.last_edge > before  # pressed while the lines were read: its level read is older
            if entry.hold is not None and (self._check.failed or (level is not True and not stale)):
                entry.hold.release()
        if change is not None:
            self._emit(PinEvent("inputs", None, "inputs", -1, change, detail=self._check.detail))

    def _emit(self, event: PinEvent) -> None:
        log.debug("pin event %s", event)
        self._on_event(event)

    def _apply_lamps(self, now: float) -> None:
        blink_on = math.floor(now * 2 * self.map.blink_hz) % 2 == 0
        fault_on = math.floor(now * 2 * self.map.fault_blink_hz) % 2 == 0
        first: str | None = None  # the first failure of this pass
        for lamp_id, out in self._lamps.items():
            mode = self._modes.get(lamp_id, LampMode.OFF)
            level = mode is LampMode.ON or (mode is LampMode.BLINK and blink_on) or (
                mode is LampMode.FAULT and fault_on)
            try:
                if lamp_id in self._failed_lamps or out.lit != level:  # a failed line is tried every pass
                    out.set(level)
                    self._failed_lamps.discard(lamp_id)
            except OSError as exc:  # an expander that stops answering: a fault of the panel, not a crash
                self._failed_lamps.add(lamp_id)
                first = first or f"lamp {lamp_id} cannot be written: {exc}"
        # Back only once every failed line is written: a map's lamps may span two chips, and one working
        # chip must not make the panels flap offline and online at every blink (a review, 2026-12-05).
        if self._failed_lamps and not self._lamps_failed:
            self._lamps_failed = True
            detail = first or "a lamp cannot be written"
            self._emit(PinEvent("lamps", None, "lamps", -1, "failed", detail=detail))
        elif not self._failed_lamps and self._lamps_failed:
            self._lamps_failed = False
            self._emit(PinEvent("lamps", None, "lamps", -1, "written"))

    def _next_deadline(self) -> float:
        deadlines = [d for e in self._inputs if (d := e.deadline()) is not None] + [self._check.due]
        modes = set(self._modes.values())
        now = self._clock()
        for hz, mode in ((self.map.blink_hz, LampMode.BLINK), (self.map.fault_blink_hz, LampMode.FAULT)):
            if mode in modes:
                half = 1.0 / (2 * hz)
                deadlines.append((math.floor(now / half) + 1) * half)
        return min(deadlines)

    def _run(self) -> None:
        while not self._stopping.is_set():
            with self.lock:
                deadline = self._next_deadline()
            timeout = max(0.0, deadline - self._clock())
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                item = None
            if item is not None:
                with self.lock:
                    self._pending.append(item)
            if self._stopping.is_set():
                return
            try:
                self.pump()
            except Exception:  # a failing listener must not kill the only reader of the buttons
                log.exception("gpio panel: processing failed")

    def _close_lines(self) -> None:
        for entry in self._inputs:
            if entry.line is not None:
                with contextlib.suppress(OSError):  # a dead chip's line: every other is released all the same
                    entry.line.close()
                entry.line = None
        for out in self._lamps.values():
            with contextlib.suppress(OSError):
                out.close()
        self._lamps = {}

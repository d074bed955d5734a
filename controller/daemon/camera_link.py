"""The camera's reader thread: frames in, stable card reads out, through the daemon's one input path.

A card the camera is sure of becomes the same :class:`CardSeen` input a shoe
produces (so it meets the same rules and tilts), submitted with source
``camera``; the frame it was read from is saved first (``audit_dir``), and
its path is the input's ``ref`` in the journal (``camera:<path>``), so every
card dealt by camera can be looked at again in a dispute. A camera that
gives no frame for ``offline_after`` seconds is a ``DeviceStatus`` offline
input (``device_offline`` tilt mid-deal), and back online when frames come
again, exactly as an unplugged shoe; so is one whose frames see nothing for as
long (all but black or white: camera_frames.Blind), until a frame sees.

Exactly once across restarts (docs/vision.md, "Across restarts"): the link
starts from the journal's memory of the window (the card it delivered last
and never saw gone, controller.daemon.camera_window), given before its
thread reads the first frame. A first stable read of that same card cannot
be told from it (the daemon was down: an identical card may have been put
there), so it is delivered with ``repeat`` and the table holds it in a
``repeat_card`` tilt for the dealer; another card is simply new. An empty
read clears a card only if alike the window empty before it (vision.felt:
a hand reads empty too; K refused make it doubted). While the link runs,
frames that stop and resume (a camera unplugged and back) keep the
in-memory state: the card still in the window is the same card. The window
seen empty is journaled (``gone``) before the link forgets the card. It
imports OpenCV (``vision``): the daemon imports it for a ``camera`` only."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

import cv2

from controller.cards import Card
from controller.daemon import faults
from controller.daemon.camera_config import CameraSettings
from controller.daemon.camera_frames import Blind, OldFrames, save_audit
from controller.daemon.journal import JournalFault
from controller.daemon.private import make_dir
from controller.inputs import CardSeen, DeviceStatus, Input
from vision.felt import Before, Look, Settled, before, look, reference, unlike, widened
from vision.profile import DeckProfile, ProfileError, load_profile
from vision.recognise import READ_THREADS, Image, Reading, recognise
from vision.sources import CaptureSource, FrameSource, ReadOnce, ReplaySource, SourceError, WindowSource
from vision.stable import StableReads
from vision.window import ScanWindow

log = logging.getLogger("croupier.daemon.camera")

#: Seconds after a camera (``device``) opens whose frames are not read: an automatic exposure settling
#: gives black or washed frames, which read as an empty window.
WARM_UP: Final = 1.0

#: Seconds of empty reads alike each other that make the window a card is judged by, and for a window unlike
#: the one before (vision.felt.Settled: a hand over the empty window passes; the felt, or a new light, stays).
SETTLE: Final = 0.5
RESETTLE: Final = 2.0

#: The device name in DeviceStatus inputs and ``device_offline`` tilts.
CAMERA = "camera"


class CameraStartError(RuntimeError):
    """The camera's deck profile cannot be used; the message names the file and key."""


class CameraLink:
    """Runs the camera thread; ``submit(input, ref)`` is called on the loop for each input it makes.

    ``in_window``: the journal's memory of the window at start; ``gone()``, on the loop, journals
    that the window was seen empty after the last card delivered.
    """

    def __init__(
        self,
        settings: CameraSettings,
        state_dir: Path,
        loop: asyncio.AbstractEventLoop,
        submit: Callable[[Input, str | None], object],
        offline: Callable[[], Mapping[str, str]],
        *,
        in_window: Card | None,
        gone: Callable[[], object],
    ) -> None:
        self.settings = settings
        spec = settings.spec
        try:
            self.profile: DeckProfile = load_profile(settings.deck_path)
        except ProfileError as exc:
            raise CameraStartError(f"camera.deck: {exc}") from None
        self.state_dir = state_dir
        self.audit_dir = settings.audit_path(state_dir)
        self.window = settings.window_path(state_dir)
        self._loop = loop
        self._submit = submit
        self._offline = offline
        self._gone = gone
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="camera", daemon=True)
        # A read that never returns (a hung USB camera) stops the reader thread itself, so a second
        # thread watches the time of the last frame; both go through _status, under its lock.
        self._watchdog = threading.Thread(target=self._watch, name="camera-watchdog", daemon=True)
        self._status_lock = threading.Lock()
        self._last_frame = time.monotonic()
        #: When the read under way began (None between reads): the watchdog times reads only, not a
        #: card's commit the reader waits for (a slow journal is no dead camera: a review, 2026-12-05).
        self._reading_since: float | None = None
        #: Old frames handed over again, not read (None: not a camera, or not checked).
        self._old = None if spec.frozen_after is None else OldFrames(spec.frozen_after, spec.stable_frames)
        self.scan_window = ScanWindow.of(spec.scan_window)  # where the card may lie (None: the whole frame)
        self._blind = Blind(spec.offline_after, self.scan_window)  # frames that see nothing, not read
        self._first_frame = threading.Event()
        #: Called on the loop at the first frame, when the self-test already failed for want of it.
        self.on_first_frame: Callable[[], object] | None = None
        #: Why the camera could not be opened, while it cannot (warned once per streak, not per try).
        self.open_error: str | None = None
        self.stable = StableReads(spec.stable_frames)
        #: The card the journal says was delivered last and not seen gone since.
        self.in_window = in_window
        #: That card as the journal had it at start: a first stable read of it may be it or a new one.
        self.doubted = in_window
        #: The settled window, the empty reads since the last card (refused or not), the card's reference.
        self._empty = Settled(*(max(spec.stable_frames, round(spec.fps * t)) for t in (SETTLE, RESETTLE)))
        self._recent: deque[Look] = deque(maxlen=max(1, round(spec.fps * SETTLE)))
        self._felt: Before | None = None
        self._refused = 0  # empty reads refused since the card was read
        self.frames = self.cards = self._saved = 0
        self.online: bool | None = None
        self.cause: str | None = None
        self.last: Reading | None = None
        #: Recognition, not repeated for the simulated window's unchanged frame (vision.sources).
        self._read = ReadOnce(lambda frame: recognise(frame, self.profile, window=self.scan_window))

    # --- the thread ------------------------------------------------------------------------------

    def start(self) -> None:
        make_dir(self.audit_dir)
        cv2.setNumThreads(READ_THREADS)  # process-wide: the daemon's only OpenCV is the camera's
        self._last_frame = time.monotonic()
        self._thread.start()
        self._watchdog.start()

    async def first_frame(self, timeout: float) -> bool:
        """The camera's part of the self-test: True once a frame came within ``timeout`` seconds."""
        return await self._loop.run_in_executor(None, self._first_frame.wait, timeout)

    async def stop(self) -> None:
        self._stopping.set()
        await self._loop.run_in_executor(None, self._thread.join, 5.0)
        await self._loop.run_in_executor(None, self._watchdog.join, 5.0)

    def _open(self) -> FrameSource:
        spec = self.settings.spec
        if self.window is not None:
            return WindowSource(self.window)
        if self.settings.replay_path is not None:
            return ReplaySource(self.settings.replay_path)
        assert spec.device is not None
        source = CaptureSource(spec.device, spec.width, spec.height, spec.exposure, spec.focus)
        log.info("camera %r open at %dx%d", spec.device, *source.actual_size)
        return source

    def _run(self) -> None:
        spec = self.settings.spec
        interval = 1.0 / spec.fps
        source: FrameSource | None = None
        opened = retry_at = time.monotonic()
        try:
            while not self._stopping.is_set():
                started = time.monotonic()
                if source is None and started >= retry_at:
                    source = self._try_open()
                    opened = time.monotonic()  # a capture opened again has offline_after to give a frame
                    retry_at = opened + (0.0 if source is not None else min(1.0, spec.offline_after))
                self._reading_since = time.monotonic()
                try:
                    frame = source.read() if source is not None else None
                finally:
                    self._reading_since = None
                if frame is None:
                    if started - self._last_frame >= spec.offline_after:
                        self._status(False, f"no frames for {spec.offline_after:g} s")
                        if isinstance(source, CaptureSource) and started - opened >= spec.offline_after:
                            source.close()  # unplugged: opened again (every offline_after) until it is back
                            source = None
                else:
                    self._last_frame = time.monotonic()
                    self._first()
                    # A camera just opened gives black or washed frames while its exposure settles:
                    # read as an empty window, they would clear the card lying there (dealt again).
                    now = time.monotonic()
                    warm = not (isinstance(source, CaptureSource) and now - opened < WARM_UP)
                    if not self._repeated(frame, source):
                        blind = self._blind.see(frame if warm else None, now)
                        if (why := self._blind.lasted(now)) is not None:
                            self._status(False, why)
                        elif warm and self.online is not True and blind is None and self._back(source):
                            self._status(True, "frames")
                        if warm and (self.online or blind is not None):  # blind: a card is doubted
                            self._frame(frame)
                self._stopping.wait(max(0.0, interval - (time.monotonic() - started)))
        except Exception:  # a fault must halt play loudly, not leave a silent camera
            log.exception("camera thread failed")
            if self.online is not False:
                self._status(False, "camera thread failed (see the log)")
        finally:
            if source is not None:
                source.close()

    def _repeated(self, frame: Image, source: FrameSource | None) -> bool:
        """Whether a camera's frame is an old one handed over again (:mod:`camera_frames`): not read; after
        ``frozen_after`` seconds of them the camera is offline. A replay or the window is not checked."""
        old = self._old
        if old is None or not isinstance(source, CaptureSource):
            return False
        now = time.monotonic()
        if not old.old(frame, now):
            return False
        why = old.frozen(now)
        if why is not None:
            self._status(False, why)
        return True

    def _back(self, source: FrameSource | None) -> bool:
        """Enough new frames in a row to bring the camera back online (a replay or the window: one)."""
        if isinstance(source, CaptureSource) and self._old is not None:
            return self._old.back()
        return True

    def _try_open(self) -> FrameSource | None:
        """The frame source, or None while it cannot be opened (said once per streak of failures, not at
        every try: a missing camera is retried once a second)."""
        try:
            source = self._open()
        except SourceError as exc:
            if str(exc) != self.open_error:
                log.warning("camera: %s (retried until it opens)", exc)
            self.open_error = str(exc)
            return None
        if self.open_error is not None:
            log.info("camera opened after: %s", self.open_error)
        self.open_error = None
        return source

    def _watch(self) -> None:
        """Offline when a read has not returned for ``offline_after`` seconds (a hung camera)."""
        after = self.settings.spec.offline_after
        while not self._stopping.wait(min(0.5, after / 4)):
            since = self._reading_since
            if since is not None and time.monotonic() - since >= after:
                self._status(False, f"no frames for {after:g} s")

    def _first(self) -> None:
        """A frame came: at the first, the self-test's wait ends, or its fault is cleared."""
        if not self._first_frame.is_set():
            self._first_frame.set()
            tell = self.on_first_frame
            if tell is not None:
                self._loop.call_soon_threadsafe(tell)

    def _frame(self, frame: Image) -> None:
        self.frames += 1
        blind = self._blind.why  # seeing nothing: no reading of the window, never an empty one (_covered)
        reading = self._covered(Reading("unknown", reason=blind) if blind else self._read(frame), frame)
        self.last = reading
        report = self.stable.feed(reading)
        if self.stable.cleared:
            self.doubted = None
            if self.in_window is not None and self._on_loop(self._record_gone):
                self.in_window = None
        if report is None or report.card is None:
            return
        repeat = report.card is self.doubted
        if not repeat:  # a new card: the window settled empty, or (newest first) a read empty since the last
            seen = look(frame, self.scan_window)  # card, under a new light; none when a blank (vision.felt)
            empty = reference(self._recent, seen, report.corners, frame.shape, self._empty.kept)
            self._felt = None if empty is None else before(empty, report.corners, frame.shape)
        self._refused, self.doubted = 0, None
        self._recent.clear()  # a later card takes an empty read seen since this one, never one before it
        assert report.card is not None
        self._saved += 1
        path = save_audit(self.audit_dir, self.state_dir, frame, report.card, self._saved)
        ref = f"camera:{path}"
        faults.point("camera_read")
        log.info("camera read %s (confidence %.2f), frame %s%s", report.card, report.confidence, path,
                 ": the card it delivered last, never seen gone: the dealer says which" if repeat else "")
        if self._deliver(CardSeen(report.card, repeat=repeat), ref):
            self.in_window = report.card
            faults.point("camera_delivered")

    def _covered(self, reading: Reading, frame: Image) -> Reading:
        """An empty read while a card lies in the window, unlike the window empty before it, or a frame that
        sees nothing: "unknown" (:mod:`vision.felt`); K such doubt the card: read again, it is the dealer's
        (``repeat_card``)."""
        why = None if self._blind.why is None else "the camera sees nothing"
        if reading.status != "empty" and why is None:
            self._empty.broken()
            if reading.card is not None and reading.card is self.stable.shown:  # read again: a hand's
                self._refused = 0  # passing flickers do not add up to a doubt; the card may have moved
                self._felt = widened(self._felt, reading.corners, frame.shape)
            return reading
        card = self.stable.shown or self.doubted
        if why is None:  # an empty read: the window empty before the card, or not
            now = look(frame, self.scan_window)
            self._recent.append(now)
            if card is None or (self._felt is not None and (why := unlike(self._felt, now)) is None):
                self._empty.seen(now)
                return reading
        self._empty.broken()  # never a reference, even with none to judge it by (a palm held over the card)
        if card is None:
            return reading
        if why is None:
            why = "no empty window was seen before it"
        self._refused += 1
        if self._refused == self.settings.spec.stable_frames and self.stable.shown is not None:
            log.warning("camera: %s not taken for gone (%s): held for the dealer if read again", card, why)
            self.doubted = self.stable.forget()
        return Reading("unknown", reason=f"{reading.reason}, but {card} is not taken for gone: {why}")

    def _record_gone(self) -> bool:
        """Loop: journal that the window was seen empty; False if the journal is faulted."""
        try:
            self._gone()
        except JournalFault:
            return False  # the daemon halts the table; the card stays remembered, so never dealt twice
        return True

    def _status(self, online: bool, detail: str) -> None:
        with self._status_lock:  # the reader and the watchdog: one transition, said once
            self.cause = None if online else detail  # the cause now, for status (journaled: the first)
            if self.online is online:
                return
            (log.info if online else log.warning)("camera %s: %s", "online" if online else "offline", detail)
            self.online = online
            self._deliver(DeviceStatus(CAMERA, online, detail), None)

    def _deliver(self, inp: Input, ref: str | None) -> bool:
        """Hand ``inp`` to the loop and wait until it is journaled: True; False if it was not (the table
        already knew a status, the journal is faulted, or we are stopping)."""

        def journal() -> bool:
            if isinstance(inp, DeviceStatus) and (CAMERA not in self._offline()) == inp.online:
                return False  # the table already knows (after a restart, or a flap)
            try:
                self._submit(inp, ref)
            except JournalFault:
                return False  # reported by the daemon, which halts the table
            if isinstance(inp, CardSeen):
                # Counted here, on the loop with the journal, so that a status answered after the
                # card's events never counts one card fewer (the camera thread counted it later).
                self.cards += 1
                faults.point("camera_committed")
            return True

        return self._on_loop(journal)

    def _on_loop(self, work: Callable[[], bool]) -> bool:
        """Run ``work`` on the loop and wait for its answer; False once we are stopping: nothing is
        journaled then (a card in the window is read again by the next start)."""

        async def on_loop() -> bool:
            return False if self._stopping.is_set() else work()

        try:
            done = asyncio.run_coroutine_threadsafe(on_loop(), self._loop)
        except RuntimeError:  # the loop is closed: shutting down
            return False
        while not self._stopping.is_set():
            try:
                return done.result(timeout=0.2)
            except concurrent.futures.TimeoutError:
                continue
        return False

    def describe(self) -> str:
        """Where frames come from, for the start-up self-test and the log."""
        return self.settings.describe(self.window)

    def status(self) -> dict[str, object]:
        """For ``ctl status``: the source, whether frames arrive, and the last frame's reading."""
        spec = self.settings.spec
        source = spec.device if spec.device is not None else spec.replay or str(self.window)
        return {
            "source": str(source),
            "deck": self.profile.name,
            "online": bool(self.online),
            "frames": self.frames,
            "cards": self.cards,
            "last": self.last.to_dict() if self.last else None,
            "cause": self.cause,
        }

"""The daemon: one asyncio loop owning the table, its ZeroMQ sockets and its devices.

Sockets (docs/zeromq.md): a PUB socket publishes every event as two frames
(topic ``<table>.<event>``, then the JSON with ``table`` and ``seq``); a
ROUTER snapshot socket answers late joiners with the whole state and the
``seq`` it stands at (zguide's clone pattern); a ROUTER command socket takes
operator commands (docs/commands.md). Every socket has a send high-water
mark and ``LINGER`` 0, so a slow, stuck or dead peer costs dropped messages
for that peer, never a stalled table or a hung shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import zmq
import zmq.asyncio

from controller.daemon import resend
from controller.daemon.alerts import log_alerts
from controller.daemon.auth import CurveGuard, permitted
from controller.daemon.commands import (
    CommandError,
    InputCommand,
    Query,
    WrongTable,
    error_reply,
    parse_command,
)
from controller.daemon.config import TableConfig, ZmqSpec, exposure_problems
from controller.daemon.dispenser import Dispenser
from controller.daemon.endpoints import enable_ipv6
from controller.daemon.handshakes import HandshakeLog
from controller.daemon.heartbeat import heartbeat_payload
from controller.daemon.journal import Journal, JournalFault, open_readonly, verify_file
from controller.daemon.keys import KeyFileError, KeyFolder, KeyInfo
from controller.daemon.panels import PanelHost
from controller.daemon.recall import recall_from_journal
from controller.daemon.requests import Pacer, RequestError, limit_inbound, parse_snapshot_request, quote
from controller.daemon.sdnotify import notify, watchdog_interval
from controller.daemon.selftest import HELLO_TIMEOUT, SelfTest
from controller.daemon.service import Applied, TableService, dumps
from controller.daemon.shoe_link import ShoeLink
from controller.daemon.statelock import StateDirLock
from controller.inputs import CardSeen, DeviceStatus, Input
from controller.table import Table
from drivers.gpio import BackendError
from drivers.gpio.control import ControlError, parse_endpoint
from drivers.shoe import FrameId, ShoeCard, ShoeError, ShoeEvent, ShoeProfile, ShoeStatus
from drivers.shoe.linehealth import shoe_health

log = logging.getLogger("croupier.daemon")

#: The device a failed whole-journal check takes offline (Daemon._verify_journal).
JOURNAL_DEVICE = "journal"
#: Device names of the shoe's statuses that halt play (journaled as DeviceStatus inputs).
SHOE_HELLO = "shoe hello"
SHOE_LID = "shoe lid"
SHOE_FAULT = "shoe fault"

#: Replies queued for one command client before ZeroMQ drops them (a reply is a few hundred bytes).
ROUTER_HWM = 1000
#: Snapshot replies queued for one client: each may be the state and 2,000 events (hundreds of KB), so a
#: client that asks and never reads holds at most this many (a REQ client has one in flight).
SNAPSHOT_HWM = 2

#: Shoe frames accepted (heartbeats, statuses) before the shoe cursor is journaled without an input:
#: well under 128, so a restarted reader never takes a new frame for an old one (docs/daemon.md).
SHOE_CURSOR_LAG = 64


def _plain(sock: Any) -> Any:
    return sock


class DaemonError(RuntimeError):
    """The daemon cannot start (a socket cannot bind, ...); the message says which and why."""


class OptionError(DaemonError):
    """A command-line override that does not fit the table file (``croupier run`` exits 2)."""


def check_gpio_control(config: TableConfig, endpoint: str) -> None:
    """``--gpio-control`` must have mock panels to drive: never a silent no-op (OptionError says why)."""
    gpio = config.spec.gpio
    if gpio is None or not config.panels:
        what = "no gpio section" if gpio is None else "a gpio section but no panels"
        raise OptionError(f"--gpio-control {endpoint}: {config.path} has {what}, so there are no "
                          "panel pins to control (add panels: and gpio: {backend: mock}, or drop the option)")
    if gpio.backend != "mock":
        raise OptionError(f"--gpio-control {endpoint}: {config.path} has gpio.backend {gpio.backend}; "
                          "a control socket drives mock pins only")
    try:
        parse_endpoint(endpoint)
    except ControlError as exc:
        raise OptionError(f"--gpio-control {endpoint}: {exc}") from None


def journal_fault_reply(cmd: str, fault: JournalFault) -> dict[str, Any]:
    """The answer to every input once the journal cannot be written: the reason, never "internal error"."""
    return error_reply(
        f"journal fault: {fault}: the table is halted and this input was not applied; "
        "restart the daemon once the journal can be written (and resend with the same ref)",
        cmd=cmd, journal_fault=True,
    )


class Daemon:
    """A table daemon: :meth:`open` (replay), then ``await`` :meth:`serve` until :meth:`request_stop`."""

    def __init__(
        self,
        config: TableConfig,
        *,
        state_dir: Path | None = None,
        fsync: bool = True,
        zmq_spec: ZmqSpec | None = None,
        shoe_port: str | None = None,
        use_shoe: bool = True,
        gpio_control: str | None = None,
        parent_pid: int | None = None,
        hello_timeout: float = HELLO_TIMEOUT,
        keys_dir: Path | None = None,
    ) -> None:
        self.config = config
        #: The start-up checks (docs/daemon.md, "Start-up"); the shoe's hello is awaited this long.
        self.selftest = SelfTest()
        self.selftest.passed("config", str(config.path))
        self.hello_timeout = hello_timeout
        #: The CurveZMQ key folder (``croupier run --keys``; else the table file's, docs/security.md).
        self.keys_dir = keys_dir or config.key_folder(state_dir)
        #: Stop (as on SIGTERM) once this process is no longer our parent (a supervisor that died).
        self.parent_pid = parent_pid
        self.state_dir = state_dir or config.state_dir
        self.fsync = fsync
        self.zmq_spec = zmq_spec or config.spec.zeromq
        exposed = exposure_problems(self.zmq_spec, config.spec.security)
        if exposed:
            raise OptionError("; ".join(f"{key}: {why}" for key, why in exposed))
        profile: ShoeProfile | None = config.shoe_profile if use_shoe else None
        if profile is not None and shoe_port is not None:
            profile = profile.model_copy(update={"port": shoe_port})
        self.shoe_profile = profile
        self.service: TableService | None = None
        self.shoe: ShoeLink | None = None
        #: The camera link (controller.daemon.camera_link), when the table file has a camera section.
        self.camera: Any = None
        self.shoe_status: dict[str, Any] | None = None
        #: Sends DISPENSE when a card is due (profile ``mode: dealing_shuffler``), else None.
        self.dispenser: Dispenser | None = None
        #: The panels (None: the table file has none); opened by :meth:`serve`.
        self.gpio: PanelHost | None = None
        if gpio_control is not None:
            check_gpio_control(config, gpio_control)
        self._gpio_control = gpio_control
        self.started = time.time()
        self.ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pub: zmq.Socket[bytes] | None = None
        self._lock: StateDirLock | None = None
        self._fault_reported = False
        #: Shared by the request loops (controller.daemon.requests.Pacer).
        self._pacer = Pacer()
        #: The CURVE server key and ZAP authenticator (made by :meth:`serve`).
        self.guard: CurveGuard | None = None

    # --- start ---------------------------------------------------------------------------------

    def open(self) -> TableService:
        """Lock the state dir, open the journal and replay it.

        :class:`StateDirBusy` if another daemon holds the state dir (before anything is opened);
        :class:`JournalError` if the journal must not be started from.
        """
        cfg = self.config
        self._lock = lock = StateDirLock.acquire(self.state_dir)
        try:
            journal = Journal.open(
                self.state_dir,
                table=cfg.table_id,
                game=cfg.game_name,
                options=cfg.options_dict(),
                fsync=self.fsync,
                verify=False,  # the whole-file checks run once the table is up: _verify_journal
            )
            service = TableService(cfg, journal)
            try:
                service.replay()
                resend.keep_replayed(service)
            except Exception:
                journal.close()
                raise
        except BaseException:
            lock.release()
            self._lock = None
            raise
        self.service = service
        self.selftest.passed("journal", f"{service.journal.path}: {service.replayed} input(s) replayed, "
                                        f"seq {service.seq}")
        return service

    def request_stop(self) -> None:
        """Ask :meth:`serve` to return (thread-safe)."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stop.set)

    async def serve(self, install_signals: bool = False) -> None:
        """Bind the sockets, start the shoe, serve until stopped, then close everything."""
        if self.service is None:
            self.open()
        self._loop = loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        assert self.service is not None
        self.service.checkpoint_later = lambda: loop.call_soon(self._checkpoint)
        if install_signals:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, self._stop.set)
        ctx = zmq.asyncio.Context()
        sync_ctx: zmq.Context[Any] = zmq.Context.shadow(ctx.underlying)
        spec = self.zmq_spec
        sockets: list[Any] = []
        guard: CurveGuard | None = None
        handshakes: HandshakeLog | None = None
        try:
            try:
                self.guard = guard = CurveGuard(KeyFolder(self.keys_dir), sync_ctx)
            except KeyFileError as exc:
                raise DaemonError(f"cannot use the table's keys: {exc}") from None
            guard.start()
            # Every socket is bound before the devices open, so the start-up statuses (shoe_connected,
            # shoe_hello, a failed self-test) reach a subscriber that connected first; no request is
            # answered before the self-test is over (they wait in their queues). The event sockets
            # take keys only when the table file says so (security.curve_events).
            events = guard.secure if self.config.spec.security.curve_events else _plain
            self._pub = pub = self._bind(events(sync_ctx.socket(zmq.PUB)), "pub", spec.pub, spec.pub_hwm,
                                         sockets)
            snap = self._bind(events(ctx.socket(zmq.ROUTER)), "snapshot", spec.snapshot, SNAPSHOT_HWM,
                              sockets)
            cmd = self._bind(guard.secure(ctx.socket(zmq.ROUTER)), "command", spec.command, ROUTER_HWM,
                             sockets)
            del pub
            curve = [("command", spec.command, cmd)]
            if self.config.spec.security.curve_events:
                curve += [("pub", spec.pub, self._pub), ("snapshot", spec.snapshot, snap)]
            handshakes = HandshakeLog.started(sync_ctx, guard.refusals, curve)  # refusals ZAP never sees
            # Self-test (controller/daemon/selftest.py): the devices, once the sockets are bound.
            self.selftest.passed("keys", f"{len(guard.registry)} authorised key(s) in {guard.folder.root}")
            if self.config.panels:
                self._open_panels(loop)
                self.selftest.passed("panels", f"{len(self.config.panels)} pin map(s) opened")
            if self.shoe_profile is not None:
                resume = self.service.journal.shoe_cursor if self.service is not None else None
                self.shoe = ShoeLink(self.shoe_profile, loop, self.on_shoe_frame, resume)
                if self.shoe_profile.mode == "dealing_shuffler":
                    assert self.service is not None
                    self.dispenser = Dispenser(self.shoe.reader, loop, self.submit_from_device,
                                               self.shoe_profile.dispense_timeout, self.service.table,
                                               self.service.journal, self.journal_faulted)
                self.selftest.expect_hello(self.shoe_profile.protocol)
                self.shoe.start()
                await self._await_shoe_hello()
            if self.config.camera is not None:
                self._open_camera(loop)
                self.selftest.passed("camera", f"deck {self.camera.profile.name}, {self.camera.describe()}")
            assert self.service is not None
            log.info(
                "table %s ready: seq %d; pub %s, snapshot %s, command %s%s",
                self.config.table_id,
                self.service.seq,
                spec.pub,
                spec.snapshot,
                spec.command,
                f"; shoe {self.shoe_profile.port}" if self.shoe_profile else "; no shoe",
            )
            if self.gpio is not None:
                control = self.gpio.control_endpoint
                log.info("%d panel map(s); control %s", len(self.gpio.panels), control or "none")
                self.gpio.start()
            self.ready.set()
            notify("READY=1", f"STATUS=table {self.config.table_id}: {self.selftest.summary()}")
            tasks = [
                asyncio.create_task(self._serve_commands(cmd)),
                asyncio.create_task(self._serve_snapshots(snap)),
            ]
            tasks.append(asyncio.create_task(self._heartbeat(spec.heartbeat)))
            self._verify_journal(loop)
            if self.parent_pid is not None:
                tasks.append(asyncio.create_task(self._watch_parent(self.parent_pid)))
            interval = watchdog_interval()
            if interval is not None:
                tasks.append(asyncio.create_task(self._watchdog(interval)))
            await self._stop.wait()
            notify("STOPPING=1")
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        finally:
            if self.gpio is not None:
                self.gpio.stop()
            if self.shoe is not None:
                await self.shoe.stop()
            if self.camera is not None:
                await self.camera.stop()
            if handshakes is not None:
                handshakes.stop()
            for sock in sockets:
                sock.close(linger=0)
            if guard is not None:
                guard.stop()
            ctx.term()
            if self.service is not None:
                self.service.journal.close()
            if self._lock is not None:
                self._lock.release()
                self._lock = None
            log.info("table %s stopped", self.config.table_id)

    @property
    def journal_id(self) -> str:
        """The journal's random id: kept across restarts, new with a new journal (docs/zeromq.md)."""
        assert self.service is not None
        return self.service.journal.header["id"]

    def identify(self, reply: dict[str, Any]) -> dict[str, Any]:
        """Every reply says which table and which journal answered (``table``, ``journal_id``)."""
        reply.setdefault("table", self.config.table_id)
        reply["journal_id"] = self.journal_id
        return reply

    def heartbeat(self) -> dict[str, Any]:
        """The ``<table>.heartbeat`` message as things stand now."""
        assert self.service is not None
        lamps = self.gpio.lamps_payload(self.config.table_id) if self.gpio is not None else None
        return heartbeat_payload(self.config.table_id, self.journal_id, self.service.seq,
                                 self.service.table, lamps, self.zmq_spec.heartbeat,
                                 journal_fault=self.service.journal_fault(),
                                 tilt=self.service.tilt_view())

    def _verify_journal(self, loop: asyncio.AbstractEventLoop) -> None:
        """The journal's whole-file checks, on a thread of their own after start; a failure halts the table.

        Start-up reads only the newest checkpoint and the rows after it, so the
        checks that read every page (integrity, no row missing) run here: a damaged
        journal takes the device ``journal`` offline (no new deal, a round being
        dealt tilts) with the reason, and a journal that checks out brings it back.
        A daemon thread, so stopping the daemon never waits for it.
        """
        assert self.service is not None
        path = self.service.journal.path

        def check() -> None:
            problem = verify_file(path)
            with contextlib.suppress(RuntimeError):  # the loop closed: the daemon stopped meanwhile
                loop.call_soon_threadsafe(self._journal_verified, problem)

        threading.Thread(target=check, name="journal-verify", daemon=True).start()

    def _journal_verified(self, problem: str | None) -> None:
        service = self.service
        if service is None or self._stop is None or self._stop.is_set():
            return
        if problem is not None:
            log.error("%s: %s", service.journal.path, problem)
            self.submit_from_device(DeviceStatus(JOURNAL_DEVICE, False, problem), "journal")
        elif JOURNAL_DEVICE in service.table.offline:
            self.submit_from_device(DeviceStatus(JOURNAL_DEVICE, True, "integrity check passed"), "journal")
        else:
            log.info("%s: integrity check passed", service.journal.path)

    async def _heartbeat(self, interval: float) -> None:
        """One heartbeat at once (a restarted table re-publishes its lamps), then every ``interval``."""
        while True:
            self.publish_side("heartbeat", self.heartbeat())
            await asyncio.sleep(interval)

    async def _await_shoe_hello(self) -> None:
        """The shoe's part of the self-test: its hello in time, else a journaled, visible fault."""
        assert self.shoe_profile is not None and self.service is not None
        if await self.selftest.wait_hello(self.hello_timeout):
            return
        what = (f"no {'HELLO' if self.shoe_profile.protocol == 'v1' else 'connection'} from "
                f"{self.shoe_profile.port} within {self.hello_timeout:g} s of start (self-test)")
        self.selftest.failed("shoe", what)
        log.error("shoe: %s; the table is halted until it says hello", what)
        if SHOE_HELLO not in self.service.table.offline:
            self.submit_from_device(DeviceStatus(SHOE_HELLO, False, what), "selftest")

    async def _watchdog(self, interval: float) -> None:
        """systemd's watchdog, pinged from the table's own loop: a loop that stops turning is restarted."""
        while True:
            notify("WATCHDOG=1")
            await asyncio.sleep(interval)

    async def _watch_parent(self, pid: int, interval: float = 0.5) -> None:
        """Stop when the parent ``pid`` is gone (we were re-parented): no orphan daemon holding ports."""
        while os.getppid() == pid:
            await asyncio.sleep(interval)
        log.warning("parent process %d is gone: stopping", pid)
        assert self._stop is not None
        self._stop.set()

    def _open_panels(self, loop: asyncio.AbstractEventLoop) -> None:
        """Open the panels' pins and control socket; DaemonError (exit 4) when they cannot be opened."""
        assert self.service is not None
        config = self.config
        if self._gpio_control is not None and config.spec.gpio is not None:
            gpio = config.spec.gpio.model_copy(update={"control": self._gpio_control})
            config = dataclasses.replace(config, spec=config.spec.model_copy(update={"gpio": gpio}))
        host = PanelHost(config)
        try:
            service = self.service
            host.open(service.table, loop, self.submit_from_device, service.sensor_wagers,
                      service.recorder.last_bets(service.table.phase == "betting")
                      if service.journal.last_id else None)  # a restart: what a press bets (panels.py)
        except (BackendError, OSError) as exc:
            raise DaemonError(f"cannot open the GPIO panels: {exc}") from None
        self.gpio = host

    def _open_camera(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the camera thread; imported here so that a table without a camera never loads OpenCV."""
        from controller.daemon import camera_window
        from controller.daemon.camera_link import CameraLink, CameraStartError

        assert self.config.camera is not None and self.service is not None
        service = self.service

        def gone() -> None:  # the window seen empty, journaled: a failed write halts the table
            try:
                camera_window.record_gone(service.journal)
            except JournalFault as exc:
                self.journal_faulted(exc)
                raise

        try:  # the journal's memory of the window is read before the camera's first frame
            self.camera = CameraLink(self.config.camera, self.state_dir, loop,
                                     lambda inp, ref: self.submit(inp, camera_window.SOURCE, ref),
                                     lambda: service.table.offline,
                                     in_window=camera_window.in_window(service.journal), gone=gone)
        except CameraStartError as exc:
            raise DaemonError(f"cannot start the camera: {exc}") from None
        self.camera.start()

    def _bind(self, sock: Any, name: str, endpoint: str, hwm: int, sockets: list[Any]) -> Any:
        enable_ipv6(sock)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.SNDHWM, hwm)
        sock.setsockopt(zmq.RCVHWM, hwm)
        limit_inbound(sock)
        sockets.append(sock)
        try:
            sock.bind(endpoint)
        except zmq.ZMQError as exc:
            raise DaemonError(
                f"cannot bind the {name} socket to {endpoint}: {exc} "
                "(another daemon on this table? see zeromq: in the table file)"
            ) from None
        return sock

    # --- the one input path ----------------------------------------------------------------------

    def submit(
        self, inp: Input, source: str, ref: str | None = None, frame: FrameId | None = None
    ) -> Applied:
        """Journal, apply, then publish. Only on the loop thread. :class:`JournalFault` halts the table."""
        assert self.service is not None
        try:
            applied = self.service.submit(inp, source, ref, frame=frame)
        except JournalFault as exc:
            self.journal_faulted(exc)
            raise
        log_alerts(self.config.table_id, source, inp, applied.events)
        pub = self._pub
        tid = self.config.table_id
        # The panels follow first, so whoever sees an event knows the lamps and the bet logic have too
        # (a player reacting to "settled" must not find the panel still in the dealt round).
        lamps = self.gpio.after_apply(self.service.table) if self.gpio is not None else None
        if pub is not None:
            for payload in applied.payloads:
                pub.send_multipart([f"{tid}.{payload['event']}".encode(), dumps(payload)], flags=zmq.NOBLOCK)
        if lamps is not None and self.gpio is not None:
            self.publish_side("lamps", self.gpio.lamps_payload(tid))
        if self.dispenser is not None:
            self.dispenser.after_apply(self.service.table)
        return applied

    def _checkpoint(self) -> None:
        """Loop, right after the input that made a checkpoint due was published (and, from the shoe,
        acknowledged), before the next input. Not while stopping: the journal may be closed by the
        time the loop runs this, and the next start replays a few more inputs instead."""
        service, stop = self.service, self._stop
        if service is None or stop is None or stop.is_set():
            return
        service.maybe_checkpoint()
        if service.journal.fault is not None:  # the write failed: halt now, not at the next input
            self.journal_faulted(service.journal.fault)

    def submit_from_device(self, inp: Input, source: str) -> None:
        """A panel's input: as :meth:`submit`; a journal fault is already reported (and halts the table)."""
        with contextlib.suppress(JournalFault):
            self.submit(inp, source)

    def journal_faulted(self, fault: JournalFault) -> None:
        """The journal cannot be written: halt, loudly, once (docs/daemon.md, "A journal that fails")."""
        if self._fault_reported:
            return
        self._fault_reported = True
        log.critical("JOURNAL FAULT: %s; the table is halted: every input is refused and no shoe frame is "
                     "acknowledged. Free space or replace the storage, then restart the daemon.", fault)
        if self.gpio is not None and self.service is not None:
            self.gpio.show_fault(self.service.table)
            self.publish_side("lamps", self.gpio.lamps_payload(self.config.table_id))
        self.publish_side("journal_fault", {"event": "journal_fault", "table": self.config.table_id,
                                            "at": round(time.time(), 3), "file": str(fault.path),
                                            "error": fault.reason})

    def publish_side(self, topic: str, payload: dict[str, Any]) -> None:
        """A side-topic message (``<table>.lamps``, ``<table>.shoe_status``): derived or device state,
        not a table event, so it has no ``seq`` and is not journaled (docs/zeromq.md)."""
        assert "seq" not in payload, f"a side topic with a seq would be read as an event: {topic}"
        if self._pub is not None:
            self._pub.send_multipart([f"{self.config.table_id}.{topic}".encode(), dumps(payload)],
                                     flags=zmq.NOBLOCK)

    def on_shoe_frame(self, frame: FrameId | None, event: ShoeEvent | None) -> bool:
        """Loop thread: take a shoe frame (or a line status: ``frame`` None); True once it is durable.

        A card is journaled with its frame id; another frame moves the journal's shoe cursor
        when it starts a new session (HELLO) or the cursor is :data:`SHOE_CURSOR_LAG` behind.
        """
        journal = self.service.journal if self.service is not None else None
        assert journal is not None
        try:
            if frame is not None and not (isinstance(event, ShoeStatus) and event.status == "hello"):
                self._shoe_heard(frame)  # (a HELLO says so itself, with the shoe's details)
            if event is not None:
                self.on_shoe_event(event, frame)
            cursor = journal.shoe_cursor
            if frame is not None and cursor != frame and (
                cursor is None or cursor.session != frame.session
                or (frame.seq - cursor.seq) & 0xFF >= SHOE_CURSOR_LAG
            ):
                journal.record_shoe_frame(frame)
        except JournalFault as exc:
            self.journal_faulted(exc)
            return False
        except Exception:
            # A bug after the commit must not make the shoe's resend a second card: the frame is
            # durable exactly when the journal's cursor is this frame.
            log.exception("shoe frame %s (%r) failed", frame, event)
            return frame is not None and journal.shoe_cursor == frame
        return True

    def _shoe_heard(self, frame: FrameId) -> None:
        """Any good v1 frame is the shoe's hello for the self-test: a shoe that was running when the
        daemon restarted sends no HELLO (it resends the frame it holds, or answers STATUS_REQUEST),
        and must not be taken for a silent one (docs/daemon.md, "Start-up: the self-test")."""
        assert self.service is not None
        if self.selftest.observe("hello", {"seq": frame.seq}) and SHOE_HELLO in self.service.table.offline:
            self.submit(DeviceStatus(SHOE_HELLO, True, "shoe answered"), "shoe", frame=frame)

    def on_shoe_event(self, event: ShoeEvent, frame: FrameId | None = None) -> None:
        """Loop thread: a card becomes an input; the line going down or up becomes a device input."""
        assert self.service is not None
        dispenser = self.dispenser
        if isinstance(event, ShoeCard):
            if dispenser is not None:
                dispenser.before_card(self.service.table)
            self.submit(CardSeen(event.card, event.burn), "shoe", frame=frame)
            if dispenser is not None:
                dispenser.after_card(self.service.table)
            return
        assert isinstance(event, ShoeStatus)
        if self.selftest.observe(event.status, event.detail) and SHOE_HELLO in self.service.table.offline:
            self.submit(DeviceStatus(SHOE_HELLO, True, f"shoe said {event.status}"), "shoe")
        self.shoe_status = {"at": time.time(), **event.to_dict()}
        self.publish_side("shoe_status", {"event": f"shoe_{event.status}", "table": self.config.table_id,
                                          "at": round(self.shoe_status["at"], 3), **event.detail})
        offline = self.service.table.offline
        burst = event.detail.get("burst") if event.status == "framing_error" else None
        if burst == "ongoing":
            pass  # counted on shoe_status each interval; the log has one line per burst (and its end)
        elif event.status in ("fault", "protocol_error", "lid_open", "shoe_empty") or burst == "start":
            log.warning("shoe %s: %s", event.status, event.detail)
        else:
            log.info("shoe %s: %s", event.status, event.detail)
        # Statuses that must stop a deal are journaled device inputs (a tilt mid-deal, no close
        # while they last); the rest are only published and logged (docs/daemon.md, "Shoe statuses").
        if event.status == "disconnected" and "shoe" not in offline:
            reason = str(event.detail.get("reason", "disconnected"))
            self.submit(DeviceStatus("shoe", False, reason), "shoe", frame=frame)
        elif event.status == "connected" and "shoe" in offline:
            self.submit(DeviceStatus("shoe", True, "connected"), "shoe", frame=frame)
        elif event.status == "lid_open" and SHOE_LID not in offline:
            self.submit(DeviceStatus(SHOE_LID, False, "lid open"), "shoe", frame=frame)
        elif event.status == "lid_closed" and SHOE_LID in offline:
            self.submit(DeviceStatus(SHOE_LID, True, "lid closed"), "shoe", frame=frame)
        elif event.status == "fault":
            what = f"{event.detail.get('fault', 'fault')}: {event.detail.get('text', '')}".rstrip(": ")
            self.submit(DeviceStatus(SHOE_FAULT, False, what), "shoe", frame=frame)
        elif event.status == "protocol_error":
            self.submit(DeviceStatus(SHOE_FAULT, False, f"protocol error: {event.detail['reason']}"), "shoe")
        elif event.status == "hello" and SHOE_FAULT in offline:
            self.submit(DeviceStatus(SHOE_FAULT, True, "shoe reset (HELLO)"), "shoe", frame=frame)
        if dispenser is not None:
            dispenser.on_status(event.status, self.service.table)
            dispenser.after_apply(self.service.table)

    # --- commands --------------------------------------------------------------------------------

    async def _serve_commands(self, sock: zmq.asyncio.Socket) -> None:
        assert self.guard is not None
        while True:
            parts = await sock.recv_multipart(copy=False)
            started = time.perf_counter()
            caller = self.guard.caller(parts[-1])
            frames = [p.bytes for p in parts]
            identity, rest = frames[0], frames[1:]
            delim = [b""] if len(rest) >= 2 and rest[0] == b"" else []
            payload = rest[-1] if rest else b""
            try:
                reply = await self.handle_command(payload, caller) if caller is not None else error_reply(
                    "this key is no longer authorised")
            except Exception as exc:  # a bug must not kill the table: answer it, log it
                log.exception("command %r failed", payload[:200])
                reply = error_reply(f"internal error: {type(exc).__name__}: {quote(str(exc), 200)}")
            await sock.send_multipart([identity, *delim, dumps(self.identify(reply))])
            await self._pacer.pace(started)  # a flood of requests must not hold back a card

    async def handle_command(self, payload: bytes, caller: KeyInfo) -> dict[str, Any]:
        """One request from ``caller``'s key, one reply; an invalid or forbidden one changes nothing."""
        service = self.service
        assert service is not None
        try:
            limits = self.config.limits
            parsed = parse_command(payload, limits.seats, self.config.table_id, limits,
                                   self.config.spec.currency.currency())
        except WrongTable as exc:
            return error_reply(str(exc), wrong_table=True)
        except CommandError as exc:
            return error_reply(str(exc))
        if not permitted(caller.role, parsed.name):
            assert self.guard is not None
            self.guard.refusals.warning(f"key {caller.name!r}", "refused %s from key %r: role %s may not",
                                        parsed.name, caller.name, caller.role)
            return error_reply(f"{parsed.name}: key {caller.name!r} has role {caller.role}, which may not "
                               f"send it (docs/security.md)", cmd=parsed.name, denied=True)
        if isinstance(parsed, Query) and parsed.name == "shoe":
            return self._shoe_command(parsed.args["action"])
        if isinstance(parsed, InputCommand):
            try:
                return resend.run(service, self.submit, parsed, caller.name)
            except JournalFault as exc:
                self.journal_faulted(exc)  # once: a failed read of a ref faults the journal too
                return journal_fault_reply(parsed.name, exc)
        return await self._query(parsed)

    def _shoe_command(self, action: str) -> dict[str, Any]:
        """``shoe reset``: RESET to the shoe, e.g. after the dealer cleared a jam (docs/commands.md)."""
        if self.shoe is None:
            return error_reply("shoe reset: this table has no shoe")
        try:
            if self.dispenser is not None:
                self.dispenser.reset()  # the HELLO that answers voids an unanswered DISPENSE
            else:
                self.shoe.reader.reset()
        except ShoeError as exc:
            return error_reply(f"shoe reset: {exc}")
        log.info("RESET sent to the shoe")
        return {"ok": True, "cmd": "shoe", "action": action, "sent": "RESET"}

    async def _query(self, q: Query) -> dict[str, Any]:
        service = self.service
        assert service is not None
        if q.name == "ping":
            return {
                "ok": True,
                "cmd": "ping",
                "table": self.config.table_id,
                "seq": service.seq,
                "currency": self.config.spec.currency.model_dump(),  # how ctl reads typed amounts
            }
        if q.name == "snapshot":
            return {"ok": True, "cmd": "snapshot", **service.snapshot(), "journal_id": self.journal_id}
        if q.name == "status":
            shoe = None
            if self.shoe_profile is not None:
                connected = self.shoe.reader.connected if self.shoe is not None else False
                shoe = {
                    "port": self.shoe_profile.port,
                    "protocol": self.shoe_profile.protocol,
                    "connected": connected,
                    # What the table makes of it: a shoe that cannot be opened or went away is offline.
                    "state": "connected" if connected else "device_offline",
                    "last_status": self.shoe_status,
                    **(shoe_health(self.shoe.reader) if self.shoe is not None else {}),
                    **(self.dispenser.view() if self.dispenser is not None else {"mode": "reader"}),
                }
            return {
                "ok": True,
                "cmd": "status",
                **service.status(),
                "shoe_device": shoe,
                "camera": self.camera.status() if self.camera is not None else None,
                "gpio": self._gpio_status(),
                "uptime": round(time.time() - self.started, 1),
                "selftest": self.selftest.to_dict(),
                "fsync": self.fsync,
            }
        if q.name == "meters":
            meters = service.table.meters_dict()
            seat = q.args.get("seat")
            if seat is not None:
                if str(seat) not in meters["seats"]:
                    return error_reply(f"meters: seat {seat} has never been seated")
                meters = {"table": meters["table"], "seats": {str(seat): meters["seats"][str(seat)]}}
            # ``table`` is the table's id in every reply; its meters are ``totals``.
            return {"ok": True, "cmd": "meters", "seq": service.seq, "totals": meters["table"],
                    "seats": meters["seats"]}
        assert q.name == "recall"
        return await self._recall(q.args.get("n"), q.args.get("round"))

    def _gpio_status(self) -> dict[str, Any] | None:
        if self.gpio is None:
            return None
        gpio = self.config.spec.gpio
        return {"backend": gpio.backend if gpio else None, "maps": [name for name, _ in self.config.panels],
                "control": self.gpio.control_endpoint,
                "lamps": self.gpio.lamps_payload(self.config.table_id)}

    async def _recall(self, n: int | None, round_no: int | None) -> dict[str, Any]:
        service = self.service
        assert service is not None
        current = service.table.round_no
        if round_no is not None:
            if round_no > current:
                return error_reply(f"recall: round {round_no} has not been played (last round {current})")
            need = current - round_no + 1
        else:
            need = n or 10
        rounds = service.recorder.last(need)
        if len(rounds) < min(need, current):
            # Older than the rounds kept in memory: rebuild from the journal, off the loop thread.
            conn, path, last = open_readonly(service.journal.path.parent)
            table = Table(self.config.new_game(), self.config.limits)
            try:
                rounds = await asyncio.get_running_loop().run_in_executor(
                    None, recall_from_journal, conn, path, table, need, min(last, service.journal.last_id)
                )
            finally:
                conn.close()
        if round_no is not None:
            rounds = [r for r in rounds if r["round"] == round_no]
            if not rounds:
                return error_reply(f"recall: round {round_no} is not in the journal")
        return {"ok": True, "cmd": "recall", "seq": service.seq, "rounds": rounds}

    # --- snapshots -------------------------------------------------------------------------------

    async def _serve_snapshots(self, sock: zmq.asyncio.Socket) -> None:
        while True:
            frames = await sock.recv_multipart()
            started = time.perf_counter()
            identity, rest = frames[0], frames[1:]
            delim = [b""] if len(rest) >= 2 and rest[0] == b"" else []
            payload = rest[-1] if rest else b""
            try:
                reply = self.snapshot_reply(payload)
            except Exception as exc:  # a bug must not end the snapshot socket: answer it, log it
                log.exception("snapshot request %r failed", payload[:200])
                reply = error_reply(f"internal error: {type(exc).__name__}: {quote(str(exc), 200)}")
            await sock.send_multipart([identity, *delim, dumps(self.identify(reply))])
            await self._pacer.pace(started)

    def snapshot_reply(self, payload: bytes) -> dict[str, Any]:
        """``{}`` or ``{"since": N}`` in; the state and its seq out (plus the missed events if held)."""
        service = self.service
        assert service is not None
        try:
            since, journal_id = parse_snapshot_request(payload)
        except RequestError as exc:
            return error_reply(f"snapshot: {exc}")
        reply: dict[str, Any] = {"ok": True, **service.snapshot(), "journal_id": self.journal_id,
                                 "refused_cards": list(service.refused_cards)}
        if self.gpio is not None:
            reply["lamps"] = self.gpio.lamps_payload(self.config.table_id)
        # Missed events only make sense in the journal the client was following: a client that
        # names another journal (the state dir was replaced) gets the state alone and redraws.
        if since is not None and journal_id in (None, self.journal_id):
            events = service.events_since(since)
            if events is not None:
                reply["events"] = events
        return reply

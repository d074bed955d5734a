"""The daemon: one asyncio loop owning the table, its ZeroMQ sockets and its devices, and the one input path.

:class:`Daemon` holds the table's state and composes its parts, each in a
module of its own that sees the daemon only as a
:class:`~controller.daemon.host.DaemonHost`: the sockets and request loops
(controller.daemon.sockets), start-up and stop (controller.daemon.startup),
the shoe link's events and commands (controller.daemon.shoe_events) and the
replies (controller.daemon.replies). Every input, from any source, goes
through :meth:`Daemon.submit`: journaled, applied, then published.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import zmq
import zmq.asyncio

from controller.daemon import replies, resend, shoe_events, sockets, startup
from controller.daemon.alerts import log_alerts
from controller.daemon.auth import CurveGuard
from controller.daemon.config import TableConfig, ZmqSpec, exposure_problems
from controller.daemon.dispenser import Dispenser
from controller.daemon.journal import Journal, JournalFault
from controller.daemon.keys import KeyFileError, KeyFolder, KeyInfo
from controller.daemon.panels import PanelHost
from controller.daemon.replies import journal_fault_reply
from controller.daemon.requests import Pacer
from controller.daemon.sdnotify import notify, watchdog_interval
from controller.daemon.selftest import HELLO_TIMEOUT, SelfTest
from controller.daemon.service import Applied, TableService, dumps
from controller.daemon.shoe_events import SHOE_CURSOR_LAG
from controller.daemon.shoe_link import ShoeLink
from controller.daemon.sockets import ROUTER_HWM, SNAPSHOT_HWM
from controller.daemon.startup import DaemonError, OptionError, check_gpio_control
from controller.daemon.statelock import StateDirLock
from controller.devices import JOURNAL_DEVICE, SHOE_FAULT, SHOE_HELLO, SHOE_LID
from controller.inputs import Input
from controller.table import Table
from drivers.shoe import FrameId, ShoeEvent, ShoeProfile

#: The names this module has always offered (tests and tools import them from here).
__all__ = [
    "JOURNAL_DEVICE", "ROUTER_HWM", "SHOE_CURSOR_LAG", "SHOE_FAULT", "SHOE_HELLO", "SHOE_LID", "SNAPSHOT_HWM",
    "Daemon", "DaemonError", "OptionError", "check_gpio_control", "journal_fault_reply",
]

log = logging.getLogger("croupier.daemon")
T = TypeVar("T")


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
        #: New at every start: a follower that drew from another run redraws (the journal may have been
        #: restored from an older copy meanwhile, its seqs come again with other events; docs/zeromq.md).
        self.run_id = uuid.uuid4().hex
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
                verify=False,  # the whole-file checks run once the table is up: startup.verify_journal
                limits=cfg.limits,
                currency=cfg.spec.currency.code,
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
        fault = service.journal.fault  # the replay's checkpoint, a change of limits: said once serving
        if fault is None:
            self.selftest.passed("journal", f"{service.journal.path}: {service.replayed} input(s) replayed, "
                                            f"seq {service.seq}")
        else:
            self.selftest.failed("journal", f"{fault}")
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
        opened: list[Any] = []
        guard: CurveGuard | None = None
        bound: sockets.Bound | None = None
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
            bound = sockets.bind_all(ctx, sync_ctx, guard, spec, self.config.spec.security.curve_events,
                                     opened)
            self._pub = bound.pub
            # Self-test (controller/daemon/selftest.py): the devices, once the sockets are bound.
            self.selftest.passed("keys", f"{len(guard.registry)} authorised key(s) in {guard.folder.root}")
            if self.config.panels:
                self.gpio = startup.open_panels(self, loop, self._gpio_control)
                self.selftest.passed("panels", f"{len(self.config.panels)} pin map(s) opened")
            if self.shoe_profile is not None:
                journal = self.service.journal if self.service is not None else None
                resume = journal.shoe_cursor if journal is not None else None
                card = journal.shoe_cursor_card if journal is not None else None
                self.shoe = ShoeLink(self.shoe_profile, loop, self.on_shoe_frame, resume, card,
                                     journal is not None and journal.shoe_cursor_no_card)
                offline = self.service.table.offline if self.service is not None else {}
                self.shoe.reader.flags.lid_open = SHOE_LID in offline  # as journaled: a "closed" beat is news
                if self.shoe_profile.mode == "dealing_shuffler":
                    assert self.service is not None
                    self.dispenser = Dispenser(self.shoe.reader, loop, self.submit_from_device,
                                               self.shoe_profile.dispense_timeout, self.service.table,
                                               self.service.journal, self.journal_faulted)
                self.selftest.expect_hello(self.shoe_profile.protocol)
                self.shoe.start()
                await shoe_events.await_shoe_hello(self)
            if self.config.camera is not None:
                self.camera = startup.open_camera(self, loop)
                self.camera.start()
                await startup.await_first_frame(self)
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
            if self.service.journal.fault is not None:  # found at start: halted, and said so before READY
                self.journal_faulted(self.service.journal.fault)
            self.ready.set()
            notify("READY=1", f"STATUS=table {self.config.table_id}: {self.selftest.summary()}")
            tasks = [
                asyncio.create_task(sockets.serve_commands(bound.command, guard, self.handle_command,
                                                           self.identify, self._pacer)),
                asyncio.create_task(sockets.serve_snapshots(
                    bound.snapshot, self.snapshot_reply, self.identify, self._pacer,
                    guard if self.config.spec.security.curve_events else None)),
            ]
            tasks.append(asyncio.create_task(replies.heartbeats(self, spec.heartbeat)))
            startup.verify_journal(self, loop)
            if self.parent_pid is not None:
                tasks.append(asyncio.create_task(startup.watch_parent(self.parent_pid, self._stop.set)))
            interval = watchdog_interval()
            if interval is not None:
                tasks.append(asyncio.create_task(startup.watchdog(interval)))
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
            if bound is not None:
                bound.handshakes.stop()
            for sock in opened:
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
    def stopping(self) -> bool:
        """True before :meth:`serve` ran and once a stop was asked: no late work on a closing journal."""
        return self._stop is None or self._stop.is_set()

    @property
    def journal_id(self) -> str:
        """The journal's random id: kept across restarts, new with a new journal (docs/zeromq.md)."""
        assert self.service is not None
        return self.service.journal.header["id"]

    # --- the parts (controller.daemon.replies, controller.daemon.shoe_events) ------------------------

    def identify(self, reply: dict[str, Any]) -> dict[str, Any]:
        """Every reply says which table and which journal answered (``table``, ``journal_id``)."""
        return replies.identify(self, reply)

    def heartbeat(self) -> dict[str, Any]:
        """The ``<table>.heartbeat`` message as things stand now."""
        return replies.heartbeat(self)

    async def handle_command(self, payload: bytes, caller: KeyInfo) -> dict[str, Any]:
        """One request from ``caller``'s key, one reply; an invalid or forbidden one changes nothing."""
        return await replies.handle_command(self, payload, caller)

    def snapshot_reply(self, payload: bytes) -> dict[str, Any]:
        """``{}`` or ``{"since": N}`` in; the state and its seq out (plus the missed events if held)."""
        return replies.snapshot_reply(self, payload)

    def on_shoe_frame(self, frame: FrameId | None, event: ShoeEvent | None) -> bool:
        """Loop thread: take a shoe frame (or a line status: ``frame`` None); True once it is durable."""
        return shoe_events.on_shoe_frame(self, frame, event)

    def on_shoe_event(self, event: ShoeEvent, frame: FrameId | None = None) -> None:
        """Loop thread: a card becomes an input; the line going down or up becomes a device input."""
        shoe_events.on_shoe_event(self, event, frame)

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
        lamps = self._after_apply("panels", self.gpio.after_apply) if self.gpio is not None else None
        if pub is not None:
            for payload in applied.payloads:
                pub.send_multipart([f"{tid}.{payload['event']}".encode(), dumps(payload)], flags=zmq.NOBLOCK)
        if lamps is not None and self.gpio is not None:
            self.publish_side("lamps", self.gpio.lamps_payload(tid))
        if self.dispenser is not None:
            self._after_apply("dispenser", self.dispenser.after_apply)
        if self.service.journal.fault is not None:  # after it was applied: a limits change the round's end
            self.journal_faulted(self.service.journal.fault)  # could not make (journal_limits) halts
        return applied

    def _after_apply(self, what: str, follow: Callable[[Table], T]) -> T | None:
        """A device following an input already journaled and applied: a failure is logged, never the
        input's answer (the reply says it was applied, and its events are still published)."""
        assert self.service is not None
        try:
            return follow(self.service.table)
        except Exception:
            log.exception("%s: following the table failed (the input stands, journaled and applied)", what)
            return None

    def _checkpoint(self) -> None:
        """Loop, right after the input that made a checkpoint due was published (and, from the shoe,
        acknowledged), before the next input. Not while stopping: the journal may be closed by the
        time the loop runs this, and the next start replays a few more inputs instead."""
        service = self.service
        if service is None or self.stopping:
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
                     "acknowledged. Correct what it names (a failed write: free space or replace the "
                     "storage), then restart the daemon.", fault)
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

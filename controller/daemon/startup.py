"""The daemon's start-up and stop: its start errors, opening its devices, the late journal check, watchers.

The daemon (controller.daemon.server) binds its sockets first, then opens
the devices here; the whole-journal check runs on a thread once the table is
up, and the watchers stop the daemon with its supervisor (docs/daemon.md,
"Start-up").
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from controller.daemon.config import TableConfig
from controller.daemon.host import DaemonHost
from controller.daemon.journal import JournalFault, verify_file
from controller.daemon.panels import PanelHost
from controller.daemon.sdnotify import notify
from controller.devices import JOURNAL_DEVICE
from controller.inputs import DeviceStatus
from drivers.gpio import BackendError
from drivers.gpio.control import ControlError, parse_endpoint

log = logging.getLogger("croupier.daemon")



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


def open_panels(d: DaemonHost, loop: asyncio.AbstractEventLoop, gpio_control: str | None) -> PanelHost:
    """Open the panels' pins and control socket; DaemonError (exit 4) when they cannot be opened."""
    assert d.service is not None
    config = d.config
    if gpio_control is not None and config.spec.gpio is not None:
        gpio = config.spec.gpio.model_copy(update={"control": gpio_control})
        config = dataclasses.replace(config, spec=config.spec.model_copy(update={"gpio": gpio}))
    host = PanelHost(config)
    try:
        service = d.service
        host.open(service.table, loop, d.submit_from_device, service.sensor_wagers,
                  service.recorder.last_bets(service.table.phase == "betting")
                  if service.journal.last_id else None)  # a restart: what a press bets (panels.py)
    except OSError as exc:
        control = config.spec.gpio.control if config.spec.gpio is not None else None
        if exc.errno == errno.EADDRINUSE and control is not None:
            raise DaemonError(
                f"cannot open the GPIO panels' control socket {control}: the address is in use by another "
                "program (another daemon or demo on this table?); gpio.control in the table file (or "
                "croupier run --gpio-control ENDPOINT) moves it") from None
        raise DaemonError(f"cannot open the GPIO panels: {exc}") from None
    except BackendError as exc:
        raise DaemonError(f"cannot open the GPIO panels: {exc}") from None
    return host


def open_camera(d: DaemonHost, loop: asyncio.AbstractEventLoop) -> Any:
    """The camera link (a :class:`~controller.daemon.camera_link.CameraLink`, for the caller to start);
    imported here so that a table without a camera never loads OpenCV."""
    from controller.daemon import camera_window
    from controller.daemon.camera_link import CameraLink, CameraStartError

    assert d.config.camera is not None and d.service is not None
    service = d.service

    def gone() -> None:  # the window seen empty, journaled: a failed write halts the table
        try:
            camera_window.record_gone(service.journal)
        except JournalFault as exc:
            d.journal_faulted(exc)
            raise

    try:  # the journal's memory of the window is read before the camera's first frame
        camera = CameraLink(d.config.camera, d.state_dir, loop,
                            lambda inp, ref: d.submit(inp, camera_window.SOURCE, ref),
                            lambda: service.table.offline,
                            in_window=camera_window.in_window(service.journal), gone=gone)
    except CameraStartError as exc:
        raise DaemonError(f"cannot start the camera: {exc}") from None
    return camera


def verify_journal(d: DaemonHost, loop: asyncio.AbstractEventLoop) -> None:
    """The journal's whole-file checks, on a thread of their own after start; a failure halts the table.

    Start-up reads only the newest checkpoint and the rows after it, so the
    checks that read every page (integrity, no row missing) run here: a damaged
    journal takes the device ``journal`` offline (no new deal, a round being
    dealt tilts) with the reason, and a journal that checks out brings it back.
    A daemon thread, so stopping the daemon never waits for it.
    """
    assert d.service is not None
    path = d.service.journal.path

    def check() -> None:
        problem = verify_file(path)
        with contextlib.suppress(RuntimeError):  # the loop closed: the daemon stopped meanwhile
            loop.call_soon_threadsafe(_journal_verified, d, problem)

    threading.Thread(target=check, name="journal-verify", daemon=True).start()


def _journal_verified(d: DaemonHost, problem: str | None) -> None:
    service = d.service
    if service is None or d.stopping:
        return
    if problem is not None:
        log.error("%s: %s", service.journal.path, problem)
        d.submit_from_device(DeviceStatus(JOURNAL_DEVICE, False, problem), "journal")
    elif JOURNAL_DEVICE in service.table.offline:
        d.submit_from_device(DeviceStatus(JOURNAL_DEVICE, True, "integrity check passed"), "journal")
    else:
        log.info("%s: integrity check passed", service.journal.path)


async def watchdog(interval: float) -> None:
    """systemd's watchdog, pinged from the table's own loop: a loop that stops turning is restarted."""
    while True:
        notify("WATCHDOG=1")
        await asyncio.sleep(interval)


async def watch_parent(pid: int, stop: Callable[[], None], interval: float = 0.5) -> None:
    """Call ``stop`` when the parent ``pid`` is gone (we were re-parented): no orphan daemon holding ports."""
    while os.getppid() == pid:
        await asyncio.sleep(interval)
    log.warning("parent process %d is gone: stopping", pid)
    stop()


async def await_first_frame(d: DaemonHost) -> None:
    """The camera's part of the self-test: a frame within ``hello_timeout`` seconds of start, else a
    visible fault (the camera itself goes offline through the journal once ``offline_after`` passes)."""
    camera = d.camera
    passed = f"deck {camera.profile.name}, {camera.describe()}"
    if await camera.first_frame(d.hello_timeout):
        d.selftest.passed("camera", passed)
        return
    why = f": {camera.open_error}" if camera.open_error else ""
    what = f"no frame from {camera.describe()} within {d.hello_timeout:g} s of start{why} (self-test)"
    d.selftest.failed("camera", what)
    log.error("camera: %s; the table is halted until frames come", what)

    def came() -> None:  # the first frame, late: the fault is cleared, as a shoe's late HELLO clears its own
        d.selftest.passed("camera", passed)
        log.info("camera: its first frame came after the self-test: %s", passed)

    camera.on_first_frame = came
    if await camera.first_frame(0):  # it came between the wait's end and now
        came()

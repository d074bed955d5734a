"""The daemon as its parts (shoe events, replies, start-up) see it: a protocol, so none imports the server.

:class:`controller.daemon.server.Daemon` satisfies :class:`DaemonHost`; the
modules it is split into take a ``DaemonHost`` instead of the ``Daemon``, so
the server imports them and none of them imports the server back (the import
contract forbids circles, even lazy ones).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from controller.daemon.auth import CurveGuard
from controller.daemon.config import TableConfig, ZmqSpec
from controller.daemon.dispenser import Dispenser
from controller.daemon.journal import JournalFault
from controller.daemon.panels import PanelHost
from controller.daemon.selftest import SelfTest
from controller.daemon.service import Applied, TableService
from controller.daemon.shoe_link import ShoeLink
from controller.inputs import Input
from drivers.shoe import FrameId, ShoeProfile


class DaemonHost(Protocol):
    """The daemon's state and its one input path, as its parts see them (docs/architecture.md)."""

    config: TableConfig
    state_dir: Path
    fsync: bool
    zmq_spec: ZmqSpec
    hello_timeout: float
    started: float
    selftest: SelfTest
    service: TableService | None
    guard: CurveGuard | None
    shoe_profile: ShoeProfile | None
    shoe: ShoeLink | None
    shoe_status: dict[str, Any] | None
    dispenser: Dispenser | None
    gpio: PanelHost | None
    camera: Any

    @property
    def journal_id(self) -> str:
        """The journal's random id (docs/zeromq.md)."""

    #: This daemon process's random id, new at every start (docs/zeromq.md, ``run``).
    run_id: str

    @property
    def stopping(self) -> bool:
        """True before :meth:`serve` ran and once a stop was asked: no late work on a closing journal."""

    def submit(
        self, inp: Input, source: str, ref: str | None = None, frame: FrameId | None = None
    ) -> Applied:
        """Journal, apply, then publish (the one input path)."""

    def submit_from_device(self, inp: Input, source: str) -> None:
        """As :meth:`submit`; a journal fault is already reported."""

    def journal_faulted(self, fault: JournalFault) -> None:
        """Halt, loudly, once."""

    def publish_side(self, topic: str, payload: dict[str, Any]) -> None:
        """A side-topic message (no ``seq``, not journaled)."""

"""The wire shapes that are not table events: side topics, the snapshot exchange and command replies.

Why typed dictionaries: these messages are built as plain dicts (they go
straight to ``json.dumps``), but a display developer in another language
needs their exact shape. They are declared once here, next to the code that
builds them, and :mod:`controller.daemon.contract` turns them (and the event
dataclasses of :mod:`controller.events`) into the JSON Schema published in
docs/schema/. ``tests/test_contract.py`` validates every message of a real
session of each game against that schema, so a field added here but not
sent, or sent but not declared here, fails a test: add a new reply field
here (and to docs/commands.md), then run ``python -m controller.daemon.contract``.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from controller.events import TiltReason

LampModeName = Literal["on", "blink", "fault"]
Phase = Literal["idle", "betting", "dealing"]


class SeatLamps(TypedDict):
    """A seat's lit lamps: its buttons and its spots."""

    buttons: dict[str, LampModeName]
    spots: dict[str, LampModeName]


class LampsBody(TypedDict):
    """Every lit lamp; ``n``: lamp messages since the daemon started; ``fault``: the tower's fault lamp."""

    n: int
    fault: bool
    seats: dict[str, SeatLamps]
    dealer: dict[str, LampModeName]
    tower: dict[str, LampModeName]


class Lamps(LampsBody):
    """The ``<table>.lamps`` side topic."""

    event: Literal["lamps"]
    table: str


class ShoeStatusMessage(TypedDict):
    """The ``<table>.shoe_status`` side topic: ``shoe_<status>``, when, and the status's own detail
    (further keys, which vary with the status: docs/shoe-protocol.md)."""

    event: str
    table: str
    at: float


class HeartbeatTilt(TypedDict):
    """The tilt as the state shows it, and the cards refused while it lasts: only past the bound of
    held cards (out of the shoe: the dealer keys them again with ``card`` once it is resolved)."""

    reason: TiltReason
    card: str
    detail: str
    held: list[str]
    refused_cards: list[str]


class Heartbeat(TypedDict):
    """The ``<table>.heartbeat`` side topic (docs/zeromq.md)."""

    event: Literal["heartbeat"]
    table: str
    journal_id: str
    #: The daemon process's random id, new at every start: a client drawn from another run redraws.
    run: str
    last_seq: int
    round: int
    phase: Phase
    tilt: HeartbeatTilt | None
    journal_fault: JournalFaultInfo | None
    offline: dict[str, str]
    lamps: LampsBody | None
    #: The limits in force (``state.limits``, with the amounts' ``minor_units``): a start under a table
    #: file of other limits changes them without an event, so a client redraws them from here.
    limits: dict[str, int]
    interval: float
    at: float


class StateTilt(TypedDict):
    """A tilt in the state: ``card`` is the tilt's card (``""`` for a device tilt); ``held``: the cards
    delivered during the tilt, in order, that the dealer takes or burns once its cause is resolved."""

    reason: TiltReason
    card: str
    detail: str
    held: list[str]


class Wager(TypedDict):
    seat: int
    spot: str
    amount: int


class TableState(TypedDict):
    """``Table.snapshot()``: the whole table at a ``seq``."""

    game: str
    round: int
    phase: Phase
    limits: dict[str, Any]
    credits: dict[str, int]
    wagers: list[Wager]
    due: dict[str, Any] | None
    tilt: StateTilt | None
    offline: dict[str, str]
    burn_next: bool
    shoe: dict[str, Any]
    round_view: dict[str, Any]
    game_state: dict[str, Any]
    meters: dict[str, Any]
    #: This shoe's round results so far (a scoreboard's road), oldest first.
    shoe_results: list[dict[str, Any]]
    #: How many shoes the table has started (``new_shoe`` inputs applied; 0 before the first).
    shoe_number: int
    #: The dealer in (``dealer_in``), None when nobody is.
    dealer: str | None


class SnapshotRequest(TypedDict, total=False):
    """``{}``, ``{"since": SEQ}`` or ``{"since": SEQ, "journal_id": ID}``."""

    since: int
    journal_id: str


class JournalFaultInfo(TypedDict):
    """The journal cannot be written: the table is halted (docs/daemon.md, "A journal that fails")."""

    file: str
    error: str


class JournalFaultMessage(JournalFaultInfo):
    """The ``<table>.journal_fault`` side topic: sent once when the journal cannot be written."""

    event: Literal["journal_fault"]
    table: str
    at: float


class Currency(TypedDict):
    """How amounts are shown and typed: ISO 4217 ``code`` (or ``""``) and its decimals."""

    code: str
    minor_units: int


class Identity(TypedDict):
    """In every reply: which table and which journal answered."""

    table: str
    journal_id: str


class SnapshotReply(Identity):
    """The snapshot socket's answer (``events``: the missed events, when still held)."""

    ok: Literal[True]
    seq: int
    #: The daemon process's random id, new at every start (as the heartbeat's).
    run: str
    currency: Currency
    state: TableState
    journal_fault: JournalFaultInfo | None
    #: The table file's limits waiting for the round in play to end (docs/daemon.md, "Limits").
    limits_pending: dict[str, int] | None
    #: Cards refused while the table is tilted (past the bound of held cards), until the tilt ends.
    refused_cards: NotRequired[list[str]]
    lamps: NotRequired[Lamps]
    events: NotRequired[list[dict[str, Any]]]


class ErrorReply(Identity):
    """A request that was refused: invalid (nothing journaled), for another table, or by the table."""

    ok: Literal[False]
    error: str
    cmd: NotRequired[str]
    refused: NotRequired[Literal[True]]
    wrong_table: NotRequired[Literal[True]]
    #: The caller's key has a role that may not send this command (docs/security.md).
    denied: NotRequired[Literal[True]]
    journal_fault: NotRequired[Literal[True]]
    #: The request reused a ``ref`` its key had sent with another body: nothing done.
    ref_reused: NotRequired[Literal[True]]
    row: NotRequired[int]
    seq: NotRequired[int]
    #: A resend of a refused command: this is the first reply, repeated (nothing applied again).
    duplicate: NotRequired[Literal[True]]


class InputReply(Identity):
    """An input command that was applied (or, with ``duplicate``, had been already: the first reply)."""

    ok: Literal[True]
    cmd: str
    row: int
    seq: int
    events: NotRequired[list[dict[str, Any]]]
    duplicate: NotRequired[Literal[True]]


class JournalInfo(TypedDict):
    path: str
    rows: int
    replayed_at_start: int
    checkpoint_row: int
    replay_seconds: float


class ShoeDevice(TypedDict):
    """The shoe's line; the reader's health (``flags`` ...) once its link is started."""

    port: str
    protocol: str
    connected: bool
    #: What the table makes of the line: a shoe that cannot be opened or went away is offline.
    state: Literal["connected", "device_offline"]
    last_status: dict[str, Any] | None
    flags: NotRequired[dict[str, bool]]
    last_heartbeat: NotRequired[dict[str, Any] | None]
    framing_errors: NotRequired[int]
    naks: NotRequired[int]
    unknown_types: NotRequired[dict[str, int]]
    mode: NotRequired[Literal["reader", "dealing_shuffler"]]
    dispense_outstanding: NotRequired[bool]
    dispensed: NotRequired[int]
    dispense_timeout: NotRequired[float]


class GpioStatus(TypedDict):
    backend: str | None
    maps: list[str]
    control: str | None
    lamps: Lamps


class CameraStatus(TypedDict):
    """A camera table's camera: its source, deck profile, whether frames arrive, the last reading."""

    source: str
    deck: str
    online: bool
    frames: int
    cards: int
    last: dict[str, Any] | None
    #: Why the camera is offline now (None online): the journal and ``offline`` keep the cause it went offline
    #: for, said once; this follows the camera (a covered lens whose frames then stop).
    cause: str | None


class StatusReply(Identity):
    ok: Literal[True]
    cmd: Literal["status"]
    game: str
    round: int
    phase: Phase
    seq: int
    currency: Currency
    due: dict[str, Any] | None
    tilt: HeartbeatTilt | None
    journal_fault: JournalFaultInfo | None
    limits_pending: dict[str, int] | None
    offline: dict[str, str]
    burn_next: bool
    dealer: str | None
    credits: dict[str, int]
    wagers: list[Wager]
    shoe: dict[str, Any]
    journal: JournalInfo
    shoe_device: ShoeDevice | None
    gpio: GpioStatus | None
    camera: CameraStatus | None
    uptime: float
    fsync: bool
    selftest: SelfTestInfo


class SelfTestInfo(TypedDict):
    """The start-up checks (docs/daemon.md, "Start-up"): one line per check, ``ok: ...`` or ``FAULT: ...``."""

    passed: bool
    checks: dict[str, str]


class TableMeters(TypedDict):
    rounds_settled: int
    rounds_voided: int
    house_net: int


class SeatMeters(TypedDict):
    credits_in: int
    credits_out: int
    wagered: int
    won: int
    lost: int
    rounds: int


class MetersSince(TypedDict):
    """When the meters' period began: a change of the currency's decimals starts a new one, at 0."""

    round: int
    minor_units: int


class MetersReply(Identity):
    ok: Literal[True]
    cmd: Literal["meters"]
    seq: int
    totals: TableMeters
    seats: dict[str, SeatMeters]
    since: MetersSince


class RecallReply(Identity):
    """``rounds``: recalled rounds, shaped as docs/commands.md shows."""

    ok: Literal[True]
    cmd: Literal["recall"]
    seq: int
    rounds: list[dict[str, Any]]


class SnapshotCommandReply(SnapshotReply):
    cmd: Literal["snapshot"]


class PingReply(Identity):
    ok: Literal[True]
    cmd: Literal["ping"]
    seq: int
    currency: Currency


class ShoeReply(Identity):
    """``shoe reset``: what was sent to the shoe (None: a plain line has no RESET; its fault is cleared)."""

    ok: Literal[True]
    cmd: Literal["shoe"]
    action: Literal["reset"]
    sent: Literal["RESET"] | None


#: Each query's reply, by command name (an input command answers :class:`InputReply`).
QUERY_REPLIES: dict[str, type] = {
    "status": StatusReply,
    "meters": MetersReply,
    "recall": RecallReply,
    "snapshot": SnapshotCommandReply,
    "ping": PingReply,
    "shoe": ShoeReply,
}

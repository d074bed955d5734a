"""The table file's keys as pydantic models: what each section may hold, checked before anything opens.

:func:`controller.daemon.config.load_table` validates a file against
:class:`TableFile` and turns it into a ``TableConfig``; every model forbids
unknown keys, so a typo stops the start with the key named (docs/daemon.md).
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from controller.daemon.camera_config import CameraSpec
from controller.daemon.endpoints import check_endpoint
from controller.games import check_game_name
from controller.limits import MAX_SEATS
from controller.money import Currency
from drivers.gpio.expanders import Expander
from drivers.gpio.pinmap import ChipRef
from signage.settings import DisplaySpec

_TABLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: Table ids that are words of the floor's NATS subjects: table ``alerts``'s rows (croupier.alerts.rows)
#: would be table ``rows``'s alerts, its heartbeat table ``alive``'s alerts (a review, 2026-12-07).
RESERVED_IDS: Final = frozenset({"alerts", "alive", "rows"})


class LimitsSpec(BaseModel):
    """Betting limits in minor units; the seat count is the top-level ``seats`` key. Whole numbers
    only (strict): ``min_bet: 5.00`` (meaning five euros) was read as 5 cents, ``on`` as 1."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    unit: int = Field(strict=True, default=100, ge=1)
    min_bet: int = Field(strict=True, default=100, ge=1)
    max_bet: int = Field(strict=True, default=1_000_000, ge=1)
    #: Largest single credit_in / credit_out command (docs/security.md).
    max_credit: int = Field(strict=True, default=100_000_000, ge=1)


class CurrencySpec(BaseModel):
    """The table's currency: how people see and type amounts (``995.00``); machines keep minor units."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: ISO 4217 code shown where a reader needs it (``EUR``); empty: none named.
    code: str = Field(default="", pattern=r"^([A-Z]{3})?$")
    #: Decimals of the currency: 2 for EUR/USD/GBP (amounts in cents), 0 for JPY.
    minor_units: int = Field(strict=True, default=2, ge=0, le=4)

    def currency(self) -> Currency:
        return Currency(self.code, self.minor_units)


class ShoeSpec(BaseModel):
    """The shoe: a device profile, relative to the table file or to ``firmware_configs/``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    profile: str = Field(min_length=1)
    #: The line this table's shoe is on, instead of the profile's ``port`` (one profile serves
    #: many tables; two tables on one machine need two lines).
    port: str | None = Field(default=None, min_length=1)


class ZmqSpec(BaseModel):
    """ZeroMQ endpoints; loopback by default so nothing is exposed unless a file says so."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pub: str = "tcp://127.0.0.1:5556"
    snapshot: str = "tcp://127.0.0.1:5557"
    command: str = "tcp://127.0.0.1:5558"
    #: Messages queued per subscriber before the PUB drops for that subscriber (never blocks the table).
    pub_hwm: int = Field(default=10_000, ge=1)
    #: Seconds between ``<table>.heartbeat`` messages on the PUB (docs/zeromq.md).
    heartbeat: float = Field(default=1.0, gt=0, le=60)

    @field_validator("pub", "snapshot", "command")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        return check_endpoint(value)


class SecuritySpec(BaseModel):
    """CurveZMQ (docs/security.md): the command socket always takes authorised keys only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The table's key folder (server pair, authorized/, clients/); default ``<state_dir>/keys``.
    keys: str | None = None
    #: Also require an authorised key (any role) on the PUB and snapshot sockets.
    curve_events: bool = False
    #: Let the PUB and snapshot sockets bind beyond loopback WITHOUT CURVE (anyone there may read).
    plain_events_beyond_loopback: bool = False


class PanelEntry(BaseModel):
    """A pin map used with changes: the same panel layout wired to another header.

    One layout file serves every seat of a table (a seat panel is a seat panel):
    ``{map: panels/swap_hand.yaml, seats: {1: 3}}`` is that map's seat 1 wired as
    seat 3 on its own header, and ``dealer: false`` / ``tower: false`` leave out
    the parts of the map that another header already provides.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    map: str = Field(min_length=1)
    #: The map's seat -> the table seat it is wired as; only the seats listed are used.
    seats: dict[int, int] | None = None
    dealer: bool = True
    tower: bool = True
    #: The map's chip -> the chip it is wired to (``{0x20: 0x23}``: the same layout on the expander at 0x23).
    chips: dict[ChipRef, ChipRef] | None = None


class GpioSpec(BaseModel):
    """Which pins the panels are read from: gpiozero's mock pins, or a Pi's header."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: ``mock`` (simulated pins, anywhere), ``rpigpio`` (Pi 3/4) or ``lgpio`` (Pi 5). No default:
    #: a table that silently read mock pins on the floor would ignore every player.
    backend: Literal["mock", "rpigpio", "lgpio"]
    #: Mock only: ``tcp://127.0.0.1:PORT`` where another process presses buttons and reads lamps.
    control: str | None = None
    #: MCP23017/MCP23S17 expanders beside the header (docs/wiring.md). With any listed, the table's maps
    #: share one world, simulated or real: the header and these chips, each line used once.
    expanders: list[Expander] = Field(default_factory=list)


class SimPlayer(BaseModel):
    """A simulated player: a seat, its starting credits and the wagers it picks from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seat: int = Field(ge=1, le=MAX_SEATS)
    credits: int = Field(ge=0)
    #: spot -> the amounts it picks from; every spot listed is wagered together in a round it plays.
    bets: dict[str, list[int]] = Field(min_length=1)
    #: Chance of sitting a round out.
    sit_out: float = Field(default=0.0, ge=0.0, le=1.0)
    #: Optional spots: spot -> chance of adding it (side bets such as a tie).
    extras: dict[str, float] = Field(default_factory=dict)


class SimulationSpec(BaseModel):
    """How ``croupier demo`` runs this table with simulated hardware and players."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int = 1
    #: Seconds between cards out of the simulated shoe.
    card_interval: float = Field(default=0.4, ge=0.0, le=60.0)
    #: Seconds betting stays open, and between rounds.
    betting_time: float = Field(default=1.0, ge=0.0, le=600.0)
    #: Cards left behind the cut card: a new shoe is shuffled when fewer remain.
    cut_card: int = Field(default=16, ge=0)
    #: One Card Poker: the Designated Player seat set before the first round.
    dp: int | None = None
    players: list[SimPlayer] = Field(min_length=1)


class TableFile(BaseModel):
    """The file's keys; :func:`load_table` turns it into a :class:`TableConfig`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    table: str
    description: str = ""
    game: str
    options: dict[str, Any] = Field(default_factory=dict)
    seats: int | None = Field(default=None, ge=1, le=MAX_SEATS)
    limits: LimitsSpec = Field(default_factory=LimitsSpec)
    currency: CurrencySpec = Field(default_factory=CurrencySpec)
    shoe: ShoeSpec | None = None
    #: A card-reading camera (docs/vision.md); OpenCV is imported only when this is set.
    camera: CameraSpec | None = None
    #: Pin maps (paths, or :class:`PanelEntry`), relative to the table file or ``firmware_configs/``.
    panels: list[str | PanelEntry] = Field(default_factory=list)
    gpio: GpioSpec | None = None
    zeromq: ZmqSpec = Field(default_factory=ZmqSpec)
    security: SecuritySpec = Field(default_factory=SecuritySpec)
    state_dir: str
    simulation: SimulationSpec | None = None
    #: The signage screen (``croupier display``); docs/display.md.
    display: DisplaySpec = Field(default_factory=DisplaySpec)

    @field_validator("table")
    @classmethod
    def _table_id(cls, value: str) -> str:
        if not _TABLE_ID.match(value):
            raise ValueError(
                f"a table id is 1-64 letters, digits, '_' or '-' (it is a topic prefix), not {value!r}"
            )
        if value.lower() in RESERVED_IDS:
            raise ValueError(f"{value!r} is a word of the floor's subjects (croupier.TABLE.rows.JOURNAL, "
                             ".alive, croupier.alerts.TABLE): name the table otherwise")
        return value

    @field_validator("game")
    @classmethod
    def _game(cls, value: str) -> str:
        return check_game_name(value)

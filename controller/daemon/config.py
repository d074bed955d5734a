"""Table files (``firmware_configs/tables/*.yaml``): one table, validated completely before anything opens.

A table file names the table (its id is the first part of every ZeroMQ
topic), the game and its options, the limits and seats, the shoe's device
profile, the ZeroMQ endpoints, the state directory and the ``simulation``
section used by ``croupier demo``, and the GPIO panels (``panels`` pin maps on
a ``gpio`` backend). Every key is checked; an unknown key, a
wrong type or an option the game does not have stops the start with
:class:`TableFileError`, whose message names the file, the key and the reason,
because a typo found at 3 a.m. on the floor is far more expensive than one
found at start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from controller.configfile import ConfigFileError, read_yaml, validation_problems
from controller.daemon.auth import is_loopback
from controller.daemon.camera_config import CameraSettings, CameraSpec, resolve_camera
from controller.daemon.endpoints import check_endpoint
from controller.game_base import Game, GameOptions
from controller.games import GAMES, check_game_name
from controller.limits import TableLimits
from controller.money import Currency
from controller.panels.pinmaps import load_pin_map
from drivers.gpio.backend import FACTORIES
from drivers.gpio.control import ControlError, parse_endpoint
from drivers.gpio.pinmap import PinMap, PinMapError, check_disjoint
from drivers.shoe import ProfileError, ShoeProfile, load_profile
from signage.settings import DisplaySpec

#: Where ``firmware_configs/`` lives in a checkout (profiles are also looked up there).
FIRMWARE_CONFIGS = Path(__file__).resolve().parents[2] / "firmware_configs"

_TABLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class TableFileError(ConfigFileError):
    """A table file that cannot be used: ``<file>: key '<key>': <reason>`` per problem."""


class LimitsSpec(BaseModel):
    """Betting limits in minor units; the seat count is the top-level ``seats`` key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    unit: int = Field(default=100, ge=1)
    min_bet: int = Field(default=100, ge=1)
    max_bet: int = Field(default=1_000_000, ge=1)
    #: Largest single credit_in / credit_out command (docs/security.md).
    max_credit: int = Field(default=100_000_000, ge=1)


class CurrencySpec(BaseModel):
    """The table's currency: how people see and type amounts (``995.00``); machines keep minor units."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: ISO 4217 code shown where a reader needs it (``EUR``); empty: none named.
    code: str = Field(default="", pattern=r"^([A-Z]{3})?$")
    #: Decimals of the currency: 2 for EUR/USD/GBP (amounts in cents), 0 for JPY.
    minor_units: int = Field(default=2, ge=0, le=4)

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


class GpioSpec(BaseModel):
    """Which pins the panels are read from: gpiozero's mock pins, or a Pi's header."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: ``mock`` (simulated pins, anywhere), ``rpigpio`` (Pi 3/4) or ``lgpio`` (Pi 5). No default:
    #: a table that silently read mock pins on the floor would ignore every player.
    backend: Literal["mock", "rpigpio", "lgpio"]
    #: Mock only: ``tcp://127.0.0.1:PORT`` where another process presses buttons and reads lamps.
    control: str | None = None


class SimPlayer(BaseModel):
    """A simulated player: a seat, its starting credits and the wagers it picks from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seat: int = Field(ge=1, le=12)
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
    seats: int | None = Field(default=None, ge=1, le=12)
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
        return value

    @field_validator("game")
    @classmethod
    def _game(cls, value: str) -> str:
        return check_game_name(value)


@dataclass(frozen=True)
class TableConfig:
    """A validated table file, with its paths resolved and its game options parsed."""

    path: Path
    spec: TableFile
    options: GameOptions
    limits: TableLimits
    shoe_profile: ShoeProfile | None
    shoe_profile_path: Path | None
    state_dir: Path
    #: (where it came from, the validated map as the table uses it), in file order.
    panels: tuple[tuple[str, PinMap], ...] = ()
    camera: CameraSettings | None = None

    @property
    def table_id(self) -> str:
        return self.spec.table

    @property
    def game_name(self) -> str:
        return self.spec.game

    def new_game(self) -> Game:
        return GAMES[self.spec.game](self.options)

    def key_folder(self, state_dir: Path | None = None) -> Path:
        """The table's key folder (``security.keys``, else ``keys`` in the state dir in use)."""
        keys = self.spec.security.keys
        if keys is None:
            return (state_dir or self.state_dir) / "keys"
        return Path(keys) if Path(keys).is_absolute() else (self.path.parent / keys).resolve()

    def options_dict(self) -> dict[str, Any]:
        """The game options as stored in the journal header (every option, defaults included)."""
        return self.options.model_dump(mode="json")


def _find_profile(table_path: Path, name: str, folder: str = "shoes") -> Path | None:
    for base in (table_path.parent, FIRMWARE_CONFIGS, FIRMWARE_CONFIGS / folder):
        candidate = (base / name).resolve()
        if candidate.is_file():
            return candidate
    return None


def load_table(path: Path | str) -> TableConfig:
    """Read and validate a table file; :class:`TableFileError` names the file, key and reason."""
    path = Path(path)
    return parse_table(read_yaml(path, TableFileError), path)


def parse_table(raw: object, path: Path) -> TableConfig:
    """Validate already-parsed table data; ``path`` names it in errors and anchors relative paths."""
    if not isinstance(raw, dict):
        raise TableFileError(path, [(None, "a table file is a mapping with table, game, state_dir, ...")])
    try:
        spec = TableFile.model_validate(raw)
    except ValidationError as exc:
        raise TableFileError(path, validation_problems(exc)) from None
    cls = GAMES[spec.game]
    try:
        options = cls.options_model.model_validate(spec.options)
    except ValidationError as exc:
        raise TableFileError(path, validation_problems(exc, "options")) from None
    seats = spec.seats if spec.seats is not None else cls.default_seats
    try:
        limits = TableLimits(seats=seats, minor_units=spec.currency.minor_units, **spec.limits.model_dump())
    except ValidationError as exc:
        raise TableFileError(path, validation_problems(exc, "limits")) from None
    problems: list[tuple[str | None, str]] = []
    if spec.simulation is not None:
        for i, player in enumerate(spec.simulation.players):
            if player.seat > seats:
                problems.append((f"simulation.players.{i}.seat", f"seat {player.seat} > seats ({seats})"))
            for spot in (*player.bets, *player.extras):
                if spot not in cls.bet_spots:
                    problems.append(
                        (
                            f"simulation.players.{i}",
                            f"{spec.game} has no spot {spot!r}; spots: {', '.join(cls.bet_spots)}",
                        )
                    )
    profile = profile_path = None
    if spec.shoe is not None:
        profile_path = _find_profile(path, spec.shoe.profile)
        if profile_path is None:
            problems.append(
                (
                    "shoe.profile",
                    f"no file {spec.shoe.profile!r} next to the table file or in {FIRMWARE_CONFIGS}",
                )
            )
        else:
            try:
                profile = load_profile(profile_path)
            except ProfileError as exc:
                problems.append(("shoe.profile", str(exc).replace("\n", "; ")))
            if profile is not None and spec.shoe.port is not None:
                profile = profile.model_copy(update={"port": spec.shoe.port})
    panels = _panels(spec, path, seats, problems)
    camera = None if spec.camera is None else resolve_camera(spec.camera, path, _find_profile, problems)
    problems.extend(exposure_problems(spec.zeromq, spec.security))
    if problems:
        raise TableFileError(path, problems)
    state_dir = Path(spec.state_dir)
    if not state_dir.is_absolute():
        state_dir = (path.parent / state_dir).resolve()
    return TableConfig(path, spec, options, limits, profile, profile_path, state_dir, panels, camera)


def exposure_problems(zmq_spec: ZmqSpec, security: SecuritySpec) -> list[tuple[str | None, str]]:
    """Event sockets bound beyond loopback without CURVE, unless the file says so explicitly."""
    if security.curve_events or security.plain_events_beyond_loopback:
        return []
    return [
        (f"zeromq.{name}", f"{endpoint} is reachable beyond this machine without CURVE: set "
         "security.curve_events: true (clients need keys), or security.plain_events_beyond_loopback: "
         "true to publish in the clear on purpose")
        for name, endpoint in (("pub", zmq_spec.pub), ("snapshot", zmq_spec.snapshot))
        if not is_loopback(endpoint)
    ]


def _panels(
    spec: TableFile, path: Path, seats: int, problems: list[tuple[str | None, str]]
) -> tuple[tuple[str, PinMap], ...]:
    """Load, adapt and cross-check the pin maps; every problem names ``panels.N`` or ``gpio.*``."""
    gpio = spec.gpio
    if gpio is not None and gpio.control is not None:
        if gpio.backend != "mock":
            problems.append(("gpio.control", f"a control socket drives mock pins only, not {gpio.backend}"))
        else:
            try:
                parse_endpoint(gpio.control)
            except ControlError as exc:
                problems.append(("gpio.control", str(exc)))
    if spec.panels and gpio is None:
        why = f"panels need a gpio section: gpio: {{backend: {'|'.join(FACTORIES)}}}"
        problems.append(("gpio", why))
    out: list[tuple[str, PinMap]] = []
    for i, entry in enumerate(spec.panels):
        key = f"panels.{i}"
        item = PanelEntry(map=entry) if isinstance(entry, str) else entry
        if not isinstance(entry, str):
            key += ".map"
        found = _find_profile(path, item.map, "panels")
        if found is None:
            problems.append((key, f"no file {item.map!r} next to the table file or in {FIRMWARE_CONFIGS}"))
            continue
        try:
            pin_map = load_pin_map(found, spec.game)
        except PinMapError as exc:
            problems.append((key, str(exc).replace("\n", "; ")))
            continue
        if item.seats is not None:
            missing = sorted(set(item.seats) - set(pin_map.seats))
            if missing:
                problems.append((f"panels.{i}.seats", f"{found.name} has no seat {missing[0]}"))
                continue
            renumbered = {to: pin_map.seats[frm] for frm, to in item.seats.items()}
            pin_map = pin_map.model_copy(update={"seats": renumbered})
        pin_map = pin_map.model_copy(update={"dealer": pin_map.dealer if item.dealer else None,
                                             "tower": pin_map.tower if item.tower else None})
        for seat in pin_map.seats:
            if not 1 <= seat <= seats:
                problems.append((key, f"{found.name}: seat {seat} is not a seat of this table (1..{seats})"))
        out.append((f"panels.{i} ({found.name})", pin_map))
    if len(out) > 1:
        try:
            check_disjoint(dict(out))
        except PinMapError as exc:
            problems.append(("panels", "; ".join(f"{k}: {why}" for k, why in exc.problems)))
        if gpio is not None and gpio.backend != "mock":
            # A Pi has one header: every map on a real backend shares its pins.
            first: dict[int, str] = {}
            for name, pin_map in out:
                for pkey, pin in pin_map.pins():
                    if pin in first and not first[pin].startswith(name):
                        why = (f"{name}: {pkey}: BCM {pin} is also {first[pin]} "
                               f"(one header on {gpio.backend}; mock gives each map its own)")
                        problems.append(("panels", why))
                    first.setdefault(pin, f"{name}: {pkey}")
    return tuple(out)

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

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from controller.configfile import ConfigFileError, read_yaml, validation_problems
from controller.daemon.auth import is_loopback
from controller.daemon.camera_config import CameraSettings, resolve_camera
from controller.daemon.table_file import (
    CurrencySpec,
    GpioSpec,
    LimitsSpec,
    PanelEntry,
    SecuritySpec,
    ShoeSpec,
    SimPlayer,
    SimulationSpec,
    TableFile,
    ZmqSpec,
)
from controller.game_base import Game, GameOptions
from controller.games import GAMES
from controller.limits import TableLimits
from controller.panels.pinmaps import load_pin_map
from drivers.gpio.backend import FACTORIES
from drivers.gpio.control import ControlError, parse_endpoint
from drivers.gpio.expanders import line_problems
from drivers.gpio.pinmap import PinMap, PinMapError
from drivers.gpio.table_maps import check_disjoint, with_chips
from drivers.shoe import ProfileError, ShoeProfile, load_profile

#: The table file's sections are defined in controller.daemon.table_file; importers use them from here.
__all__ = [
    "FIRMWARE_CONFIGS", "CurrencySpec", "GpioSpec", "LimitsSpec", "PanelEntry", "SecuritySpec", "ShoeSpec",
    "SimPlayer", "SimulationSpec", "TableConfig", "TableFile", "TableFileError", "ZmqSpec",
    "exposure_problems", "load_table", "parse_table",
]

#: Where ``firmware_configs/`` lives in a checkout (profiles are also looked up there).
FIRMWARE_CONFIGS = Path(__file__).resolve().parents[2] / "firmware_configs"


class TableFileError(ConfigFileError):
    """A table file that cannot be used: ``<file>: key '<key>': <reason>`` per problem."""


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
            except ValueError as exc:  # urllib's own (a port past 65535, an unclosed '[')
                problems.append(("gpio.control", f"not an endpoint like tcp://127.0.0.1:PORT ({exc})"))
    if spec.panels and gpio is None:
        why = f"panels need a gpio section: gpio: {{backend: {'|'.join(FACTORIES)}}}"
        problems.append(("gpio", why))
    out: list[tuple[str, PinMap]] = []
    for i, entry in enumerate(spec.panels):
        key = f"panels.{i}"
        if isinstance(entry, str):
            # Validated here, outside TableFile's validation: its own errors are words for this key.
            try:
                item = PanelEntry(map=entry)
            except ValidationError as exc:
                problems.extend((key, why) for _, why in validation_problems(exc))
                continue
        else:
            item, key = entry, key + ".map"
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
            doubled = sorted(to for to in set(item.seats.values()) if list(item.seats.values()).count(to) > 1)
            if doubled:  # a dict keeps one: the other map seat's lines were silently never opened
                problems.append((f"panels.{i}.seats",
                                 f"two of {found.name}'s seats made table seat {doubled[0]}"))
                continue
            renumbered = {to: pin_map.seats[frm] for frm, to in item.seats.items()}
            pin_map = pin_map.model_copy(update={"seats": renumbered})
        pin_map = pin_map.model_copy(update={"dealer": pin_map.dealer if item.dealer else None,
                                             "tower": pin_map.tower if item.tower else None})
        if item.chips:
            pin_map = with_chips(pin_map, item.chips)
        for seat in pin_map.seats:
            if not 1 <= seat <= seats:
                problems.append((key, f"{found.name}: seat {seat} is not a seat of this table (1..{seats})"))
        out.append((f"panels.{i} ({found.name})", pin_map))
    if len(out) > 1:
        try:
            check_disjoint(dict(out))
        except PinMapError as exc:
            problems.append(("panels", "; ".join(f"{k}: {why}" for k, why in exc.problems)))
    if gpio is not None:
        problems += line_problems(gpio.backend, gpio.expanders, out)
    return tuple(out)

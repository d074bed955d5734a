"""Pin maps (``firmware_configs/panels/*.yaml``): which GPIO carries which button, sensor and lamp.

A pin map describes what is wired to one chip: the Pi's 40-pin header (BCM
2..27, the default) or an MCP23017/MCP23S17 expander (lines 0..15) that the
table file lists, named by its I2C address (``chip: 0x21``) or its label. A pin
may name another chip than its map's (one seat panel across two expanders).
A line's address is the pair (chip, pin): :meth:`PinMap.lines`. A table uses
several maps (one per seat on its expander, say, see docs/wiring.md);
:func:`drivers.gpio.table_maps.check_disjoint` refuses two maps that claim the same seat or panel.

Everything is checked before a single pin is opened, because a miswired or
mistyped map found at start costs a minute and one found mid-round costs a
disputed hand: an unknown key, an action the game does not have, a spot the
game does not have, a pin outside the header or used twice, and a duplicate
YAML key (PyYAML would otherwise keep the last one silently). Every problem is
reported as ``<file>: key '<dotted.key>': <reason>``. The games' words and spots
come in as plain data (:class:`GameWords`, from :mod:`controller.panels.pinmaps`):
a driver knows pins, not games.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from controller.configfile import ConfigFileError, read_yaml, validation_problems

#: BCM numbers on the 40-pin header that are general-purpose I/O (26 of them).
BCM_RANGE = range(2, 28)
#: The least settle time a pin map file may give an input. A mechanical contact bounces for one to five
#: milliseconds; settled for less, one chattering press of ``hit`` can count as two. Only maps built in code
#: for contacts that never bounce (the scenario tool's simulated pins) may go under it.
LEAST_DEBOUNCE_MS = 5
#: The chip of a pin that names none: the Pi's 40-pin header.
HEADER = "header"
#: The lines of an MCP23017/MCP23S17 expander (GPA0..7 are 0..7, GPB0..7 are 8..15).
EXPANDER_LINES = range(16)
#: Seat buttons that choose what to bet; they post nothing to the table themselves.
#: ``clear_bet`` sets the selection back to the table minimum; chip-denomination keys
#: are ``add_N`` (see :func:`chip_key_units`).
BET_WORDS = ("bet_up", "bet_down", "repeat_bet", "clear_bet")
#: A chip-denomination key: ``add_25`` adds 25 table units to the selected amount.
CHIP_KEY = re.compile(r"add_([1-9][0-9]{0,3})")
#: 2WayWinner's "bet twice the ante" button (sends ``bet`` with the amount).
BET_2X = "bet_2x"
#: Dealer panel words (the input each one posts: controller.panels.view.DEALER_INPUTS).
DEALER_WORDS = ("open_betting", "close_betting", "confirm", "burn", "void", "new_shoe")
#: The tower light's lamps, one per table state.
TOWER_LAMPS = ("idle", "betting", "in_play", "fault")


@dataclass(frozen=True, slots=True)
class GameWords:
    """What one game's seat panels may carry: its decision words and its betting spots."""

    actions: tuple[str, ...]
    spots: tuple[str, ...]

    def seat_words(self) -> set[str]:
        """Every word a seat button may carry for this game (a chip key ``add_N`` aside)."""
        return set(self.actions) | set(BET_WORDS) | ({BET_2X} if "bet" in self.actions else set())


class PinMapError(ConfigFileError):
    """A pin map that cannot be used; one ``<file>: key '<key>': <reason>`` line per problem."""


def chip_key_units(word: str) -> int | None:
    """The table units a chip-denomination key adds (``add_25`` -> 25), or None for another word."""
    match = CHIP_KEY.fullmatch(word)
    return None if match is None else int(match.group(1))


def is_bet_word(word: str) -> bool:
    """A seat button that selects an amount (bet_up/down, repeat, clear, a chip key): it posts nothing."""
    return word in BET_WORDS or chip_key_units(word) is not None


def chip_name(value: Any) -> Any:
    """``chip: 0x21`` (YAML reads a number) and ``chip: "0x21"`` are the same chip: ``"0x21"``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"0x{value:02x}"
    return value.lower() if isinstance(value, str) and value.lower().startswith("0x") else value


ChipRef = Annotated[str, BeforeValidator(chip_name), Field(min_length=1)]


def _pin_shorthand(value: Any) -> Any:
    """``lamp: 6`` means ``lamp: {pin: 6}`` (the common case stays one token)."""
    return {"pin": value} if isinstance(value, int) and not isinstance(value, bool) else value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LampPin(_Strict):
    """An output: lit means driven to the ``active`` level."""

    pin: int = Field(strict=True)
    active: Literal["high", "low"] = "high"
    #: The chip this lamp is on, when not its map's.
    chip: ChipRef | None = None


class InputPin(_Strict):
    """An input: a button contact, a bet sensor or a panel presence loop.

    With an internal pull the idle level is the pull and the active level is
    the other one (gpiozero enforces the same), so ``pull: up`` goes with
    ``active: low``; ``pull: none`` means an external resistor and either level.
    """

    pin: int = Field(strict=True)
    active: Literal["low", "high"] = "low"
    pull: Literal["up", "down", "none"] = "up"
    #: The chip this input is on, when not its map's.
    chip: ChipRef | None = None
    #: Settle time for this pin; the map's ``debounce_ms`` when omitted.
    debounce_ms: int | None = Field(default=None, ge=0, le=1000)

    @model_validator(mode="after")
    def _pull_matches_level(self) -> InputPin:
        if self.pull == "up" and self.active != "low":
            raise ValueError("pull: up reads high when idle, so the active level must be low")
        if self.pull == "down" and self.active != "high":
            raise ValueError("pull: down reads low when idle, so the active level must be high")
        return self


LampRef = Annotated[LampPin, BeforeValidator(_pin_shorthand)]
InputRef = Annotated[InputPin, BeforeValidator(_pin_shorthand)]


class ButtonSpec(InputPin):
    """A button and the lamp in (or next to) it."""

    lamp: LampRef | None = None


class SpotSpec(_Strict):
    """A betting spot: the chip sensor under it and the lamp that shows an accepted wager."""

    sensor: InputRef
    lamp: LampRef | None = None


class SeatPanel(_Strict):
    buttons: dict[str, ButtonSpec] = Field(default_factory=dict)
    spots: dict[str, SpotSpec] = Field(default_factory=dict)
    #: A loop through the panel's connector: inactive means the panel is unplugged.
    presence: InputRef | None = None


class DealerPanel(_Strict):
    buttons: dict[str, ButtonSpec] = Field(default_factory=dict)
    presence: InputRef | None = None


class TowerLight(_Strict):
    idle: LampRef
    betting: LampRef
    in_play: LampRef
    fault: LampRef


class BetHold(_Strict):
    """Press-and-hold on ``bet_up``/``bet_down``: repeat while held, in growing steps.

    Held for ``delay_ms`` the button steps once more, then once every
    ``interval_ms``; every ``accelerate_every`` repeats the step moves on to the
    next of ``steps`` (table units), so holding ``bet_up`` walks 1, 1, ... 5, 5,
    ... 25 ... units at a time, the way a hotel safe's or a slot's keypad does.
    """

    delay_ms: int = Field(default=500, ge=50, le=5000)
    interval_ms: int = Field(default=100, ge=20, le=2000)
    accelerate_every: int = Field(default=10, ge=1, le=1000)
    steps: tuple[int, ...] = Field(default=(1, 5, 25, 100), min_length=1, max_length=8)

    @model_validator(mode="after")
    def _steps_grow(self) -> BetHold:
        if any(s < 1 for s in self.steps) or list(self.steps) != sorted(set(self.steps)):
            raise ValueError("steps must be positive unit counts in increasing order")
        return self


class PinMap(_Strict):
    """One header's worth of panels. Timing defaults apply to every input unless a pin overrides them."""

    #: The game whose words and spots the seat panels use; may be omitted for a dealer-only map.
    game: str | None = None
    #: The chip the pins are on unless a pin names its own: ``header`` or an expander of the table file.
    chip: ChipRef = HEADER
    debounce_ms: int = Field(default=20, ge=0, le=1000)
    #: A button reading active for longer than this is stuck (or its panel shorted): the panel goes offline.
    stuck_after_s: float = Field(default=20.0, gt=0, le=3600)
    #: Every input line is read again this often: a line that cannot be read, or that reads what no edge
    #: said, is a fault of the map's panels (:mod:`drivers.gpio.line_check`).
    input_check_s: float = Field(default=1.0, ge=0.1, le=60)
    #: "Your turn" blink rate of decision lamps, and the faster all-lamps fault blink.
    blink_hz: float = Field(default=1.0, gt=0, le=20)
    fault_blink_hz: float = Field(default=4.0, gt=0, le=20)
    #: Press-and-hold repeat with acceleration on bet_up/bet_down; ``null``: one step per press.
    bet_hold: BetHold | None = BetHold()
    #: Table units one bet_up/bet_down press moves. A game whose wager must be an even number of
    #: units (Swap-Hand's main) says 2, and its chip keys and held steps are then multiples of 2:
    #: a panel that can only select wagers the table takes.
    bet_step: int = Field(default=1, ge=1, le=100)
    seats: dict[int, SeatPanel] = Field(default_factory=dict)
    dealer: DealerPanel | None = None
    tower: TowerLight | None = None
    #: Spare lines tied to their idle level, never to read active: a chip answering garbage without
    #: raising (a dead SPI expander reads every line alike) shows in them (drivers.gpio.line_check).
    canaries: list[InputRef] = Field(default_factory=list)

    @model_validator(mode="after")
    def _steps_fit_bet_step(self) -> PinMap:
        step = self.bet_step
        if self.bet_hold is not None and any(s % step for s in self.bet_hold.steps):
            raise ValueError(f"bet_hold.steps must be multiples of bet_step ({step})")
        for seat, panel in self.seats.items():
            for word in panel.buttons:
                units = chip_key_units(word)
                if units is not None and units % step:
                    raise ValueError(f"seats.{seat}.buttons.{word}: a chip key must add a multiple of "
                                     f"bet_step ({step}) units")
        return self

    def pins(self) -> list[tuple[str, int]]:
        """Every (dotted key, pin number) this map uses, in file order (:meth:`lines` adds the chip)."""
        return [(key, spec.pin) for key, spec in self.specs()]

    def lines(self) -> list[tuple[str, str, int]]:
        """Every (dotted key, chip, pin) this map uses, in file order: a line's full address."""
        return [(key, self.chip_of(spec), spec.pin) for key, spec in self.specs()]

    def chip_of(self, spec: InputPin | LampPin) -> str:
        """The chip a pin is on: its own, else the map's."""
        return spec.chip if spec.chip is not None else self.chip

    def specs(self) -> list[tuple[str, InputPin | LampPin]]:
        """Every (dotted key, pin spec) of this map, in file order."""
        out: list[tuple[str, InputPin | LampPin]] = []
        for seat, panel in self.seats.items():
            for word, button in panel.buttons.items():
                out.append((f"seats.{seat}.buttons.{word}.pin", button))
                if button.lamp is not None:
                    out.append((f"seats.{seat}.buttons.{word}.lamp", button.lamp))
            for spot, spec in panel.spots.items():
                out.append((f"seats.{seat}.spots.{spot}.sensor", spec.sensor))
                if spec.lamp is not None:
                    out.append((f"seats.{seat}.spots.{spot}.lamp", spec.lamp))
            if panel.presence is not None:
                out.append((f"seats.{seat}.presence", panel.presence))
        if self.dealer is not None:
            for word, button in self.dealer.buttons.items():
                out.append((f"dealer.buttons.{word}.pin", button))
                if button.lamp is not None:
                    out.append((f"dealer.buttons.{word}.lamp", button.lamp))
            if self.dealer.presence is not None:
                out.append(("dealer.presence", self.dealer.presence))
        if self.tower is not None:
            for name in TOWER_LAMPS:
                out.append((f"tower.{name}", getattr(self.tower, name)))
        out.extend((f"canaries.{k}", canary) for k, canary in enumerate(self.canaries))
        return out


def line_name(chip: str, pin: int) -> str:
    """How a technician finds a line: ``GPIO 17`` on the header, ``0x21 line 5`` on an expander."""
    return f"GPIO {pin}" if chip == HEADER else f"{chip} line {pin}"


def line_problem(chip: str, pin: int) -> str | None:
    """Why ``pin`` is not a line of ``chip`` (the header's BCM 2..27, an expander's 0..15), or None."""
    if chip == HEADER:
        return None if pin in BCM_RANGE else f"pin {pin} is not a GPIO on the 40-pin header (BCM 2..27)"
    return None if pin in EXPANDER_LINES else f"pin {pin} is not a line of expander {chip} (0..15)"


def check_pin_map(pin_map: PinMap, games: Mapping[str, GameWords]) -> list[tuple[str | None, str]]:
    """The problems pydantic cannot see alone: words, spots (of ``games``), pin range and reuse."""
    problems: list[tuple[str | None, str]] = []
    game = None
    if pin_map.game is not None:
        game = games.get(pin_map.game)
        if game is None:
            problems.append(("game", f"unknown game {pin_map.game!r}; known: {', '.join(sorted(games))}"))
    elif pin_map.seats:
        problems.append(("game", "a map with seat panels must name its game"))
    for seat, panel in pin_map.seats.items():
        if not 1 <= seat <= 12:
            problems.append((f"seats.{seat}", "seat numbers run 1..12"))
        if game is None:
            continue
        words = game.seat_words()
        for word in panel.buttons:
            if word not in words and chip_key_units(word) is None:
                known = ", ".join(sorted(words)) + ", add_N (a chip key of N units)"
                problems.append((f"seats.{seat}.buttons.{word}",
                                 f"unknown action {word!r} for {pin_map.game}; known: {known}"))
        for spot in panel.spots:
            if spot not in game.spots:
                spots = ", ".join(game.spots)
                why = f"{pin_map.game} has no spot {spot!r}; spots: {spots}"
                problems.append((f"seats.{seat}.spots.{spot}", why))
    if pin_map.dealer is not None:
        for word in pin_map.dealer.buttons:
            if word not in DEALER_WORDS:
                problems.append((f"dealer.buttons.{word}",
                                 f"unknown dealer action {word!r}; known: {', '.join(DEALER_WORDS)}"))
    first: dict[tuple[str, int], str] = {}
    for key, chip, pin in pin_map.lines():
        on = "" if chip == HEADER else f" of {chip}"
        if (wrong := line_problem(chip, pin)) is not None:
            problems.append((key, wrong))
        elif (chip, pin) in first:
            problems.append((key, f"pin {pin}{on} is already used by {first[chip, pin]}"))
        else:
            first[chip, pin] = key
    if pin_map.canaries and not pin_map.seats and pin_map.dealer is None:
        problems.append(("canaries", "canaries guard the inputs of this map's seat and dealer panels, and it "
                                     "has none: a fault they caught would stop nothing (move them to the "
                                     "map with the chip's inputs)"))
    for k, canary in enumerate(pin_map.canaries):
        if canary.pull == "none" and canary.active == "low":
            problems.append((f"canaries.{k}", "a canary tied high is pull: up, active: low (its pull holds "
                                              "it too); pull: none is for one tied to ground, active: high"))
    for key, spec in pin_map.specs():
        if isinstance(spec, InputPin) and spec.pull == "down" and pin_map.chip_of(spec) != HEADER:
            problems.append((key, "an MCP23017's lines have pull-ups only: pull: up, or pull: none with "
                                  "an external resistor"))
    return problems


def parse_pin_map(data: Any, path: Path | str, game: str | None, *, games: Mapping[str, GameWords],
                  least_debounce_ms: int = 0) -> PinMap:
    """Validate loaded YAML data against ``games``; ``game`` (the table's) must match the map's if given.

    ``least_debounce_ms``: the shortest settle time an input may have (a file's is
    :data:`LEAST_DEBOUNCE_MS`; a map built in code for pins that never bounce may say 0).
    """
    if not isinstance(data, Mapping):
        raise PinMapError(path, [(None, "a pin map must be a mapping at the top level")])
    try:
        pin_map = PinMap.model_validate(data)
    except ValidationError as exc:
        raise PinMapError(path, validation_problems(exc)) from None
    problems = check_pin_map(pin_map, games) + debounce_problems(pin_map, least_debounce_ms)
    if game is not None and pin_map.game is not None and pin_map.game != game:
        problems.append(("game", f"the map is for {pin_map.game}, the table plays {game}"))
    if problems:
        raise PinMapError(path, problems)
    return pin_map


def load_pin_map(path: Path | str, game: str | None, *, games: Mapping[str, GameWords]) -> PinMap:
    """Read and validate a pin map file; :class:`PinMapError` names the file, the key and the reason."""
    path = Path(path)
    return parse_pin_map(read_yaml(path, PinMapError), path, game, games=games,
                         least_debounce_ms=LEAST_DEBOUNCE_MS)


def debounce_problems(pin_map: PinMap, least_ms: int) -> list[tuple[str | None, str]]:
    """Every input whose settle time (its own, else the map's) is under ``least_ms``, by its key."""
    why = (f"under {least_ms} ms a contact's bounce can count as several presses (a mechanical contact "
           f"bounces for 1 to 5 ms)")
    problems: list[tuple[str | None, str]] = []
    if pin_map.debounce_ms < least_ms:
        problems.append(("debounce_ms", why))
    for key, spec in pin_map.specs():
        if isinstance(spec, InputPin) and spec.debounce_ms is not None and spec.debounce_ms < least_ms:
            problems.append((f"{key.removesuffix('.pin')}.debounce_ms", why))
    return problems


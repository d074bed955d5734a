"""MCP23017/MCP23S17 expanders: the table file's list of them, its checks, and each one's pin factory.

A 40-pin header has 26 GPIOs, one Baccarat seat's worth; a full table puts
each seat panel on its own 16-line expander. The kernel does the chip's
work: ``dtoverlay=mcp23017,addr=0x21,gpiopin=17`` makes the expander a
gpiochip whose lines give edge events from the chip's INT pin (the driver
reads INTCAP over I2C when INT falls), so an expander line is opened exactly
like a header line, by chip and line number, with no polling in Python.

We open those lines with lgpio, through gpiozero's ``LGPIOFactory(chip=N)``
(docs/wiring.md says why lgpio rather than the ``gpiod`` 2.x bindings): on a
Pi 3, 4 or 5 alike, the same library the Pi 5's header already needs. In
simulation each expander is one more mock factory beside the header's, so the
very same table file and pin maps run on a laptop and on the Pi.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from drivers.gpio.backend import BackendError, GpioZeroBackend, make_factory
from drivers.gpio.pinmap import BCM_RANGE, HEADER, ChipRef, InputPin, PinMap, chip_name, line_problem

#: Addresses an MCP23017 can take (0x20 + its A2 A1 A0 pins); an MCP23S17 uses the same eight.
ADDRESSES = range(0x20, 0x28)
#: Header pins a bus takes: I2C1's SDA/SCL, SPI0's CE1, CE0, MISO, MOSI, SCLK.
#: (I2C0 is on BCM 0/1, the HAT EEPROM pins, outside BCM 2..27: it takes none of the panels' pins.)
BUS_PINS: dict[tuple[str, int], tuple[int, ...]] = {("i2c", 1): (2, 3), ("spi", 0): (7, 8, 9, 10, 11)}


class Expander(BaseModel):
    """One expander as the table file lists it (``gpio.expanders``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["mcp23017", "mcp23s17"] = "mcp23017"
    #: The I2C bus number (``/dev/i2c-1``: 1), or the SPI bus for an MCP23S17.
    bus: int = Field(default=1, ge=0, le=22)
    #: 0x20..0x27, as wired on A2 A1 A0 (and as ``dtoverlay=...,addr=`` says).
    address: Annotated[int, Field(ge=ADDRESSES.start, le=ADDRESSES.stop - 1)]
    #: The header pin (BCM) wired to the chip's INT (INTA and INTB mirrored): its inputs give edges,
    #: not polling. ``null``: a chip of lamps only (a map's input on it is refused).
    int: Annotated[int, Field(strict=True, ge=BCM_RANGE.start, le=BCM_RANGE.stop - 1)] | None
    #: A name pin maps may use for this chip instead of its address (``chip: seat3``).
    label: ChipRef | None = None

    @property
    def name(self) -> str:
        """How pin maps name this chip: its label, else its address (``0x21``)."""
        return self.label if self.label is not None else str(chip_name(self.address))

    @property
    def transport(self) -> str:
        return "i2c" if self.kind == "mcp23017" else "spi"


def check_expanders(expanders: Sequence[Expander]) -> list[tuple[str | None, str]]:
    """An address used twice on one bus, more than 8 on a bus, a name used twice: refused by key."""
    problems: list[tuple[str | None, str]] = []
    seen: dict[tuple[str, int, int], int] = {}
    names: dict[str, int] = {}
    per_bus: dict[tuple[str, int], int] = {}
    ints: dict[int, int] = {}
    for i, exp in enumerate(expanders):
        if exp.int is not None and ints.setdefault(exp.int, i) != i:
            why = f"BCM {exp.int} is also gpio.expanders.{ints[exp.int]}'s INT: each expander has its own"
            problems.append((f"gpio.expanders.{i}.int", why))
        key = f"gpio.expanders.{i}"
        where = (exp.transport, exp.bus, exp.address)
        if where in seen:
            problems.append((f"{key}.address", f"{exp.address:#04x} on {exp.transport} bus {exp.bus} is also "
                                               f"gpio.expanders.{seen[where]}"))
        seen.setdefault(where, i)
        if exp.name == HEADER or exp.name in names:
            other = "the Pi's header" if exp.name == HEADER else f"gpio.expanders.{names[exp.name]}"
            problems.append((f"{key}.label", f"chip name {exp.name!r} is also {other}"))
        names.setdefault(exp.name, i)
        bus = (exp.transport, exp.bus)
        per_bus[bus] = per_bus.get(bus, 0) + 1
        if per_bus[bus] == len(ADDRESSES) + 1:
            problems.append((key, f"more than {len(ADDRESSES)} expanders on {exp.transport} bus {exp.bus} "
                                  "(an MCP23017 has 8 addresses, 0x20..0x27): put the rest on another bus"))
    return problems


def header_lines(expanders: Sequence[Expander]) -> list[tuple[str, int]]:
    """The header pins the expanders take: each one's INT pin and its bus's pins (key, BCM)."""
    out: list[tuple[str, int]] = []
    buses: set[tuple[str, int]] = set()
    for i, exp in enumerate(expanders):
        if exp.int is not None:
            out.append((f"gpio.expanders.{i}.int", exp.int))
        bus = (exp.transport, exp.bus)
        if bus not in buses:
            buses.add(bus)
            where = f"gpio.expanders.{i}.bus ({exp.transport}{exp.bus})"
            out += [(where, pin) for pin in BUS_PINS.get(bus, ())]
    return out


def open_chips(backend: str, expanders: Sequence[Expander],
               sysfs: Path = Path("/sys/bus")) -> dict[str, Any]:
    """Each expander's pin factory by chip name: mock factories, or lgpio on the expander's gpiochip."""
    if backend == "mock":
        return {exp.name: make_factory("mock") for exp in expanders}
    chips: dict[str, Any] = {}
    for exp in expanders:
        same_bus = [e.address for e in expanders if e.kind == exp.kind and e.bus == exp.bus]
        chip = gpiochip_of(exp, sysfs, same_bus)
        try:
            from gpiozero.pins.lgpio import LGPIOFactory  # type: ignore[import-untyped, unused-ignore]

            chips[exp.name] = LGPIOFactory(chip=chip)
        except Exception as exc:
            raise BackendError(f"expander {exp.name} (gpiochip{chip}) cannot be opened with lgpio: {exc}; "
                               "pip install 'croupier[pi]'") from exc
    return chips


def gpiochip_of(exp: Expander, sysfs: Path = Path("/sys/bus"), listed: Sequence[int] = ()) -> int:
    """The gpiochip number the kernel gave the expander (its overlay must be in config.txt).

    An MCP23017 is its own I2C device. The MCP23S17s on one SPI bus share one device (chip select 0),
    which holds one gpiochip per chip its overlay's present mask names, in address order; ``listed``
    are the addresses the table file lists on that bus, and the mask must name exactly those: a
    different count is refused, since taking the wrong gpiochip would put one seat's buttons on
    another seat's panel.
    """
    if exp.kind == "mcp23017":
        device = sysfs / "i2c" / "devices" / f"{exp.bus}-{exp.address:04x}"
    else:
        device = sysfs / "spi" / "devices" / f"spi{exp.bus}.0"
    found = sorted(int(p.name.removeprefix("gpiochip")) for p in device.glob("gpiochip[0-9]*"))
    addresses = sorted(set(listed) | {exp.address})
    index = 0 if exp.kind == "mcp23017" else addresses.index(exp.address)
    if exp.kind == "mcp23s17" and found and len(found) != len(addresses):
        mask = sum(1 << (a - ADDRESSES.start) for a in addresses)
        raise BackendError(
            f"expander {exp.name}: {device} holds {len(found)} MCP23S17 gpiochips but the table file lists "
            f"{len(addresses)} on spi{exp.bus} ({', '.join(f'{a:#04x}' for a in addresses)}): the overlay's "
            f"present mask must name exactly these (dtoverlay=mcp23s17,s17-spi{exp.bus}-0-present={mask})")
    if len(found) <= index:
        overlay = (f"dtoverlay=mcp23017,addr={exp.address:#04x},gpiopin={exp.int}" if exp.kind == "mcp23017"
                   else f"dtoverlay=mcp23s17,s17-spi{exp.bus}-0-present=...")
        raise BackendError(f"expander {exp.name}: no gpiochip at {device} (is {overlay} in "
                           "/boot/firmware/config.txt, and the chip powered and wired?)")
    return found[index]


def shares_one_world(backend: str, expanders: Sequence[Expander]) -> bool:
    """Whether the table's maps share one header and one set of chips.

    Real pins are one Pi, and so are simulated ones once the table lists
    expanders (the simulated twin of a real table). A mock table without
    expanders gives each map its own simulated header (the one-seat demos).
    """
    return backend != "mock" or bool(expanders)


def map_backends(backend: str, expanders: Sequence[Expander], count: int) -> list[GpioZeroBackend]:
    """One pin backend for each of a table's ``count`` pin maps, every one with the table's chips.

    Where the table is one world (:func:`shares_one_world`) the maps share one
    header factory; otherwise (mock pins, no expanders) each map is a header of
    its own, so two one-seat maps may both use BCM 4. The daemon and
    ``croupier gpio check`` open a table's lines the same way through this.
    BackendError names the expander or the header's factory that cannot be opened;
    the expanders are tried first, as their refusal names the missing device
    (its I2C address, its overlay), where a header's names a library.
    """
    chips = open_chips(backend, expanders)
    shared = make_factory(backend) if shares_one_world(backend, expanders) else None
    return [GpioZeroBackend(shared if shared is not None else make_factory("mock"), backend, chips)
            for _ in range(count)]


def line_problems(backend: str, expanders: Sequence[Expander],
                  maps: Sequence[tuple[str, PinMap]]) -> list[tuple[str | None, str]]:
    """The expanders' own problems, chips no expander answers to, and a line used twice on one chip."""
    problems = check_expanders(expanders)
    names = [HEADER, *(exp.name for exp in expanders)]
    no_int = {exp.name for exp in expanders if exp.int is None}
    for name, pin_map in maps:
        for key, spec in pin_map.specs():
            chip = pin_map.chip_of(spec)
            if chip not in names:
                problems.append(("panels", f"{name}: {key}: no chip {chip!r} (gpio.expanders has: "
                                           f"{', '.join(names)})"))
            elif (why := line_problem(chip, spec.pin)) is not None:
                problems.append(("panels", f"{name}: {key}: {why}"))
            elif chip in no_int and isinstance(spec, InputPin):
                problems.append(("panels", f"{name}: {key}: an input on {chip}, which has no INT pin "
                                           "(gpio.expanders: int: BCM) to report its edges"))
    if not shares_one_world(backend, expanders):
        return problems
    first: dict[tuple[str, int], str] = {}
    for key, pin in header_lines(expanders):
        first.setdefault((HEADER, pin), key)
    for name, pin_map in maps:
        for key, chip, pin in pin_map.lines():
            other = first.setdefault((chip, pin), f"{name}: {key}")
            if other != f"{name}: {key}" and not other.startswith(name):
                line = f"BCM {pin}" if chip == HEADER else f"pin {pin} of {chip}"
                world = ("one Pi" if backend != "mock" else "one simulated Pi: the table lists expanders")
                problems.append(("panels", f"{name}: {key}: {line} is also {other} ({world}; "
                                           "every line of every chip is used once)"))
    return problems


def canary_advice(expanders: Sequence[Expander], maps: Sequence[tuple[str, PinMap]]) -> list[str]:
    """Each map with inputs on an MCP23S17 that lacks a canary tied high and one tied low on that chip
    (docs/wiring.md, "Canary lines"): said at start. SPI has no acknowledge, so a dead one answers every
    read, all low or all high, and its lines alone may take that for the panels' state."""
    spi = {exp.name for exp in expanders if exp.kind == "mcp23s17"}
    out = []
    for name, pin_map in maps:
        chips = {pin_map.chip_of(spec) for key, spec in pin_map.specs()
                 if isinstance(spec, InputPin) and not key.startswith("canaries.")} & spi
        for chip in sorted(chips):
            kinds = {c.active for c in pin_map.canaries if pin_map.chip_of(c) == chip}
            if kinds != {"low", "high"}:
                out.append(f"{name}: inputs on MCP23S17 {chip} without a canary tied high and one tied low "
                           "on it: a dead chip answering garbage may pass for its panels' state "
                           "(docs/wiring.md, \"Canary lines\")")
    return out

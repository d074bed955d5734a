"""A table file's wiring tables and bill of materials, made from its pin maps so docs/wiring.md cannot drift.

    .venv/bin/python -m controller.tools.wiring_tables firmware_configs/tables/baccarat_7seat.yaml

prints, in Markdown, the header's pins, the expanders (bus, address, INT
pin), every expander's lines pin by pin (expanders whose lines do the same
job for their own seat share one table) and the parts to buy. docs/wiring.md
holds this output for every shipped full-size table, and a test checks that
it still is exactly what the table files say.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

from controller.daemon.config import TableConfig, load_table
from drivers.gpio.expanders import BUS_PINS, header_lines
from drivers.gpio.pinmap import HEADER

#: BCM number -> physical pin on the 40-pin header.
HEADER_PIN = {2: 3, 3: 5, 4: 7, 17: 11, 27: 13, 22: 15, 10: 19, 9: 21, 11: 23, 5: 29, 6: 31, 13: 33,
              19: 35, 26: 37, 14: 8, 15: 10, 18: 12, 23: 16, 24: 18, 25: 22, 8: 24, 7: 26, 12: 32,
              16: 36, 20: 38, 21: 40}


def job(key: str) -> tuple[str, str, str]:
    """A pin map key as (who, what, kind).

    ``seats.3.buttons.hit.lamp`` -> ("seat 3", "`hit` lamp", "lamp").
    """
    parts = key.split(".")
    if parts[0] == "tower":
        return "tower", f"`{parts[1]}` lamp", "tower lamp"
    if parts[0] == "canaries":
        return "pin map", f"canary {parts[1]}", "canary"
    who, rest = ("dealer", parts[1:]) if parts[0] == "dealer" else (f"seat {parts[1]}", parts[2:])
    if rest[0] == "presence":
        return who, "presence loop", "presence"
    if rest[0] == "buttons":
        kind = "lamp" if rest[2] == "lamp" else "button"
        return who, f"`{rest[1]}` {kind}", kind
    return who, f"`{rest[1]}` " + ("chip sensor" if rest[2] == "sensor" else "spot lamp"), rest[2]


def mcp_pin(line: int) -> str:
    """An MCP23017 line as its port name and package pin: 0..7 are GPA0..7 (21..28), 8..15 GPB0..7 (1..8)."""
    return f"GPA{line} | {21 + line}" if line < 8 else f"GPB{line - 8} | {line - 7}"


def wiring_markdown(config: TableConfig) -> str:
    """Every table of the wiring section for ``config`` (a table file with expanders)."""
    gpio = config.spec.gpio
    assert gpio is not None
    lines = [(chip, pin, key) for _, m in config.panels for key, chip, pin in m.lines()]
    out = [f"#### `{config.path.name}`: the header", "", "| BCM | Header pin | Function |", "|---|---|---|"]
    header = [(pin, " ".join(job(key)[:2])) for chip, pin, key in lines if chip == HEADER]
    names = [exp.name for exp in gpio.expanders]
    header += [(pin, _expander_use(key, pin, names)) for key, pin in header_lines(gpio.expanders)]
    header.sort(key=lambda p: HEADER_PIN[p[0]])
    out += [f"| {pin} | {HEADER_PIN[pin]} | {what} |" for pin, what in header]
    out += ["", f"#### `{config.path.name}`: the expanders", "",
            "| Chip | Kind | Bus | Address (A2 A1 A0) | INT to BCM (header pin) | Carries |",
            "|---|---|---|---|---|---|"]
    layouts: dict[tuple[tuple[int, str], ...], list[str]] = {}
    for exp in gpio.expanders:
        mine = sorted((pin, key) for chip, pin, key in lines if chip == exp.name)
        owners = sorted({job(key)[0] for _, key in mine})
        layout = tuple((pin, job(key)[1]) for pin, key in mine)
        layouts.setdefault(layout, []).append(exp.name)
        a = exp.address - 0x20
        intr = "none (lamps only)" if exp.int is None else f"{exp.int} ({HEADER_PIN[exp.int]})"
        bus = f"{'I2C' if exp.transport == 'i2c' else 'SPI'} {exp.bus}"
        straps = f"{a >> 2 & 1} {a >> 1 & 1} {a & 1}"
        out.append(f"| {exp.name} | {exp.kind.upper()} | {bus} | {exp.address:#04x} ({straps}) | {intr} | "
                   f"{', '.join(owners)} |")
    for layout, chips in layouts.items():
        out += ["", f"#### `{config.path.name}`: lines of {', '.join(chips)} (each for its own seat)", "",
                "| Port | MCP pin | Line | Function |", "|---|---|---|---|"]
        out += [f"| {mcp_pin(pin)} | {pin} | {what} |" for pin, what in layout]
    return "\n".join(out + ["", *bill_of_materials(config)]) + "\n"


#: What a bus's header pin carries.
BUS_SIGNAL = {2: "SDA", 3: "SCL", 7: "CE1", 8: "CE0", 9: "MISO", 10: "MOSI", 11: "SCLK"}


def _expander_use(key: str, pin: int, names: Sequence[str]) -> str:
    """``gpio.expanders.2.int`` -> "INT of expander 0x22"; ``gpio.expanders.0.bus (i2c1)`` -> "I2C 1 SDA"."""
    if key.endswith(".int"):
        return f"INT of expander {names[int(key.split('.')[2])]}"
    bus = key.split("(")[1].rstrip(")")
    return f"{bus[:3].upper()} {bus[3:]} {BUS_SIGNAL[pin]} (every expander on the bus)"


def bill_of_materials(config: TableConfig) -> list[str]:
    """The parts a technician buys for this table's panels, counted from the pin maps."""
    gpio = config.spec.gpio
    assert gpio is not None
    kinds: dict[str, int] = {}
    lamps_per_chip: dict[str, int] = {}
    for _, m in config.panels:
        for key, chip, _ in m.lines():
            kind = job(key)[2]
            kinds[kind] = kinds.get(kind, 0) + 1
            if "lamp" in kind:
                lamps_per_chip[chip] = lamps_per_chip.get(chip, 0) + 1
    drivers = sum(math.ceil(n / 8) for n in lamps_per_chip.values())
    buses = sorted({(e.transport, e.bus) for e in gpio.expanders})
    rows = [
        ("Raspberry Pi 3, 4 or 5 and its power supply", 1, "the table; its header carries the dealer panel"),
        ("MCP23017 (DIP-28) with a 100 nF decoupling capacitor", len(gpio.expanders),
         "one per chip above, powered at 3.3 V, RESET to 3.3 V, A2 A1 A0 strapped as listed"),
        ("push button (illuminated where it has a lamp)", kinds.get("button", 0), "every button line"),
        ("chip sensor (contact or optical, open collector to GND)", kinds.get("sensor", 0), "every spot"),
        ("lamp (LED with its resistor)", kinds.get("lamp", 0), "button and spot lamps"),
        ("tower light, 4 colours", 1 if kinds.get("tower lamp") else 0, "idle, betting, in play, fault"),
        ("ULN2803A lamp driver", drivers, "one per 8 lamps of a chip (an MCP23017 pin gives 25 mA at most)"),
        ("2 x 4.7 kOhm I2C pull-ups to 3.3 V",
         sum(1 for t, b in buses if t == "i2c" and (t, b) not in BUS_PINS),
         "each I2C bus but bus 1 (only BCM 2/3 have pull-ups on the Pi, 1.8 kOhm)"),
        ("USB card shoe", 1, "udev name /dev/croupier-shoe (docs/install.md)"),
    ]
    out = [f"#### `{config.path.name}`: bill of materials", "", "| Part | Count | For |", "|---|---|---|"]
    return out + [f"| {part} | {count} | {why} |" for part, count, why in rows if count]


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(wiring_markdown(load_table(path)))

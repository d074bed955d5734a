"""The pin maps of one table together: one seat layout moved onto several expanders, no part in two maps.

A table wires each seat panel to its own expander with one seat layout
(``{map: ..., chips: {0x20: 0x23}}`` in the table file), and may split its
panels over several maps; these two checks see the maps together, where
:mod:`drivers.gpio.pinmap` sees one map at a time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drivers.gpio.pinmap import PinMap, PinMapError


def with_chips(pin_map: PinMap, renames: Mapping[str, str]) -> PinMap:
    """The same map wired to other chips: every chip named in ``renames`` replaced by its new name.

    One seat layout serves every expander of a table: ``{map: ..., chips: {0x20: 0x23}}``.
    """
    def rename(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: (renames.get(v, v) if k == "chip" and isinstance(v, str) else rename(v))
                    for k, v in node.items()}
        if isinstance(node, list):  # the canaries
            return [rename(v) for v in node]
        return node

    return PinMap.model_validate(rename(pin_map.model_dump()))


def check_disjoint(maps: Mapping[str, PinMap]) -> None:
    """Several headers for one table: a seat, the dealer panel or the tower may be in one map only."""
    owner: dict[str, str] = {}
    problems: list[tuple[str | None, str]] = []
    for name, pin_map in maps.items():
        parts = [f"seats.{s}" for s in pin_map.seats]
        parts += ["dealer"] if pin_map.dealer is not None else []
        parts += ["tower"] if pin_map.tower is not None else []
        for part in parts:
            if part in owner:
                problems.append((part, f"also in {owner[part]}"))
            else:
                owner[part] = name
    if problems:
        raise PinMapError(", ".join(maps), problems)

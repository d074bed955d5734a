"""Shared set-up (no tests here): a shipped simulated table file on free ports and a temporary state dir."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from test_daemon_support import free_port_base

ROOT = Path(__file__).resolve().parents[1]
TABLES = ROOT / "firmware_configs" / "tables"


def shipped_table(tmp: Path, game: str, **overrides: Any) -> Path:
    """``firmware_configs/tables/<game>_sim.yaml`` as it ships (panels, limits, options), but on free
    ports, its panel maps by absolute path and its journal in ``tmp``; ``overrides`` replace keys."""
    data = yaml.safe_load((TABLES / f"{game}_sim.yaml").read_text(encoding="utf-8"))
    base = free_port_base(3)  # pub, snapshot, command
    data["zeromq"] = {"pub": f"tcp://127.0.0.1:{base}", "snapshot": f"tcp://127.0.0.1:{base + 1}",
                      "command": f"tcp://127.0.0.1:{base + 2}", "heartbeat": 0.2}
    if data.get("gpio"):
        data["gpio"] = {**data["gpio"], "control": f"tcp://127.0.0.1:{free_port_base(1)}"}
    data["state_dir"] = str(tmp / "state")
    data.pop("simulation", None)
    panels = []
    for entry in data.get("panels", []):
        rel = entry if isinstance(entry, str) else entry["map"]
        absolute = str((TABLES / rel).resolve())
        panels.append(absolute if isinstance(entry, str) else {**entry, "map": absolute})
    data["panels"] = panels
    if data.get("shoe"):
        data["shoe"] = {**data["shoe"], "profile": str((TABLES / data["shoe"]["profile"]).resolve()),
                        "port": str(tmp / "shoe")}
    data.update(overrides)
    path = tmp / f"{game}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path

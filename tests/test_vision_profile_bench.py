"""bench/vision_profile.py: the CPU of a set's slowest frames, stage by stage, as docs/vision-history.md
quotes it ("The slowest frames' CPU")."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from vision_support import profile

from controller.cards import parse_card
from vision.synth import DESIGNS, FLOOR, scene

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))  # the script imports vision_photos from beside it
    spec = importlib.util.spec_from_file_location("vision_profile", BENCH / "vision_profile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "vision_profile", module)
    spec.loader.exec_module(module)
    return module


def test_the_slowest_frames_are_named_and_their_time_split_by_the_vision_stage(bench: ModuleType) -> None:
    deck = profile("classic")
    names = ["QH.jpg", "none.jpg", "7C.jpg"]
    frames = [scene(parse_card("QH"), DESIGNS["classic"], 91, cond=FLOOR),
              scene(None, DESIGNS["classic"], 92, cond=FLOOR),
              scene(parse_card("7C"), DESIGNS["classic"], 93, cond=FLOOR)]
    walls: list[float] = []
    costs = bench.frame_costs(frames, deck, 2, walls)
    assert len(costs) == 3 and all(c > 0 for c in costs)
    assert len(walls) == 3 and all(w > 0 for w in walls)
    worst = sorted(range(3), key=lambda i: -costs[i])[:2]
    rows = bench.stages([frames[i] for i in worst], deck, 40)
    labels = [label for label, _, _, _ in rows]
    # Every stage is a function of the vision package, the whole read first (it includes the rest).
    assert labels[0].startswith("recognise.recognise:")
    assert any(label.startswith("detect.find_card:") for label in labels)
    assert all(total >= own >= 0 and calls >= 0 for _, own, total, calls in rows)
    assert [total for _, _, total, _ in rows] == sorted((total for _, _, total, _ in rows), reverse=True)
    lines = bench.report(names, costs, 2, worst, rows)
    figure = r"[\d.]+ ms"
    assert re.fullmatch(rf"3 frames, CPU per frame \(least of 2\): p50 {figure}, p99 {figure}, max {figure}",
                        lines[0])
    timed = bench.report(names, costs, 2, worst, rows, walls)[0]
    assert re.fullmatch(rf"{re.escape(lines[0])}; wall p50 {figure}, p99 {figure}", timed)
    assert f"wall p50 {sorted(walls)[1]:.2f} ms" in timed  # the median of three
    assert lines[1] == "slowest 2: " + ", ".join(f"{names[i]} {costs[i]:.1f}" for i in worst)
    assert lines[2].split()[-3:] == ["self", "total", "calls"]
    assert len(lines) == 3 + len(rows) and lines[3].startswith("recognise.recognise:")

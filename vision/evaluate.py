"""Measure a deck profile on labelled frames: what ``croupier vision test`` and the benchmark report.

The figures that matter at a table, in this order: wrong reads (a card read
as another card: a misdeal), false cards (a frame with no card read as a
card), then the share read correctly and the share left "unknown" (the
dealer shows the card again), then the time per frame. Latency is measured
around :func:`vision.recognise.recognise` only (decoding the file is the
camera's job), on one thread (:data:`vision.recognise.READ_THREADS`, as the daemon), as wall time and as
this process's CPU time, because on a shared machine the two differ.
"""

from __future__ import annotations

import heapq
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from controller.cards import Card
from vision.profile import DeckProfile
from vision.recognise import READ_THREADS, Image, recognise
from vision.window import ScanWindow

#: How many wrong and unknown frames the report names, and how many of the slowest frames it lists.
LISTED = 50
SLOWEST = 5
#: How many of the unknown frames the text summary names (the JSON report, :data:`LISTED`).
SHOWN = 10


@dataclass
class Tally:
    """Counts over a run of frames; :meth:`report` turns them into the JSON report."""

    cards: int = 0
    correct: int = 0
    wrong: int = 0
    unknown: int = 0
    negatives: int = 0
    false_cards: int = 0
    per_card: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    confusions: Counter[tuple[str, str]] = field(default_factory=Counter)
    false_as: Counter[str] = field(default_factory=Counter)
    unknown_reasons: Counter[str] = field(default_factory=Counter)
    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    wrong_frames: list[str] = field(default_factory=list)
    #: The first :data:`LISTED` unknown card frames, each named with its reason: which frames to look at.
    unknown_frames: list[str] = field(default_factory=list)
    #: The :data:`SLOWEST` frames by CPU time, as a heap of (ms, name): what the p99 is made of.
    slowest: list[tuple[float, str]] = field(default_factory=list)

    def add(self, frame: Image, truth: Card | None, profile: DeckProfile, name: str = "",
            window: ScanWindow | None = None) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        reading = recognise(frame, profile, window=window)
        self.wall_ms.append((time.perf_counter() - wall) * 1000)
        self.cpu_ms.append((time.process_time() - cpu) * 1000)
        keep = heapq.heappush if len(self.slowest) < SLOWEST else heapq.heappushpop
        keep(self.slowest, (self.cpu_ms[-1], name))
        got = reading.card if reading.status == "card" else None
        if truth is None:
            self.negatives += 1
            if got is not None:
                self.false_cards += 1
                self.false_as[got.code] += 1
                self.wrong_frames.append(f"{name}: none read as {got}")
            return
        self.cards += 1
        row = self.per_card[truth.code]
        if got is truth:
            self.correct += 1
            row["correct"] += 1
        elif got is not None:
            self.wrong += 1
            row["wrong"] += 1
            self.confusions[(truth.code, got.code)] += 1
            self.wrong_frames.append(f"{name}: {truth} read as {got}")
        else:
            self.unknown += 1
            row["unknown"] += 1
            self.unknown_reasons[reading.reason.split(" (")[0]] += 1
            if len(self.unknown_frames) < LISTED:
                self.unknown_frames.append(f"{name}: {truth}: {reading.reason}")

    def report(self) -> dict[str, Any]:
        def pct(values: list[float], q: float) -> float | None:
            return round(float(np.percentile(values, q)), 3) if values else None

        return {
            "frames": self.cards + self.negatives,
            "card_frames": self.cards,
            "negative_frames": self.negatives,
            "correct": self.correct,
            "wrong": self.wrong,
            "unknown": self.unknown,
            "false_cards": self.false_cards,
            "accuracy": round(self.correct / self.cards, 5) if self.cards else None,
            "unknown_rate": round(self.unknown / self.cards, 5) if self.cards else None,
            "wrong_per_1000": round(1000 * self.wrong / self.cards, 3) if self.cards else None,
            "false_per_1000_negatives": round(1000 * self.false_cards / self.negatives, 3)
            if self.negatives
            else None,
            "latency_ms": {
                "wall_p50": pct(self.wall_ms, 50),
                "wall_p99": pct(self.wall_ms, 99),
                "cpu_p50": pct(self.cpu_ms, 50),
                "cpu_p99": pct(self.cpu_ms, 99),
            },
            "per_card": {
                code: {
                    "frames": sum(c.values()),
                    "correct": c["correct"],
                    "wrong": c["wrong"],
                    "unknown": c["unknown"],
                    "accuracy": round(c["correct"] / max(1, sum(c.values())), 4),
                }
                for code, c in sorted(self.per_card.items())
            },
            "confusions": [
                {"card": a, "read_as": b, "frames": n} for (a, b), n in self.confusions.most_common()
            ],
            "false_cards_as": dict(self.false_as.most_common()),
            "unknown_reasons": dict(self.unknown_reasons.most_common(10)),
            "wrong_frames": self.wrong_frames[:LISTED],
            "unknown_frames": self.unknown_frames,
            "slowest_cpu_ms": [
                {"frame": name, "ms": round(ms, 3)} for ms, name in sorted(self.slowest, reverse=True)
            ],
        }


def evaluate(frames: Iterable[tuple[Image, Card | None, str]], profile: DeckProfile,
             window: ScanWindow | None = None) -> dict[str, Any]:
    """Run every (frame, true card or None, name) through the recogniser on one thread, through the table's
    scan ``window`` if given (as the daemon's camera reads)."""
    threads = cv2.getNumThreads()
    cv2.setNumThreads(READ_THREADS)
    try:
        tally = Tally()
        for frame, truth, name in frames:
            tally.add(frame, truth, profile, name, window)
        return tally.report()
    finally:
        cv2.setNumThreads(threads)


def summary(report: dict[str, Any]) -> str:
    """The report's headline figures as a few lines of text."""
    lat = report["latency_ms"]
    acc = report["accuracy"]
    unk = report["unknown_rate"]
    wrong, false = report["wrong_per_1000"], report["false_per_1000_negatives"]
    wrong_rate = "no card frames" if wrong is None else f"{wrong} per 1,000 card frames"
    false_rate = "no frames without a card" if false is None else f"{false} per 1,000 negative frames"
    lines = [
        f"frames {report['frames']}: {report['card_frames']} with a card, "
        f"{report['negative_frames']} without",
        f"wrong reads {report['wrong']} ({wrong_rate}); false cards {report['false_cards']} ({false_rate})",
        *([f"read correctly {report['correct']} ({acc:.2%}); unknown {report['unknown']} ({unk:.2%})"]
          if acc is not None and unk is not None else []),  # else the line above says: no card frames
        f"latency per frame (one thread): wall p50 {lat['wall_p50']} ms, p99 {lat['wall_p99']} ms; "
        f"CPU p50 {lat['cpu_p50']} ms, p99 {lat['cpu_p99']} ms",
        *(f"  wrong: {frame}" for frame in report["wrong_frames"]),
    ]
    if report["unknown_reasons"]:
        reasons = report["unknown_reasons"].items()
        lines.append("unknown reasons: " + ", ".join(f"{why} x{n}" for why, n in reasons))
        lines.extend(f"  unknown: {frame}" for frame in report["unknown_frames"][:SHOWN])
    if report["slowest_cpu_ms"]:
        lines.append("slowest (CPU): " + ", ".join(f"{s['frame'] or '?'} {s['ms']} ms"
                                                   for s in report["slowest_cpu_ms"]))
    if report["confusions"]:
        pairs = ", ".join(f"{c['card']}->{c['read_as']} x{c['frames']}" for c in report["confusions"][:10])
        lines.append(f"confusions: {pairs}")
    return "\n".join(lines)

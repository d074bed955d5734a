"""The floor's report as one HTML page for the pit board (``/report``): tables and server-side SVG bar charts.

Everything is drawn here, on the server, as inline SVG: the page needs no script, no library and
nothing from a CDN, prints as it shows, and its figures are the very rows of the CSV and JSON
(controller/floor/report_format.py). Horizontal bars, a zero line when values are negative, the 95 %
interval of actual minus theoretical as a whisker, each value in a column on the right.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import TypeVar

from controller.floor.report import Report
from controller.floor.report_format import group_dict, when
from controller.money import Currency

ROW = 22  # px per bar
LABEL = 150  # px for the labels on the left
WIDTH = 460  # px for the bars
STYLE = """
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #111; background: #fafafa; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .5em 0 1em; } td, th { padding: 2px 10px; text-align: right; }
th:first-child, td:first-child { text-align: left; } thead th { border-bottom: 1px solid #999; }
tr.total td { border-top: 1px solid #999; font-weight: 600; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5em; } figure { margin: 0; }
figcaption { font-weight: 600; margin-bottom: .3em; }
svg text { font: 12px system-ui, sans-serif; } .pos { fill: #2b6cb0; } .neg { fill: #c53030; }
.theo { fill: #a0aec0; } .whisker { stroke: #111; stroke-width: 1.5; } .axis { stroke: #666; }
"""


def bars(title: str, labels: Sequence[str], values: Sequence[float | None], shown: Callable[[float], str],
         spans: Sequence[tuple[float, float] | None] = (), ghost: Sequence[float | None] = ()) -> str:
    """A horizontal bar chart: one bar per label (a missing value shows 'n/a'), an optional lighter bar
    behind each (``ghost``: the theoretical beside the actual) and optional whiskers (``spans``)."""
    known = [v for v in [*values, *ghost] if v is not None]
    known += [x for s in spans if s is not None for x in s]
    low, high = min([0.0, *known]), max([0.0, *known])
    scale = WIDTH / (high - low) if high > low else 0.0

    def x(v: float) -> float:
        return LABEL + (v - low) * scale

    parts = [f'<figure><figcaption>{escape(title)}</figcaption>'
             f'<svg width="{LABEL + WIDTH + 100}" height="{ROW * len(labels) + 8}" role="img" '
             f'aria-label="{escape(title)}">']
    for i, label in enumerate(labels):
        y = 4 + i * ROW
        parts.append(f'<text x="0" y="{y + 15}">{escape(label)}</text>')
        if i < len(ghost) and ghost[i] is not None:
            g = float(ghost[i] or 0)
            parts.append(f'<rect class="theo" x="{min(x(0), x(g)):.1f}" y="{y + 11}" '
                         f'width="{abs(x(g) - x(0)):.1f}" height="7"/>')
        v = values[i]
        if v is None:
            parts.append(f'<text x="{LABEL}" y="{y + 15}">n/a</text>')
            continue
        parts.append(f'<rect class="{"neg" if v < 0 else "pos"}" x="{min(x(0), x(v)):.1f}" y="{y + 3}" '
                     f'width="{abs(x(v) - x(0)):.1f}" height="{8 if ghost else 15}"/>')
        if i < len(spans) and (s := spans[i]) is not None:
            parts.append(f'<line class="whisker" x1="{x(s[0]):.1f}" x2="{x(s[1]):.1f}" y1="{y + 9}" '
                         f'y2="{y + 9}"/>')
        parts.append(f'<text x="{LABEL + WIDTH + 8}" y="{y + 15}">{escape(shown(v))}</text>')
    if low < 0 < high:
        parts.append(f'<line class="axis" x1="{x(0):.1f}" x2="{x(0):.1f}" y1="0" '
                     f'y2="{ROW * len(labels) + 8}"/>')
    return "".join(parts) + "</svg></figure>"


def _table(d: dict[str, object], money: Currency) -> str:
    head = ("Bet", "Wagered", "House result", "Theoretical win", "Actual minus theoretical", "95 % interval")
    rows = []
    for bet in [*d["bets"], d["total"]]:  # type: ignore[misc]
        def m(key: str, b: dict[str, int | None] = bet) -> str:
            return "n/a" if b[key] is None else money.format(int(b[key] or 0))
        span = "n/a" if bet["low"] is None else f"{m('low')} .. {m('high')}"
        cls = ' class="total"' if bet["bet"] == "total" else ""
        rows.append(f"<tr{cls}><td>{escape(bet['bet'])}</td><td>{m('wagered')}</td><td>{m('house')}</td>"
                    f"<td>{m('theoretical')}</td><td>{m('difference')}</td><td>{span}</td></tr>")
    return ("<table><thead><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


T = TypeVar("T")


def _pick(values: Sequence[T], idx: Sequence[int]) -> list[T]:
    """The ``values`` at the positions ``idx`` (the groups of one scale)."""
    return [values[i] for i in idx]


def render(report: Report, named: str | None = None) -> str:
    """The report as a whole HTML page (UTF-8): charts across the groups, then each group's table;
    ``named`` says which gaming day the range is (``/report``'s default), beside its times."""
    groups = [(g, group_dict(g), Currency(g.currency, g.minor_units)) for g in report.groups]
    labels = [f"{g.key} ({report.scale(g)})" if g.currency or report.split(g) else g.key
              for g in report.groups]
    title = f"Report by {report.by}: rounds ended {when(report.start)} .. {when(report.end)}"
    title += f", {named}" if named else ""
    out = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
           f"<title>{escape(title)}</title><style>{STYLE}</style></head><body><h1>{escape(title)}</h1>"]
    if not groups:
        return "".join(out) + "<p>No rounds in this range.</p></body></html>\n"

    def money_of(i: int) -> Callable[[float], str]:
        return lambda v: groups[i][2].format(round(v))

    def amounts(key: str) -> list[float | None]:
        return [None if d["total"][key] is None else float(d["total"][key]) for _, d, _ in groups]

    def fmt(v: float) -> str:
        return f"{v:,.2f}" if v != int(v) else f"{int(v):,}"

    spans = [None if d["total"]["low"] is None else (float(d["total"]["low"]), float(d["total"]["high"]))
             for _, d, _ in groups]
    out.append('<div class="charts">')
    out.append(bars("Rounds", labels, [float(g.rounds) for g, _, _ in groups], fmt))
    out.append(bars("Rounds per hour (hours with play)", labels, [g.rounds_per_hour for g, _, _ in groups],
                    fmt))
    out.append(bars("Seats with a wager per round", labels, [g.seats_per_round for g, _, _ in groups], fmt))
    # Money on one axis only within one scale (currency and decimals), shown in it: cents and yen on one
    # axis, raw minor units shown as major (150,000 for 1,500.00), misled (a review, 2026-12-07).
    scales: dict[tuple[str, int], list[int]] = {}
    for i, (g, _, _) in enumerate(groups):
        scales.setdefault((g.currency, g.minor_units), []).append(i)
    house, theoretical, difference = amounts("house"), amounts("theoretical"), amounts("difference")
    for (code, units), idx in scales.items():
        also = "" if len(scales) == 1 else f", {code or 'no currency code'} with {units} decimals"
        out.append(bars(f"House result (bar) and theoretical win (grey){also}", _pick(labels, idx),
                        _pick(house, idx), money_of(idx[0]), ghost=_pick(theoretical, idx)))
        out.append(bars(f"Actual minus theoretical, with its 95 % interval{also}", _pick(labels, idx),
                        _pick(difference, idx), money_of(idx[0]), spans=_pick(spans, idx)))
    out.append("</div>")
    for g, d, money in groups:
        out.append(f"<h2>{escape(g.key)} <small>({escape(report.scale(g))})</small></h2>")
        out.append(f"<p>Rounds {g.rounds} settled, {g.voided} voided; Rounds per hour {d['rounds_per_hour']} "
                   f"over {d['hours']} hour(s) with play; Seats with a wager {d['seats_per_round']} a round "
                   f"({100 * g.occupancy:.1f} % of seated seat-rounds).</p>")
        out.append(_table(d, money))
        theoretical = [None if b["theoretical"] is None else float(b["theoretical"]) for b in d["bets"]]
        out.append(bars(f"{g.key}: house result (bar) and theoretical win (grey) per bet",
                        [b["bet"] for b in d["bets"]], [float(b["house"]) for b in d["bets"]],
                        money_of(groups.index((g, d, money))), ghost=theoretical))
    notes = "".join(f"<li>{escape(game)}: {escape(note)}</li>" for game, note in report.notes.items())
    out.append(f"<h2>Par figures used</h2><ul>{notes}</ul></body></html>\n")
    return "".join(out)

"""``croupier floor report`` on the command line: its arguments, and the report as text, CSV or JSON.

One flat row per group and bet type (:func:`rows`) feeds the CSV, the JSON and the pit board's page
(controller/floor/report_page.py), so every output shows the same figures: amounts in minor units
(JSON) or in the table's currency (text, CSV), the theoretical win and the interval rounded to a
minor unit only here, at the end.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
import time
from datetime import UTC, date, datetime, timedelta
from typing import Any

from controller.floor.gaming_day import GamingDay, add_starts_option
from controller.floor.report import GROUPINGS, BetFigures, Group, Report
from controller.money import Currency

EXAMPLE_DB = "postgresql://croupier@127.0.0.1:5432/floor"
#: The CSV's columns, in order (amounts in major units of ``currency``).
COLUMNS = ("group", "currency", "rounds", "voided", "hours", "rounds_per_hour", "seats_per_round",
           "occupancy", "bet", "wagered", "house", "theoretical", "difference", "low", "high")


def register(floor_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``croupier floor report``."""
    p = floor_sub.add_parser(
        "report", help="rounds, seats, wagers, house result and theoretical win, by table/game/dealer/hour",
        description="A report of the floor's rounds that ended from --from up to --to (the tables' clocks, "
        "UTC): per group, rounds settled and voided, rounds per hour of play, seat occupancy, wagered and "
        "the house's result per bet type, the theoretical win from the exact par sheets and actual minus "
        "theoretical with its 95 %% interval (docs/floor.md, \"Reports\").\n\nExample:\n"
        "  croupier floor report --from 2026-12-01 --to 2026-12-02 --db " + EXAMPLE_DB + "\n"
        "  croupier floor report --from 2026-12-01T18:00 --to 2026-12-02T02:00 --by dealer --csv --db ...\n"
        "  croupier floor report --gaming-day today --gaming-day-starts 06:00 --db ...  (the board's today)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", required=True, help="PostgreSQL URL (a read-only role is enough)")
    p.add_argument("--from", dest="start",
                   help="rounds ended at or after this time: an ISO date or date and time, UTC unless it "
                        "names its zone (or seconds since the epoch)")
    p.add_argument("--to", dest="end", help="... and before this time, the same way")
    p.add_argument("--gaming-day", metavar="YYYY-MM-DD|today",
                   help="instead of --from/--to: that gaming day (today: so far), cut at --gaming-day-starts "
                        "in this server's time zone, as the pit board's house today and /report")
    add_starts_option(p)
    p.add_argument("--table", help="this table only (default: every table)")
    p.add_argument("--by", choices=GROUPINGS, default="table", help="one line per table (default), game, "
                   "dealer or hour (UTC)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--csv", action="store_true", help="CSV, one row per group and bet type")
    out.add_argument("--json", action="store_true", help="JSON, amounts in minor units")
    p.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    from controller.floor.query_cli import FloorUnreadable, read_floor
    from controller.floor.report import aggregate, from_floor
    from controller.floor.report_par import NoPar

    try:
        start, end = _range(args)
    except ValueError as exc:
        print(f"croupier floor report: {exc}", file=sys.stderr)
        return 2
    try:
        rounds = read_floor("report", args.db, lambda conn: from_floor(conn, start, end, args.table))
    except FloorUnreadable as exc:
        return exc.tell()
    try:
        report = aggregate(rounds, args.by, start, end)
    except (NoPar, ValueError) as exc:
        print(f"croupier floor report: {exc}", file=sys.stderr)
        return 1
    print(to_json(report) if args.json else to_csv(report) if args.csv else to_text(report), end="")
    return 0


def _range(args: argparse.Namespace) -> tuple[float, float]:
    """--from and --to, or --gaming-day's range (its start up to the next day's, or now if sooner): the
    pit board's definition of a day (controller/floor/gaming_day.py), not UTC midnights."""
    from controller.floor.queries import parse_when

    if args.gaming_day is None:
        if args.start is None or args.end is None:
            raise ValueError("--from and --to, or --gaming-day, say which rounds to report")
        return parse_when(args.start), parse_when(args.end)
    if args.start is not None or args.end is not None:
        raise ValueError("--gaming-day or --from/--to, not both")
    day, now = GamingDay(args.gaming_day_starts), time.time()
    try:
        which = day.day_of(now) if args.gaming_day == "today" else date.fromisoformat(args.gaming_day)
        start, end = day.start_on(which), day.start_on(which + timedelta(days=1))
    except (ValueError, OverflowError):  # 9999-12-31 has no next day; 0001-01-01 none before it in a zone
        raise ValueError(f"--gaming-day: YYYY-MM-DD (years 1 to 9998) or today, not {args.gaming_day!r}"
                         ) from None
    if start > now:
        raise ValueError(f"--gaming-day {args.gaming_day}: that gaming day has not begun")
    return start, min(end, now)


def when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _minor(value: Any) -> int | None:
    return None if value is None else round(value)


def _figures(name: str, bet: BetFigures) -> dict[str, Any]:
    interval = bet.interval
    return {"bet": name, "wagered": bet.wagered, "house": bet.house, "theoretical": _minor(bet.theoretical),
            "difference": _minor(bet.difference), "low": _minor(interval and interval[0]),
            "high": _minor(interval and interval[1])}


def group_dict(g: Group) -> dict[str, Any]:
    """A group as plain values: its counts and each bet type's figures, then the total (minor units)."""
    return {
        "group": g.key, "currency": g.currency, "minor_units": g.minor_units, "rounds": g.rounds,
        "voided": g.voided, "hours": len(g.hours), "rounds_per_hour": round(g.rounds_per_hour, 2),
        "seats_per_round": round(g.seats_per_round, 2), "occupancy": round(g.occupancy, 4),
        "bets": [_figures(name, bet) for name, bet in sorted(g.bets.items())],
        "total": _figures("total", g.total),
    }


def to_json(report: Report) -> str:
    return json.dumps({"from": report.start, "to": report.end, "by": report.by, "notes": report.notes,
                       "groups": [group_dict(g) for g in report.groups]}, indent=1) + "\n"


def rows(report: Report) -> list[dict[str, Any]]:
    """One row per group and bet type (the total last), amounts in the group's major units as text."""
    out = []
    for g in report.groups:
        d = group_dict(g)
        money = Currency(g.currency, g.minor_units)
        for bet in [*d["bets"], d["total"]]:
            row = {k: d[k] for k in COLUMNS[:8]}
            row["bet"] = bet["bet"]
            for k in COLUMNS[9:]:
                row[k] = "" if bet[k] is None else money.format(bet[k]).replace(",", "")
            out.append(row)
    return out


def to_csv(report: Report) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows(report))
    return buffer.getvalue()


def to_text(report: Report) -> str:
    """The report for a person: a block per group, one line per bet type."""
    lines = [f"Report by {report.by}: rounds ended {when(report.start)} .. {when(report.end)}"]
    if not report.groups:
        return lines[0] + "\nno rounds in this range\n"
    for g in report.groups:
        d = group_dict(g)
        money = Currency(g.currency, g.minor_units)
        lines += ["", f"{g.key}  ({report.scale(g)})",
                  f"  rounds {g.rounds} settled, {g.voided} voided; {d['rounds_per_hour']} an hour over "
                  f"{d['hours']} hour(s) with play; seats with a wager {d['seats_per_round']} a round "
                  f"({100 * g.occupancy:.1f} % of seated seat-rounds)",
                  f"  {'bet':<14}{'wagered':>14}{'house':>14}{'theoretical':>14}{'actual-theo':>14}"
                  "  95 % interval"]
        for bet in [*d["bets"], d["total"]]:
            shown = {k: "n/a" if v is None else money.format(v) for k, v in bet.items() if k != "bet"}
            span = "n/a" if bet["low"] is None else f"{shown['low']} .. {shown['high']}"
            lines.append(f"  {bet['bet']:<14}" + "".join(f"{shown[k]:>14}" for k in COLUMNS[9:13])
                         + f"  {span}")
    lines += ["", "Par figures used:"] + [f"  {game}: {note}" for game, note in report.notes.items()]
    return "\n".join(lines) + "\n"

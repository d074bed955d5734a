"""``croupier watch``'s live terminal view: one panel per table, redrawn in place (``rich``).

For a technician over SSH: the phase, each seat's credits, wagers and cards,
the dealer's cards, what is due, the lamps as a small panel picture, the
shoe, the last results (a bead plate for Baccarat) and a banner for a tilt,
an offline device or a stale feed. Each table is followed by a thread with
its own :class:`Subscriber` (the clone pattern, heartbeats, stale detection);
when events arrive the view redraws from a fresh snapshot of the table (at
most five a second), so what is drawn is always the daemon's own state,
never a second reconstruction of it. ``--plain`` (and any output that is not
a terminal) keeps the line-per-event output of :func:`controller.tools.watch.watch`.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from controller.daemon.client import DaemonUnavailable, Subscriber
from controller.money import DEFAULT_CURRENCY, Currency
from controller.tools.event_text import compact_result, due_text, format_event, offline_text, result_text

#: A card code in a round view (``TD``, ``AS``) or a hole card not yet shown.
_CARD = re.compile(r"^([2-9TJQKA][CDHS]|\?\?)$")
#: Snapshots per second at most, however fast the events come.
REDRAW_EVERY = 0.2
#: Rows of the Baccarat bead plate (columns fill top to bottom, left to right).
BEAD_ROWS = 6
_BEAD_STYLE = {"P": "bold white on blue", "B": "bold white on red", "T": "bold black on green"}
_SUIT_STYLE = {"H": "red", "D": "red", "C": "default", "S": "default"}


class TableView:
    """What the view knows of one table; written by its feed thread, read by the drawing loop."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.lock = threading.Lock()
        self.state: dict[str, Any] | None = None
        self.table = label
        self.seq: int | None = None
        self.currency: Currency = DEFAULT_CURRENCY
        self.lamps: dict[str, Any] | None = None
        self.shoe_status: str | None = None
        self.stale = False
        self.new_journal: str | None = None
        self.problem: str | None = None
        #: The journal's fault (``{"file", "error"}``: the snapshot's, a heartbeat's, the topic's) or None.
        self.journal_fault: dict[str, Any] | None = None
        self.recent: deque[str] = deque(maxlen=5)
        self.settlements = 0

    def take_snapshot(self, reply: dict[str, Any]) -> None:
        with self.lock:
            self.state = reply["state"]
            self.table = reply.get("table", self.label)
            self.seq = reply.get("seq")
            self.currency = Currency.from_dict(reply.get("currency"))
            if reply.get("lamps") is not None:
                self.lamps = reply["lamps"]
            self.journal_fault = reply.get("journal_fault")
            self.problem = None

    def take_event(self, payload: dict[str, Any]) -> None:
        with self.lock:
            self.recent.append(format_event(payload, self.currency))
            self.seq = payload.get("seq", self.seq)
            if payload["event"] == "round_settled":
                self.settlements += len(payload.get("settlements", []))

    def take_side(self, payload: dict[str, Any]) -> None:
        with self.lock:
            name = payload.get("event", "")
            if name == "lamps":
                self.lamps = payload
            elif name in ("heartbeat", "journal_fault"):  # the table halted: said, as a tilt is
                self.journal_fault = (payload.get("journal_fault") if name == "heartbeat"
                                      else {"file": payload.get("file"), "error": payload.get("error")})
            elif name.startswith("shoe_"):
                detail = result_text({k: v for k, v in payload.items() if k not in ("event", "table", "at")})
                self.shoe_status = f"{name.removeprefix('shoe_')} {detail}".strip()


def follow(view: TableView, make_sub: Callable[[], Subscriber], stop: threading.Event) -> None:
    """The feed thread of one table: keep ``view`` current until ``stop`` (reconnecting on errors)."""
    while not stop.is_set():
        try:
            sub = make_sub()
        except Exception as exc:  # an endpoint that cannot be used: shown in the view's banner
            view.problem = f"cannot subscribe: {exc}"
            stop.wait(1.0)
            continue
        try:
            _pump(view, sub, stop)
        except (RuntimeError, DaemonUnavailable) as exc:  # daemon gone or refusing: say so, retry
            view.problem = f"{exc}; retrying"
            stop.wait(1.0)
        finally:
            sub.close()


def _pump(view: TableView, sub: Subscriber, stop: threading.Event) -> None:
    """Feed ``view`` from ``sub``: one long ``events()`` (its stale clock runs across the whole feed).

    After an event the state is re-read from the snapshot socket, at most every
    :data:`REDRAW_EVERY` seconds; a burst's last event is caught up on the next
    message at the latest (heartbeats come every second).
    """
    dirty, last = False, 0.0
    for kind, data in sub.events():
        if stop.is_set():
            return
        if kind == "snapshot":
            view.take_snapshot(data)
            view.new_journal = str(data.get("journal_id"))[:8] if sub.redraws else None
            dirty = False
        elif kind == "event":
            view.take_event(data)
            dirty = True
        elif kind == "side":
            view.take_side(data)
        view.stale = sub.stale
        if dirty and time.monotonic() - last >= REDRAW_EVERY:
            view.take_snapshot(sub.sync())  # checked whole as every snapshot (a bad one: RuntimeError)
            dirty, last = False, time.monotonic()


# ------------------------------------------------------------------------------------------ drawing
def cards_in(value: Any) -> list[str]:
    """Every card code in a (nested) round-view value, in order."""
    if isinstance(value, str):
        return [value] if _CARD.match(value) else []
    if isinstance(value, dict):  # cards swapped out or burned are not in the hand any more
        return [c for k, v in value.items() if k not in ("discarded", "burned") for c in cards_in(v)]
    if isinstance(value, list):
        return [c for v in value for c in cards_in(v)]
    return []


def card_text(codes: Iterable[str]) -> Text:
    text = Text()
    for code in codes:
        text.append(code, style="dim" if code in ("??", "|") else _SUIT_STYLE[code[1]])
        text.append(" ")
    return text


def _seat_cards(view: dict[str, Any], seat: str) -> list[str]:
    """The seat's cards, its hands (blackjack's swap or split) apart with ``|``."""
    for key in ("seats", "players"):
        if isinstance(view.get(key), dict) and seat in view[key]:
            mine = view[key][seat]
            hands = mine.get("hands") if isinstance(mine, dict) else None
            if isinstance(hands, list) and len(hands) > 1:
                return [c for i, h in enumerate(hands) for c in ([] if i == 0 else ["|"]) + cards_in(h)]
            return cards_in(mine)
    return []


def _lamp_text(buttons: dict[str, str], spots: Iterable[str] = ()) -> Text:
    text = Text()
    for word, mode in buttons.items():
        text.append(f"[{word}]", style="bold black on yellow blink" if mode == "blink" else "black on yellow")
        text.append(" ")
    for spot in spots:
        text.append(f"({spot})", style="black on cyan")
        text.append(" ")
    return text


def _banners(v: TableView, state: dict[str, Any] | None) -> list[RenderableType]:
    out: list[str] = []
    if v.problem:
        out.append(f"NO FEED: {v.problem}")
    if v.stale:
        out.append("STALE FEED: nothing from the table (daemon down or network?); showing the last state")
    if v.new_journal:
        out.append(f"NEW JOURNAL {v.new_journal}: the table was reset; everything redrawn")
    if v.journal_fault:  # the table is halted and said nothing else here before (a review, 2026-12-07)
        fault = v.journal_fault
        out.append(f"JOURNAL FAULT {fault.get('file')}: {fault.get('error')}: the table is halted "
                   "(docs/daemon.md, 'A journal that cannot be written')")
    if state is not None:
        tilt = state.get("tilt")
        if tilt:
            what = tilt.get("card") or tilt["detail"]
            held = f"; held {' '.join(tilt['held'])}" if tilt.get("held") else ""
            out.append(f"TILT {tilt['reason']}: {what}{held} (burn, clear-tilt, take or void)")
        out.extend(f"FAULT {line}" for line in offline_text(state.get("offline") or {}))
    if v.lamps and v.lamps.get("fault"):
        out.append("FAULT pattern on the panels")
    return [Text(line, style="bold white on red") for line in out]


def bead_plate(results: list[dict[str, Any]], columns: int = 20) -> Text:
    """Baccarat's bead plate: P/B/T of each round of the shoe, six down, then the next column."""
    beads = [str(r["result"].get("winner", "?"))[:1].upper() for r in results]
    beads = beads[-BEAD_ROWS * columns:]
    text = Text(no_wrap=True)
    for row in range(BEAD_ROWS):
        for col in range((len(beads) + BEAD_ROWS - 1) // BEAD_ROWS):
            i = col * BEAD_ROWS + row
            if i < len(beads):
                text.append(beads[i], style=_BEAD_STYLE.get(beads[i], ""))
            else:
                text.append(" ")
        if row < BEAD_ROWS - 1:
            text.append("\n")
    return text


def _results(state: dict[str, Any], cur: Currency) -> RenderableType:
    results = state.get("shoe_results") or []
    if state.get("game") == "baccarat":
        if not results:
            return Text("bead plate: no rounds yet this shoe", style="dim")
        last = results[-1]["result"]
        rounds = f"{len(results)} round{'' if len(results) == 1 else 's'}"
        head = Text(f"bead plate ({rounds} this shoe); last: R{results[-1]['round']} "
                    f"{last.get('winner')} {last.get('player_score')}-{last.get('banker_score')}")
        return Group(head, bead_plate(results))
    lines = [f"R{r['round']}: {compact_result(r['result'])}" for r in results[-3:]]
    return Text("last results: " + ("; ".join(lines) if lines else "none yet this shoe"))


def render_table(v: TableView) -> RenderableType:
    """One table's panel."""
    with v.lock:
        state = v.state
        cur = v.currency
        lamps = v.lamps or {}
        recent = list(v.recent)
        shoe_status = v.shoe_status
        banners = _banners(v, state)
        seq = v.seq
    if state is None:
        return Panel(Group(*banners, Text("waiting for the table's snapshot...")), title=v.label)
    rv = state.get("round_view") or {}
    seats = Table(box=None, pad_edge=False, header_style="bold")
    for col in ("seat", "credits", "wagers", "cards", "lamps"):
        seats.add_column(col, justify="right" if col == "credits" else "left")
    wagers: dict[str, list[str]] = {}
    for w in state.get("wagers", []):
        wagers.setdefault(str(w["seat"]), []).append(f"{w['spot']} {cur.format(w['amount'])}")
    seat_lamps = lamps.get("seats", {})
    dp = (state.get("game_state") or {}).get("dp_seat")
    for seat in sorted(set(state.get("credits", {})) | set(wagers) | set(seat_lamps), key=int):
        lamp = seat_lamps.get(seat, {})
        seats.add_row(
            f"{seat}{' DP' if dp is not None and str(dp) == seat else ''}",
            cur.format(state["credits"].get(seat, 0)),
            ", ".join(wagers.get(seat, [])) or "-",
            card_text(_seat_cards(rv, seat)),
            _lamp_text(lamp.get("buttons", {}), lamp.get("spots", [])),
        )
    hands = Text()
    for key, value in rv.items():
        if key in ("seats", "players") or not isinstance(value, list | str):
            continue
        codes = cards_in(value)
        if codes or key.endswith("cards"):
            hands.append(f"{key.removesuffix('_cards')}: ", style="bold")
            hands.append_text(card_text(codes))
            hands.append("  ")
    shoe = state.get("shoe") or {}
    shoe_line = (f"shoe: {shoe.get('decks')} deck{'s' if shoe.get('decks') != 1 else ''}, "
                 f"{shoe.get('dealt', 0)} dealt, {shoe.get('burned', 0)} burned, {shoe.get('remaining')} left"
                 + (f"; device {shoe_status}" if shoe_status else ""))
    dealer_panel = Text("dealer ", style="bold")
    dealer_panel.append_text(_lamp_text(dict.fromkeys(lamps.get("dealer", {}), "on")))
    dealer_panel.append("  tower ", style="bold")
    tower = list(lamps.get("tower", {})) or ["dark"]
    dealer_panel.append(" ".join(tower), style="bold red" if "fault" in tower else "green")
    meters = (state.get("meters") or {}).get("table", {})
    dealer = f" · dealer {state['dealer']}" if state.get("dealer") else ""
    title = (f"{v.table} · {state.get('game')} · round {state.get('round')} · "
             f"{str(state.get('phase')).upper()}{dealer}")
    subtitle = (f"seq {seq} · settled {meters.get('rounds_settled', 0)} · voided "
                f"{meters.get('rounds_voided', 0)} · house {cur.signed(meters.get('house_net', 0))}")
    parts: list[RenderableType] = [
        *banners,
        Text(due_text(state), style="bold"),
        hands if hands.plain else Text("hands: no cards yet", style="dim"),
        seats,
        dealer_panel,
        Text(shoe_line),
        _results(state, cur),
        *(Text(line, style="dim", no_wrap=True, overflow="ellipsis") for line in recent),
    ]
    return Panel(Group(*parts), title=title, subtitle=subtitle, border_style="red" if banners else "blue")


def render(views: list[TableView], notes: tuple[str, ...] = ()) -> RenderableType:
    """The panels, under ``notes`` (the demo's key, display and keys): on top, so a small terminal that
    cuts the bottom of the view never hides them."""
    return Group(*(Text(note, style="dim") for note in notes), *(render_table(v) for v in views))


def run_live(
    views: list[TableView],
    subscribers: list[Callable[[], Subscriber]],
    until: Callable[[], bool] = lambda: False,
    console: Console | None = None,
    notes: tuple[str, ...] = (),
) -> None:
    """Draw ``views`` in place until ``until()`` is true or Ctrl-C; one feed thread per table."""
    stop = threading.Event()
    threads = [
        threading.Thread(target=follow, args=(v, make, stop), name=f"watch {v.label}", daemon=True)
        for v, make in zip(views, subscribers, strict=True)
    ]
    for t in threads:
        t.start()
    try:
        with Live(render(views, notes), console=console, refresh_per_second=4, transient=False) as live:
            while not until():
                time.sleep(0.25)
                live.update(render(views, notes))
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=3.0)

"""What a signage screen shows of one table, kept up to date from the snapshot and the events.

Pure (no sockets, no clock): :class:`TableView` takes the daemon's snapshot
reply and then each event in ``seq`` order and answers :meth:`TableView.to_dict`,
the whole screen as JSON. The browser only draws that JSON, so a browser that
connects late or reconnects gets the full screen in its first message, and
the roads it draws are the ones :mod:`signage.roads` computed (the same code
as ``croupier roads``).

What players must not see is never sent: the dealer's hole card stays ``??``
until the dealer plays or the result is known. (One Card Poker cards are
dealt face up and compared at once, so they are shown as they arrive.)
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from typing import Any

from controller.money import Currency
from signage.roads import Result, RoadError, compute, preview

HIDDEN = "??"


def limits_text(symbol: str, money: Currency, limits: Mapping[str, int]) -> dict[str, str]:
    """Min and max as the sign shows them: in ``money``'s decimals, after ``symbol``."""
    return {key: symbol + money.format(limits[key]) for key in ("min_bet", "max_bet")}
#: A card as the events write it (``TD``, ``AS``).
_CARD = re.compile(r"^[2-9TJQKA][CDHS]$")
#: Baccarat value of a rank (A=1, 2-9, T J Q K = 0), to show the running score as cards arrive.
_BACCARAT_VALUE = {r: min(i + 1, 10) % 10 for i, r in enumerate("A23456789TJQK")}
#: How many past results the "last results" strip keeps.
HISTORY = 12
#: How many earlier shoes the Baccarat scoreboard summarises (their counts), newest first.
EARLIER_SHOES = 3


def baccarat_score(cards: list[str]) -> int:
    """The Baccarat score of the cards shown (a hidden card counts nothing)."""
    return sum(_BACCARAT_VALUE.get(c[:1], 0) for c in cards) % 10


class TableView:
    """One table's screen state; ``settings`` is the table file's ``display:`` section as a dict."""

    def __init__(self, table: str, game: str, settings: dict[str, Any]) -> None:
        self.table = table
        self.game = game
        self.settings = settings
        self.seq = 0
        self.round = 0
        self.phase = "idle"
        self.limits: dict[str, Any] = {}
        self.tilt: dict[str, Any] | None = None
        self.offline: dict[str, str] = {}
        self.dp_seat: int | None = None
        self.hands: dict[str, list[str]] = {}
        #: The round the shown hands belong to: the last round's cards and result stay on the
        #: screen while the next round takes bets, until its first card.
        self.hands_round = 0
        #: Per hand, from the result record: its total and outcome (Swap-Hand), shown under its cards.
        self.hand_info: dict[str, dict[str, Any]] = {}
        self.hole_shown = False
        self.result: dict[str, Any] | None = None
        self.outcomes: dict[str, int] = {}
        self.voided = False
        self.shoe: list[Result] = []
        #: The table's number for the current shoe (the daemon's ``shoe_number``; 0 before any ``new_shoe``).
        self.shoe_number = 0
        #: Naturals in the current shoe (the road counts do not carry them; players look for them).
        self.naturals = 0
        #: The counts of the shoes that ended while this display followed the table (a display that
        #: starts mid-session knows only the current shoe: the snapshot holds no earlier one).
        self.earlier_shoes: deque[dict[str, int]] = deque(maxlen=EARLIER_SHOES)
        self.history: deque[dict[str, Any]] = deque(maxlen=HISTORY)
        self.journal: str | None = None
        self.problem: str | None = None

    # ------------------------------------------------------------------ snapshot
    def load_snapshot(self, reply: dict[str, Any]) -> None:
        """Redraw everything from a snapshot reply (first sync, a gap, a restarted daemon)."""
        state = reply["state"]
        self.seq = int(reply["seq"])
        self.journal = reply.get("journal_id")
        self.game = state.get("game", self.game)
        self.round = int(state.get("round", 0))
        self.phase = state.get("phase", "idle")
        self.limits = dict(state.get("limits") or {})
        self.tilt = state.get("tilt")
        self.offline = dict(state.get("offline") or {})
        self.dp_seat = (state.get("game_state") or {}).get("dp_seat")
        self.result = None
        self.outcomes = {}
        self.voided = False
        self.hands = self._hands_from_view(state.get("round_view") or {}) if self.phase == "dealing" else {}
        self.hand_info = {}
        self.hands_round = self.round
        self.hole_shown = False
        self.shoe = []
        self.shoe_number = int(state.get("shoe_number", 0))
        self.naturals = 0
        self.history.clear()
        results = state.get("shoe_results") or []
        for item in results:
            self._add_result(int(item["round"]), item["result"])
        last = results[-1] if results else None
        if last is not None and self.phase != "dealing" and self.round - int(last["round"]) in (
                (0, 1) if self.phase == "betting" else (0,)):
            # The last round stays on screen until the next one's first card, as it does live: a display
            # started (or re-synced) then drew the verdict without its cards, or nothing (a review).
            self._reveal(last["result"])
            self.hands_round, self.hole_shown = int(last["round"]), True

    def _hands_from_view(self, view: dict[str, Any]) -> dict[str, list[str]]:
        """The round in progress as hands, from a snapshot's ``round_view`` (hidden cards stay hidden)."""
        hands: dict[str, list[str]] = {}
        if self.game == "baccarat":
            hands["player"] = list(view.get("player_cards") or [])
            hands["banker"] = list(view.get("banker_cards") or [])
        elif self.game == "one_card_poker":
            for seat, hand in (view.get("players") or {}).items():
                cards = list(hand.get("cards") or [])
                hands[f"seat {seat}"] = cards[:1]
                if cards[1:]:  # a War: the seat's second card and the DP's, named as the cards dealt are
                    hands[f"seat {seat} war"] = cards[1:]
                if hand.get("dp_war_cards"):
                    hands[f"dp war seat {seat}"] = list(hand["dp_war_cards"])
            if view.get("dp_card"):
                hands["dp"] = [view["dp_card"]]
        else:
            if view.get("dealer_cards"):
                hands["dealer"] = list(view["dealer_cards"])
            for seat, entry in (view.get("seats") or {}).items():
                for i, cards in enumerate(_seat_hands(entry)):
                    hands[f"seat {seat}" + (f" hand {i + 1}" if i else "")] = cards
        return hands

    # ------------------------------------------------------------------ events
    def apply(self, event: dict[str, Any]) -> None:
        """One event, in ``seq`` order (the feed guarantees it)."""
        self.seq = int(event.get("seq", self.seq))
        kind = event["event"]
        if kind == "new_shoe":
            if self.shoe:
                counts = compute(self.shoe).counts
                self.earlier_shoes.appendleft({"shoe": self.shoe_number, **counts, "natural": self.naturals})
            self.shoe_number = int(event["shoe_number"])
            self.shoe = []
            self.naturals = 0
            if self.game == "baccarat":  # the strip is part of the shoe's scoreboard there
                self.history.clear()
        elif kind == "betting_opened":
            self.round = int(event["round"])
            self.phase = "betting"
        elif kind == "betting_closed":
            self.phase = "dealing"
        elif kind == "card_dealt":
            hand, card = event["hand"], event["card"]
            if not isinstance(hand, str) or not isinstance(card, str) or not _CARD.match(card):
                raise ValueError(f"card_dealt needs a hand name and a card code, not {hand!r}, {card!r}")
            self._card(hand, card)
        elif kind == "round_result":
            self.hole_shown = True
            self._add_result(int(event["round"]), event["result"])
            self._reveal(event["result"])
        elif kind == "round_settled":
            self.phase = "idle"
            nets: dict[str, int] = {}
            for line in event.get("settlements") or []:
                key = str(line["seat"])
                nets[key] = nets.get(key, 0) + int(line["net"])
            self.outcomes = nets
        elif kind == "round_voided":
            self.phase = "idle"
            if self.hands_round != int(event["round"]):  # voided before its first card: the last round's
                self._clear_hands(int(event["round"]))  # cards and wins left the screen, as a joiner sees
            self.voided = True
        elif kind == "tilt":
            self.tilt = {
                "reason": event.get("reason"),
                "card": event.get("card"),
                "detail": event.get("detail"),
                "held": list(event.get("held") or []),
            }
        elif kind == "card_held" and self.tilt is not None:
            self.tilt["held"] = list(event.get("held") or [])
        elif kind == "tilt_cleared":
            self.tilt = None
        elif kind == "dp_set":
            self.dp_seat = int(event["seat"])
        elif kind == "notice" and event.get("what") == "swap":
            self._swapped(event.get("detail") or {})
        elif kind == "decision" and event.get("action") == "split":
            self._split(int(event["seat"]))
        elif kind == "device":
            name = str(event["device"])
            if event.get("online"):
                self.offline.pop(name, None)
            else:
                self.offline[name] = str(event.get("detail") or "")

    def _clear_hands(self, round_no: int) -> None:
        """The last round leaves the screen: ``round_no``'s hands (none yet) take its place."""
        self.hands = {}
        self.hand_info = {}
        self.hands_round = round_no
        self.hole_shown = False
        self.outcomes = {}
        self.voided = False

    def _swapped(self, detail: dict[str, Any]) -> None:
        """A Swap-Hand swap: the seat's two cards are thrown away (its new ones come as cards dealt); they
        were shown as one hand of four with the new ones (a review, 2026-12-07)."""
        cards = self.hands.get(f"seat {detail.get('seat')}", [])
        for code in detail.get("discarded") or ():
            if code in cards:
                cards.remove(code)

    def _split(self, seat: int) -> None:
        """A split: the pair's second card heads the seat's new hand at once, named as the game names it
        (``seat N main:2`` in Swap-Hand, ``seat N hand 2`` in 2WayWinner: the next after the seat's hands).
        Before, the hand was drawn as one of three cards until the result (a review, 2026-12-07)."""
        mine = [n for n in self.hands if n == f"seat {seat}" or n.startswith(f"seat {seat} ")]
        pairs = [n for n in mine if len(c := self.hands[n]) == 2 and c[0][0] == c[1][0]]
        if pairs:
            kind = "main:" if self.game == "swap_hand" else "hand "
            self.hands[f"seat {seat} {kind}{len(mine) + 1}"] = [self.hands[pairs[-1]].pop()]

    def _card(self, hand: str, card: str) -> None:
        if self.hands_round != self.round:  # the first card of a round: the last round leaves the screen
            self._clear_hands(self.round)
        cards = self.hands.setdefault(hand, [])
        cards.append(card)
        if hand == "dealer" and len(cards) >= 3:
            self.hole_shown = True  # the dealer is drawing: the hole card was turned over

    def _reveal(self, result: dict[str, Any]) -> None:
        """At the result every card is public: take them from the result record (War cards too)."""
        if self.game == "baccarat" and result.get("player_cards") is not None:
            self.hands = {"player": list(result["player_cards"]),
                          "banker": list(result.get("banker_cards") or [])}
        elif self.game == "one_card_poker":
            hands: dict[str, list[str]] = {}
            for seat, hand in (result.get("players") or {}).items():
                hands[f"seat {seat}"] = list(hand.get("cards") or [])
                if hand.get("dp_war_cards"):
                    hands[f"dp war seat {seat}"] = list(hand["dp_war_cards"])
            if result.get("dp_card"):
                hands["dp"] = [result["dp_card"]]
            self.hands = hands
        elif self.game != "baccarat" and result.get("dealer_cards") is not None:
            # The record is the truth (a swap moves cards between hands): seats' hands from it.
            hands = {"dealer": list(result["dealer_cards"])}
            for seat, entry in (result.get("seats") or {}).items():
                for i, hand in enumerate(entry.get("hands") or []):
                    if isinstance(hand, dict):  # Swap-Hand: each hand with its spot, total and outcome
                        spot = hand.get("spot", "main")
                        name = f"seat {seat}" if spot == "main" else f"seat {seat} {spot}"
                        hands[name] = list(hand.get("cards") or [])
                        self.hand_info[name] = {"total": hand.get("total"), "outcome": hand.get("outcome")}
                    else:  # 2WayWinner: card lists, one per blackjack hand after a split
                        hands[f"seat {seat}" + (f" hand {i + 1}" if i else "")] = [str(c) for c in hand]
            self.hands = hands

    def _add_result(self, round_no: int, result: dict[str, Any]) -> None:
        self.result = {"round": round_no, **result}
        self.history.append({"round": round_no, **_summary(self.game, result)})
        if self.game == "baccarat":
            self.naturals += result.get("natural") is True
            try:
                self.shoe.append(Result.from_record(result, f"round {round_no}"))
            except RoadError as exc:
                self.problem = str(exc)

    # ------------------------------------------------------------------ output
    def shown_hands(self) -> list[dict[str, Any]]:
        out = []
        for name, cards in self.hands.items():
            shown = list(cards)
            if name == "dealer" and len(shown) == 2 and not self.hole_shown:
                shown[1] = HIDDEN
            entry: dict[str, Any] = {"name": name, "cards": shown}
            if self.game == "baccarat":
                entry["score"] = baccarat_score(shown)
            entry.update(self.hand_info.get(name, {}))
            out.append(entry)
        return out

    def limits_text(self) -> dict[str, str] | None:
        """Min and max as the sign shows them: the limits in force (the state's, a heartbeat's), in their
        decimals, with the display's symbol; the table file's only until the table has said (they were
        the display's own table file's always, whatever the daemon played: a review, 2026-12-07)."""
        lim = self.limits
        if not isinstance(lim.get("min_bet"), int) or not isinstance(lim.get("max_bet"), int):
            text: dict[str, str] | None = self.settings.get("limits_text")
            return text
        return limits_text(str(self.settings.get("symbol") or ""),
                           Currency(minor_units=int(lim.get("minor_units", 2))), lim)

    def shown_dp_seat(self) -> int | None:
        """The Designated Player of the round shown: the last round's, from its result, while its cards stay
        on screen (the next round's DP labelled the last round's DP card and badge: a review, 2026-12-07)."""
        result = self.result
        if result is not None and result.get("round") == self.hands_round and "dp_seat" in result:
            seat = result["dp_seat"]
            return int(seat) if seat is not None else None
        return self.dp_seat

    def to_dict(self) -> dict[str, Any]:
        view: dict[str, Any] = {
            "table": self.table,
            "game": self.game,
            "display": {**self.settings, "limits_text": self.limits_text()},
            "seq": self.seq,
            "journal": self.journal,
            "round": self.round,
            "phase": self.phase,
            "limits": self.limits,
            "tilt": self.tilt,
            "offline": self.offline,
            "dp_seat": self.shown_dp_seat(),
            "hands": self.shown_hands(),
            "hands_round": self.hands_round,
            "result": self.result,
            "outcomes": self.outcomes,
            "voided": self.voided,
            "history": list(self.history),
            "problem": self.problem,
        }
        if self.game == "baccarat":
            view["roads"] = compute(self.shoe).to_dict()
            # Where a next Banker / Player would mark each road: the page shows them in turn, in place.
            view["road_preview"] = {
                winner: {road: None if cell is None else cell.to_dict() for road, cell in cells.items()}
                for winner, cells in preview(self.shoe).items()
            }
            view["shoe_stats"] = {
                "shoe_number": self.shoe_number,
                "natural": self.naturals,
                "earlier_shoes": list(self.earlier_shoes),
            }
        return view


def _seat_hands(entry: dict[str, Any]) -> list[list[str]]:
    """A blackjack-family seat's hands as card lists (the record's shapes differ by game)."""
    hands = entry.get("hands") or []
    out: list[list[str]] = []
    for h in hands:
        if isinstance(h, dict):
            out.append(list(h.get("cards") or []))
        elif isinstance(h, list):
            out.append([str(c) for c in h])
    return out


def _summary(game: str, result: dict[str, Any]) -> dict[str, Any]:
    """A short line for the last-results strip."""
    if game == "baccarat":
        return {
            "winner": result.get("winner"),
            "player_score": result.get("player_score"),
            "banker_score": result.get("banker_score"),
            "natural": result.get("natural", False),
            "player_pair": result.get("player_pair", False),
            "banker_pair": result.get("banker_pair", False),
        }
    if game == "one_card_poker":
        return {"dp_seat": result.get("dp_seat"), "dp_card": result.get("dp_card")}
    total = result.get("dealer_total", result.get("dealer_bj_total"))
    return {
        "dealer_cards": result.get("dealer_cards"),
        "dealer_total": total,
        "dealer_blackjack": result.get("dealer_blackjack", False),
    }

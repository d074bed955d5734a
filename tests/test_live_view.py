"""``croupier watch``'s live view against a real daemon: what a technician reads in the panel.

The daemon runs in a thread (journal in a temp dir, ZeroMQ over ipc://); the
view follows it with its own feed thread, and is drawn by rich into a
recording console, so the test reads the text a terminal would show.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console
from test_daemon_support import config_for
from wait_support import wait_for

from controller.daemon.client import CommandClient, Subscriber, local_key
from controller.daemon.config import TableConfig
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.tools.live_view import TableView, bead_plate, follow, render

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def table(tmp_path: Path) -> Iterator[tuple[TableConfig, DaemonThread, CommandClient]]:
    config = config_for(tmp_path)
    runner = DaemonThread(Daemon(config, use_shoe=False)).start()
    client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
    yield config, runner, client
    client.close()
    runner.stop()


def drawn(views: list[TableView]) -> str:
    console = Console(record=True, width=120, force_terminal=False)
    console.print(render(views))
    return console.export_text()


def following(config: TableConfig, stale_after: float = 3.0) -> tuple[TableView, threading.Event]:
    z = config.spec.zeromq
    view = TableView(config.table_id)
    stop = threading.Event()

    def subscriber() -> Subscriber:
        return Subscriber(z.pub, z.snapshot, config.table_id, timeout=2.0, side=True, stale_after=stale_after)

    threading.Thread(target=follow, args=(view, subscriber, stop), daemon=True).start()
    return view, stop


def test_the_view_shows_a_round_as_it_is_dealt(
    table: tuple[TableConfig, DaemonThread, CommandClient],
) -> None:
    config, _, client = table
    view, stop = following(config)
    try:
        steps: list[tuple[str, dict[str, object]]] = [
            ("credit_in", {"seat": 1, "amount": 100000}), ("credit_in", {"seat": 2, "amount": 5000}),
            ("new_shoe", {}), ("dealer_in", {"name": "Ann"}), ("open", {}),
            ("bet", {"seat": 1, "spot": "banker", "amount": 500}),
            ("bet", {"seat": 2, "spot": "player", "amount": 1000}), ("close", {}),
            ("card", {"card": "9H"}), ("card", {"card": "2C"}), ("card", {"card": "5D"}),
        ]
        for cmd, fields in steps:
            assert client.call(cmd, **fields)["ok"]
        wait_for(lambda: "banker: 5D" in drawn([view]), "the banker's first card")
        text = drawn([view])
        assert "baccarat · round 1 · DEALING · dealer Ann" in text
        assert "due: a card for banker" in text
        assert "player: 9H 2C" in text
        assert "1,000.00" not in text and "995.00" in text and "banker 5.00" in text  # seat 1 after its bet
        assert "player 10.00" in text and "40.00" in text
        assert "shoe: 8 decks, 3 dealt" in text
        for card in ("3S",):  # banker 5+3: a natural 8, the round ends
            client.call("card", card=card)
        wait_for(lambda: "bead plate (1 round this shoe)" in drawn([view]), "the bead plate")
        assert "settled 1" in drawn([view])
    finally:
        stop.set()


def test_a_tilt_and_a_stale_feed_are_banners(table: tuple[TableConfig, DaemonThread, CommandClient]) -> None:
    config, runner, client = table
    view, stop = following(config, stale_after=1.0)
    try:
        client.call("credit_in", seat=1, amount=1000)
        client.call("new_shoe")
        client.call("open")
        client.call("card", card="TH")  # betting is open: no card is due, the table tilts
        wait_for(lambda: "TILT card_not_due" in drawn([view]), "the tilt banner")
        client.call("card", card="2D")  # delivered during the tilt: held, and shown with it
        wait_for(lambda: "TILT card_not_due: TH; held 2D" in drawn([view]), "the held card")
        runner.stop()  # the daemon goes away: nothing more comes, not even heartbeats
        wait_for(lambda: "STALE FEED" in drawn([view]), "the stale-feed banner")
        assert "TILT card_not_due" in drawn([view])  # the last state stays on screen
    finally:
        stop.set()


def test_several_tables_are_drawn_one_panel_each(tmp_path: Path) -> None:
    configs = [config_for(tmp_path, name=name) for name in ("left", "right")]
    runners = [DaemonThread(Daemon(c, use_shoe=False)).start() for c in configs]
    follows = [following(c) for c in configs]
    try:
        views = [v for v, _ in follows]
        wait_for(lambda: all(v.state is not None for v in views), "both snapshots")
        text = drawn(views)
        assert "left · baccarat · round 0" in text and "right · baccarat · round 0" in text
    finally:
        for _, stop in follows:
            stop.set()
        for r in runners:
            r.stop()


def test_bead_plate_fills_columns_of_six() -> None:
    results = [{"round": i, "result": {"winner": w}} for i, w in enumerate("BBPTPBBP", 1)]
    rows = bead_plate(results).plain.splitlines()
    assert rows[:6] == ["BB", "BP", "P ", "T ", "P ", "B "]


def test_a_blackjack_result_in_a_few_words() -> None:
    from controller.tools.event_text import compact_result

    result = {
        "dealer_cards": ["9S", "8D"], "dealer_total": 17, "dealer_blackjack": False,
        "seats": {"1": {"hands": [{"cards": ["7H", "6C", "3S"], "total": 16, "outcome": "lose"}]},
                  "6": {"hands": [{"cards": ["8D", "KS", "AS"], "outcome": "bust"},
                                  {"cards": ["TC", "9D"], "outcome": "win"}]}},
    }
    assert compact_result(result) == "dealer 17, seat 1 lose, seat 6 bust/win"
    ocp = {"dp_seat": 4, "dp_card": "KD", "players": {"1": {"cards": ["9C"], "outcome": "lose"}}}
    assert compact_result(ocp) == "DP seat 4 KD, seat 1 lose"

"""The demo's simulated dealer resolves a tilt between rounds as a dealer would, never by voiding a bet round.

With wagers on the layout (betting open), a card that cannot be in the shoe is cleared (the dealer
panel's ``confirm``), not voided: the round and its wagers stand. A held card that cannot be
burned (it cannot be in the shoe) is taken and cleared, so the demo deals on instead of retrying
a refused burn and never dealing again. Betting the shoe's absence kept open is closed on the next
pass without the players betting again (a second bet adds to the first). A demo started again on a
table its last run left tilted still shuffles in its new shoe. The daemon is real (its
journal, its command socket); the table has no shoe (cards keyed in as the dealer would), one deck
so a second copy is impossible.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from test_daemon_support import write_table

from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import load_table
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.tools.demo_dealer import Dealer
from drivers.shoe.sim import SimulatedShoe

PLAYERS = [{"seat": 1, "credits": 100_000, "bets": {"player": [500]}}]


@contextmanager
def demo_dealer(tmp_path: Path) -> Iterator[tuple[Dealer, CommandClient]]:
    """A one-deck Baccarat table's daemon, and the demo's dealer on it, set up (credits, a new shoe)."""
    config = load_table(write_table(tmp_path, options={"decks": 1}, simulation={"players": PLAYERS}))
    assert config.spec.simulation is not None
    shoe = SimulatedShoe("v1", seed=1)
    try:
        with DaemonThread(Daemon(config)):
            client = CommandClient(config.spec.zeromq.command, timeout=15, key=local_key(config))
            dealer = Dealer(config, config.spec.simulation, shoe, client, seed=1, rounds=None, delay=0.0)
            dealer.setup()
            yield dealer, client
            client.close()
    finally:
        shoe.close()


def test_an_impossible_card_while_betting_is_cleared_and_the_wagers_stand(tmp_path: Path) -> None:
    with demo_dealer(tmp_path) as (dealer, client):
        bet = {"seat": 1, "spot": "player", "amount": 500}
        for cmd, fields in [("burn", {}), ("card", {"card": "AS"}), ("open", {}), ("bet", bet),
                            ("card", {"card": "AS"})]:  # a second ace of spades in a one-deck shoe
            assert client.call(cmd, by="dealer", **fields)["ok"], cmd
        status = client.call("status")
        assert status["phase"] == "betting" and status["tilt"]["reason"] == "impossible_card", status
        dealer.clear_stray_tilt()
        after = client.call("status")
        assert after["tilt"] is None and after["phase"] == "betting", after
        assert client.call("meters")["totals"]["rounds_voided"] == 0
        assert client.call("snapshot")["state"]["wagers"] == [bet]


def test_a_held_card_that_cannot_be_burned_is_taken_and_cleared(tmp_path: Path) -> None:
    with demo_dealer(tmp_path) as (dealer, client):
        for card in ["KH"] * 9:  # the others held behind the first's card_not_due tilt, the most a tilt holds
            assert client.call("card", by="dealer", card=card)["ok"]
        dealer.clear_stray_tilt()
        after = client.call("status")
        assert after["tilt"] is None and after["phase"] == "idle", after
        shoe = client.call("snapshot")["state"]["shoe"]
        assert (shoe["burned"], shoe["seen"]) == (1, {"KH": 1}), shoe  # the held copies are not counted


def test_betting_that_could_not_close_keeps_the_players_wagers_as_they_were(tmp_path: Path) -> None:
    """The shoe out (or a tilt) refuses the close; the dealer's next pass does not bet for the players."""
    with demo_dealer(tmp_path) as (dealer, client):
        offline = {"input": "device", "device": "shoe", "online": False, "detail": "pulled"}
        assert client.call("input", by="test", input=offline)["ok"]
        for _ in range(3):  # each pass: betting open, the close refused (the shoe is offline)
            dealer.play_round()
            assert client.call("status")["phase"] == "betting"
        assert client.call("snapshot")["state"]["wagers"] == [{"seat": 1, "spot": "player", "amount": 500}]


def test_rounds_n_counts_rounds_the_table_ended_not_passes_whose_close_was_refused(tmp_path: Path) -> None:
    """``--rounds 1`` with the shoe out: each pass's close is refused and ends no round, so the dealer
    plays on (it did stop, saying it had played 1 round the table never dealt); with the shoe back it
    deals the round and stops, its count the table's own."""
    with demo_dealer(tmp_path) as (dealer, _):
        config = dealer.config  # the test's own client: the dealer's is busy in its thread
        client = CommandClient(config.spec.zeromq.command, timeout=15, key=local_key(config))
        offline = {"input": "device", "device": "shoe", "online": False, "detail": "pulled"}
        assert client.call("input", by="test", input=offline)["ok"]
        dealer.rounds = 1
        seq = client.call("ping")["seq"]
        worker = threading.Thread(target=dealer.run, daemon=True)
        worker.start()
        try:
            # Its setup, betting opened and bet, then close after close refused (one event each).
            refused = wait_until(lambda: client.call("ping")["seq"] >= seq + 20 or dealer.done.is_set())
            assert refused and not dealer.done.is_set() and dealer.played == 0, (dealer.error, dealer.played)
            online = {**offline, "online": True, "detail": ""}
            assert client.call("input", by="test", input=online)["ok"]
            cards = iter(["2C", "3D", "4H", "5S", "6C", "7D"])  # keyed in as due (this table has no shoe)

            def dealt() -> bool:
                status = client.call("status")
                if status["phase"] == "dealing" and "card" in (status["due"] or {}):
                    assert client.call("card", by="dealer", card=next(cards))["ok"]
                return dealer.done.is_set()

            assert wait_until(dealt, 30) and dealer.error is None, dealer.error
            totals = client.call("meters")["totals"]
        finally:
            dealer.stop.set()
            worker.join(15)
            client.close()
        assert dealer.played == totals["rounds_settled"] + totals["rounds_voided"] == 1, totals


def wait_until(ready: Callable[[], bool], timeout: float = 30.0) -> bool:
    """Poll ``ready`` until it holds (True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_a_demo_started_again_on_a_tilted_table_still_announces_its_fresh_shoe(tmp_path: Path) -> None:
    """``croupier floor demo`` starts a table's demo again on the same journal with a freshly shuffled
    simulated shoe: a stray card's tilt left by the last run must not refuse that shoe's ``new_shoe``
    (else the table counts the new shoe's cards against the old one's: impossible cards, voided rounds)."""
    with demo_dealer(tmp_path) as (first, client):
        assert client.call("card", by="dealer", card="KH")["ok"]  # the stray card, then the demo ends
        shoe = SimulatedShoe("v1", seed=2)
        try:
            Dealer(first.config, first.sim, shoe, client, seed=2, rounds=None, delay=0.0).setup()
        finally:
            shoe.close()
        state = client.call("snapshot")["state"]
        assert state["tilt"] is None and state["shoe_number"] == 2, state
        assert state["shoe"]["burned"] == 0, state["shoe"]  # the stray card was the old shoe's

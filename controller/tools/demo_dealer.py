"""The demo's simulated dealer and players: they work the table's panels and command socket as people would.

The dealer presses the dealer panel's buttons (or sends the command a dealer would key in where the table
has no such button), each player keys an amount with the seat's chip keys and puts chips on the spots'
sensors, and the shoe (or the camera) deals each due card on a timer (``croupier demo``).
"""

from __future__ import annotations

import json
import random
import threading
import time
from typing import TYPE_CHECKING, Any, Protocol, cast

from controller.daemon.client import CommandClient
from controller.daemon.config import SimulationSpec, TableConfig
from controller.tilts import MAX_HELD
from controller.tools.demo_summary import rounds_ended
from drivers.gpio.betkeys import presses_for
from drivers.gpio.control import ControlClient
from drivers.gpio.pinmap import PinMap
from drivers.shoe.sim import SimError

if TYPE_CHECKING:
    from vision.camera_sim import SimulatedCamera


class CardSource(Protocol):
    """What the dealer deals from: the simulated shoe, or the simulated camera (vision.camera_sim)."""

    @property
    def mode(self) -> str:
        """"reader" (the dealer draws each card), "dealing_shuffler" (it deals on DISPENSE) or "camera"."""

    @property
    def remaining(self) -> int: ...

    def shuffle(self) -> None: ...

    def deal(self) -> Any: ...

    def close(self) -> None: ...


#: How the demo's dealer resolves a tilt between rounds: (dealer panel button, command) per reason.
STRAY_TILT_ACTIONS: dict[str, tuple[str, str]] = {
    "card_not_due": ("burn", "burn"),
    "held_card": ("burn", "burn"),
    "impossible_card": ("confirm", "clear_tilt"),
    "repeat_card": ("confirm", "clear_tilt"),  # the camera's card still in its window: the one dealt
}


class DemoError(RuntimeError):
    """The demo cannot go on (the daemon died, a command failed); the message says why."""


class Dealer:
    """The simulated dealer and players: drives rounds through the command socket and the shoe."""

    def __init__(
        self,
        config: TableConfig,
        sim: SimulationSpec,
        shoe: CardSource,
        client: CommandClient,
        seed: int,
        rounds: int | None,
        delay: float | None,
        control: ControlClient | None = None,
        hold_betting: bool = False,
    ) -> None:
        self.config = config
        self.control = control
        #: The table's panels: seat -> its map, and the map with the dealer panel (None: no panels).
        self.seat_maps: dict[int, PinMap] = {s: m for _, m in config.panels for s in m.seats}
        self.dealer_map = next((m for _, m in config.panels if m.dealer is not None), None)
        self.covered: set[tuple[int, str]] = set()
        self.sim = sim
        self.shoe = shoe
        self.client = client
        self.rng = random.Random(seed)
        self.rounds = rounds
        self.card_interval = sim.card_interval if delay is None else delay
        self.betting_time = sim.betting_time if delay is None else delay * 2
        #: Betting stays open until a person closes it (``ctl close``, the dealer panel, or ``c`` in the
        #: live view): the simulated players bet at once, then the dealer waits for the table's phase.
        self.hold_betting = hold_betting
        self.stop = threading.Event()
        self.done = threading.Event()
        #: Rounds the table ended (settled or voided) since :meth:`setup`, by its own meters: a pass whose
        #: close was refused (the shoe out, a tilt) ended none, so ``--rounds N`` is N rounds played.
        self.played = 0
        self.error: BaseException | None = None

    def call(self, cmd: str, **fields: Any) -> dict[str, Any]:
        reply = self.client.call(cmd, **fields)
        if not reply.get("ok") and not reply.get("refused"):
            raise DemoError(f"{cmd} {fields}: {reply.get('error')}")
        return reply

    def run(self) -> None:
        try:
            self.setup()
            before = sum(rounds_ended(self.call("meters")))
            while not self.stop.is_set() and (self.rounds is None or self.played < self.rounds):
                self.play_round()
                self.played = sum(rounds_ended(self.call("meters"))) - before
                self.stop.wait(self.betting_time)
        except BaseException as exc:  # reported by the foreground
            self.error = exc
        finally:
            self.done.set()

    def press(self, owner: int | str, word: str) -> bool:
        """Press a panel button if the table has it (True), else leave it to the caller (False)."""
        if self.control is None:
            return False
        if owner == "dealer":
            panel = None if self.dealer_map is None else self.dealer_map.dealer
            if panel is None or word not in panel.buttons:
                return False
        else:
            pin_map = self.seat_maps.get(int(owner))
            if pin_map is None or word not in pin_map.seats[int(owner)].buttons:
                return False
        self.control.call(f"press {owner} {word}")
        return True

    def dealer(self, word: str, cmd: str) -> None:
        """A dealer action: its button on the dealer panel, or the command when there is no button."""
        if not self.press("dealer", word):
            self.call(cmd, by="dealer")

    def setup(self) -> None:
        for player in self.sim.players:
            self.call("credit_in", seat=player.seat, amount=player.credits, by="cashier")
        if self.sim.dp is not None:
            self.call("set_dp", seat=self.sim.dp, by="dealer")
        if self.control is not None:  # the simulated panels are plugged in (presence loops closed)
            for seat, pin_map in sorted(self.seat_maps.items()):
                if pin_map.seats[seat].presence is not None:
                    self.control.call(f"plug {seat}")
            panel = None if self.dealer_map is None else self.dealer_map.dealer
            if panel is not None and panel.presence is not None:
                self.control.call("plug dealer")
        # Started again on a table a stray card left tilted: a tilted table refuses ``new_shoe``, and it
        # would count this freshly shuffled shoe's cards against the old one's.
        self.clear_stray_tilt()
        self.dealer("new_shoe", "new_shoe")

    def bet(self, seat: int, spot: str, amount: int) -> None:
        """Chips on a spot's sensor after keying in ``amount`` on the seat's panel; else the command."""
        pin_map = self.seat_maps.get(seat)
        lim = self.config.limits
        if self.control is not None and pin_map is not None and spot in pin_map.seats[seat].spots:
            selected = json.loads(self.control.call(f"selected {seat}"))[spot]
            keys = presses_for(selected, amount, pin_map.seats[seat].buttons, lim.unit, lim.min_bet,
                               pin_map.bet_step)
            if keys is not None and lim.min_bet <= amount <= lim.max_bet:
                for word in keys:
                    if self.stop.is_set():
                        return
                    self.control.call(f"press {seat} {word}")
                self.control.call(f"chips {seat} {spot} on")
                self.covered.add((seat, spot))
                return
        self.call("bet", seat=seat, spot=spot, amount=amount, by=f"seat {seat}")

    def play_round(self) -> None:
        self.clear_stray_tilt()
        # Betting still open: the last pass could not close it (the shoe out, a tilt). The players' chips
        # stand as they are (a wager placed again would add to the one on the spot), and the dealer
        # tries the close again.
        still_open = self.call("status")["phase"] == "betting"
        if self.control is not None and not still_open:  # the last round's chips come off first
            for seat, spot in sorted(self.covered):
                self.control.call(f"chips {seat} {spot} off")
            self.covered.clear()
        if self.shoe.remaining < self.sim.cut_card:
            self.shoe.shuffle()
            self.dealer("new_shoe", "new_shoe")
        if not still_open:
            self.dealer("open_betting", "open")
            self.players_bet()
        self.close_and_deal()

    def players_bet(self) -> None:
        """Each simulated player (not the Designated Player) bets, or sits the round out."""
        state = self.call("snapshot")["state"]
        dp = state["game_state"].get("dp_seat")
        for player in self.sim.players:
            if player.seat == dp or self.rng.random() < player.sit_out:
                continue
            pick = self.rng.randrange(max(len(a) for a in player.bets.values()))
            for spot, amounts in player.bets.items():
                self.bet(player.seat, spot, amounts[min(pick, len(amounts) - 1)])
            for spot, chance in player.extras.items():
                if self.rng.random() < chance:
                    self.bet(player.seat, spot, self.config.limits.min_bet)

    def close_and_deal(self) -> None:
        """Close betting (or wait for a person to), then deal each due card and make each due decision."""
        if self.hold_betting:
            while not self.stop.is_set() and self.call("status")["phase"] == "betting":
                self.stop.wait(0.2)
        else:
            self.stop.wait(self.betting_time)
            self.dealer("close_betting", "close")
        while not self.stop.is_set():
            status = self.call("status")
            if status["phase"] != "dealing":
                return
            if status["tilt"] is not None:
                self.dealer("void", "void")
                continue
            due = status["due"] or {}
            if "card" in due and self.shoe.mode == "dealing_shuffler":
                self.wait_past(status["seq"])  # the daemon sent DISPENSE; the shuffler deals the card
            elif "card" in due:
                self.stop.wait(self.card_interval)
                try:
                    if self.shoe.mode == "camera":
                        cast("SimulatedCamera", self.shoe).deal(self.camera_saw_empty)
                    else:
                        self.shoe.deal()
                except SimError:  # the shoe ran out mid-round: a real dealer would void and reshuffle
                    self.dealer("void", "void")
                    continue
                self.wait_past(status["seq"])
            elif "decision" in due:
                self.stop.wait(self.card_interval)
                seat, actions = self.rng.choice(sorted(due["decision"].items()))
                action = self.rng.choice(actions)
                if not self.press(int(seat), action):
                    self.call("decide", seat=int(seat), action=action, by=f"seat {seat}")

    def clear_stray_tilt(self) -> None:
        """Between rounds, a tilt the dealer resolves as a real one would: a card that came out of the shoe
        when none was due (the card drawn while the shoe was pulled arrives when it is plugged in again)
        is burned (and each card held behind it), a card that cannot be in the shoe cleared (the panel's
        ``confirm``), and only another tilt voided: with betting open a void would return every wager of
        a round nothing is wrong with. A held card the table refuses to burn (it cannot be in the shoe)
        is taken, then cleared. A tilt that outlasts all that is a DemoError, not a demo that silently
        never deals again. A tilt mid-deal is the deal loop's: it voids the round."""
        last: dict[str, Any] | None = None
        for _ in range(3 * MAX_HELD + 2):  # the stray card's burn; each held one's (refused: take, clear)
            status = self.call("status")
            tilt = status["tilt"]
            if tilt is None or status["phase"] == "dealing":
                return
            word, cmd = STRAY_TILT_ACTIONS.get(tilt["reason"], ("void", "void"))
            if tilt == last and tilt["reason"] == "held_card":  # its burn was refused: take it
                word, cmd = "confirm", "take"
            last = tilt
            self.dealer(word, cmd)
        raise DemoError(f"the table stays tilted between rounds: {last}")

    def camera_saw_empty(self) -> None:
        """Before the next card goes in the camera's window, wait until the table's camera has read
        the window empty (its stable frames and one more), as a dealer watches the table between two
        cards: else two identical cards in a row (an 8-deck shoe has them) are read as one card still
        lying there, and the round waits for a card the table never saw."""
        from vision.camera_sim import wait_frames_read  # OpenCV only for a camera table

        camera = self.config.camera
        stable = camera.spec.stable_frames if camera is not None else 1

        def frames() -> int:
            return int((self.call("status").get("camera") or {}).get("frames", 0))

        read = wait_frames_read(frames, stable + 1, timeout=30.0, stop=self.stop.is_set)
        if not read and not self.stop.is_set():
            raise DemoError("the table's camera did not read the empty window within 30 s")

    def wait_past(self, seq: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while self.call("ping")["seq"] <= seq:
            if time.monotonic() > deadline or self.stop.is_set():
                if self.stop.is_set():
                    return
                raise DemoError(f"the daemon did not take the dealt card within {timeout} s")
            time.sleep(0.01)

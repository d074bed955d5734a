"""``croupier scenario FILE --through-daemon``: a scenario played through the whole shell.

The daemon runs in-process on its own loop and thread, with its real
journal (a temporary state dir), its real ZeroMQ sockets (ipc:// endpoints
in the temporary dir) and the real :class:`drivers.shoe.ShoeReader` reading
a :class:`drivers.shoe.sim.SimulatedShoe` over a real pty, and the real GPIO
panel driver on gpiozero's mock pins (a generated pin map per seat with every
decision button, ``bet_up``/``bet_down`` and a chip sensor per spot, and a
dealer panel). Cards go through the simulated shoe; the dealer's inputs
(open, close, burn, void, new shoe, confirm) are dealer-panel presses; a bet
is entered as a player would, with the fewest key presses (``clear_bet``, the
chip keys ``add_100``/``add_25``/``add_5``, ``bet_up``), then chips on the spot's
sensor (lifting them cancels it); every decision is a press of the seat's
button (``bet_2x`` for a 2WayWinner bet of twice the ante). What buttons
cannot say goes through the command socket: credits, the Designated Player,
a bet amount the buttons cannot select, a decision with an explicit amount
other than the button's. Events are read back from a SUB socket (snapshot
first). Each input's presses and chips are driven as fast as the pins take
them and the harness then waits once, for the panel to have taken them all
(:meth:`Panel.flush`, which wakes on the panel's worker, never polls). A mirror
table, fed the same
inputs, chooses each next input (:func:`controller.scenario.round_inputs`)
and says what the daemon must publish, so every event is checked, and the
printed lines (``table`` and ``seq`` removed) are byte-identical to the
engine-only run.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from controller import inputs as I
from controller.daemon.client import CommandClient, Subscriber, local_key
from controller.daemon.config import GpioSpec, LimitsSpec, TableConfig, TableFile, ZmqSpec
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.games import GAMES
from controller.panels.link import PanelLink
from controller.panels.pinmaps import parse_pin_map
from controller.panels.view import BET_2X_ANTE, DEALER_INPUTS
from controller.scenario import Scenario, ScenarioError, round_inputs
from controller.table import Table
from drivers.gpio import PinMap, SimulatedPins
from drivers.gpio.betkeys import presses_for
from drivers.gpio.pinmap import BCM_RANGE, BET_2X, InputPin
from drivers.shoe import ShoeProfile
from drivers.shoe.sim import SimulatedShoe

log = logging.getLogger("croupier.scenario")

#: Seconds to wait for the events of one input before calling the run failed.
EVENT_TIMEOUT = 15.0
#: The chip-denomination keys of the generated seat panels (table units), as on a real bet panel.
CHIP_KEYS = (5, 25, 100)


def command_for(inp: I.Input) -> dict[str, Any]:
    """The operator command that carries ``inp`` (cards excepted: the shoe deals those)."""
    match inp:
        case I.OpenBetting():
            return {"cmd": "open"}
        case I.CloseBetting():
            return {"cmd": "close"}
        case I.NewShoe():
            return {"cmd": "new_shoe"}
        case I.DeclareBurn():
            return {"cmd": "burn", "by": "dealer"}
        case I.PlaceWager(seat=seat, spot=spot, amount=amount):
            return {"cmd": "bet", "seat": seat, "spot": spot, "amount": amount, "by": "dealer"}
        case I.CancelWager(seat=seat, spot=spot):
            return {"cmd": "cancel", "seat": seat, "spot": spot, "by": "dealer"}
        case I.Decision(seat=seat, action=action, amount=amount):
            return {"cmd": "decide", "seat": seat, "action": action, "amount": amount}
        case I.CreditIn(seat=seat, amount=amount):
            return {"cmd": "credit_in", "seat": seat, "amount": amount}
        case I.SetDesignatedPlayer(seat=seat):
            return {"cmd": "set_dp", "seat": seat}
    return {"cmd": "input", "input": inp.to_dict()}


def seat_map(game: str, seat: int) -> PinMap:
    """One header for one seat: every button of the game (no lamps: 2WayWinner's 14 buttons and 3
    sensors fit only without them) and a sensor per spot; 0 ms debounce, since these contacts never
    bounce and the runner waits for each input's events anyway."""
    cls = GAMES[game]
    words = [*cls.actions, "bet_up", "bet_down", "clear_bet", *(f"add_{u}" for u in CHIP_KEYS),
             *([BET_2X] if "bet" in cls.actions else [])]
    pins = iter(BCM_RANGE)
    return parse_pin_map({
        "game": game, "debounce_ms": 0,
        "seats": {seat: {"buttons": {w: {"pin": next(pins)} for w in words},
                         "spots": {s: {"sensor": next(pins)} for s in cls.bet_spots}}},
    }, f"<seat {seat} map>", game)


def dealer_map() -> PinMap:
    words = list(DEALER_INPUTS)
    buttons = {w: {"pin": 2 + i} for i, w in enumerate(words)}
    return parse_pin_map({"debounce_ms": 0, "dealer": {"buttons": buttons}}, "<dealer map>")


def without_debounce(pin_map: PinMap) -> PinMap:
    """The same lines with 0 ms settle time: the harness's contacts never bounce, and a press it
    drives and releases at once must not be filtered as a bounce (it waits for each input anyway)."""
    def zero(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: (None if k == "debounce_ms" else zero(v)) for k, v in node.items()}
        return node

    data = zero(pin_map.model_dump())
    data["debounce_ms"] = 0  # the map's default, which every pin now takes
    return PinMap.model_validate(data)


def table_panels(scenario: Scenario, table: TableConfig) -> tuple[tuple[str, PinMap], ...]:
    """``table``'s own pin maps (its chips and lines), for a scenario of the same game and seats."""
    if table.spec.game != scenario.spec.game:
        raise ScenarioError(0, f"{table.path} plays {table.spec.game}, the scenario {scenario.spec.game}")
    seats = max((s for _, m in table.panels for s in m.seats), default=0)
    if seats > scenario.limits.seats:
        raise ScenarioError(0, f"{table.path} wires a panel for seat {seats}; the scenario's table has "
                               f"{scenario.limits.seats} seats")
    if table.spec.gpio is None:
        raise ScenarioError(0, f"{table.path} has no gpio section: no panels to press")
    return tuple((name, without_debounce(pin_map)) for name, pin_map in table.panels)


def scenario_config(scenario: Scenario, source: str, work: Path, profile: ShoeProfile,
                    table: TableConfig | None = None) -> TableConfig:
    """A table config equal to the scenario's table, with endpoints, state and panels in ``work``.

    ``table``: play on that table file's pin maps and simulated expanders instead of generated maps.
    """
    limits = scenario.limits
    spec = TableFile(
        table="scenario",
        game=scenario.spec.game,
        options=dict(scenario.spec.options),
        seats=limits.seats,
        limits=LimitsSpec(unit=limits.unit, min_bet=limits.min_bet, max_bet=limits.max_bet),
        zeromq=ZmqSpec(
            pub=f"ipc://{work}/pub", snapshot=f"ipc://{work}/snapshot", command=f"ipc://{work}/command"
        ),
        state_dir=str(work / "state"),
        gpio=GpioSpec(backend="mock") if table is None or table.spec.gpio is None else
        # A real table's very maps and expanders run simulated too; no control socket (the harness drives).
        table.spec.gpio.model_copy(update={"backend": "mock", "control": None}),
    )
    game = scenario.spec.game
    panels = table_panels(scenario, table) if table is not None else (
        ("dealer", dealer_map()), *((f"seat {s}", seat_map(game, s)) for s in range(1, limits.seats + 1)))
    state = work / "state"
    return TableConfig(Path(source), spec, scenario.game.options, limits, profile, None, state, panels)


class ThroughDaemon:
    """The harness: a daemon on a thread, a simulated shoe on a pty, a command client, a subscriber."""

    def __init__(self, scenario: Scenario, source: str, work: Path, table: TableConfig | None = None) -> None:
        self.scenario = scenario
        self.shoe = SimulatedShoe("v1", seed=0)
        port = self.shoe.open_pty(work / "shoe")
        profile = ShoeProfile.model_validate(
            {
                "port": port,
                "protocol": "v1",
                "baud": 115200,
                "heartbeat_timeout": 3.0,
                "reconnect": {"initial": 0.05, "max": 0.5},
            }
        )
        self.config = scenario_config(scenario, source, work, profile, table)
        self.daemon = Daemon(self.config)
        self.thread = DaemonThread(self.daemon)
        spec = self.config.spec.zeromq
        self.client = CommandClient(spec.command, timeout=EVENT_TIMEOUT, key=local_key(self.config))
        self.sub: Subscriber | None = None
        self._events: Iterator[tuple[str, dict[str, Any]]] | None = None
        #: seat (0: the dealer panel) -> its panel and mock pins, once the daemon has opened them.
        self.headers: dict[int, tuple[PanelLink, SimulatedPins]] = {}
        #: Spots with chips on their sensor (they must come off before betting opens again).
        self.covered: set[tuple[int, str]] = set()
        #: The header (seat; 0: dealer) with contacts driven and not yet waited for.
        self._driving: int | None = None
        #: How the inputs went: by panel, or by command per input kind (a summary for the curious).
        self.routes: dict[str, int] = {"panel": 0, "command": 0}
        self.by_command: dict[str, int] = {}

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + EVENT_TIMEOUT
        while not (self.client.call("status").get("shoe_device") or {}).get("connected"):
            if time.monotonic() > deadline:
                raise ScenarioError(0, "the daemon's shoe reader did not connect to the simulated shoe")
            time.sleep(0.02)
        gpio = self.daemon.gpio
        assert gpio is not None
        for (_, pin_map), panel, pins in zip(self.config.panels, gpio.panels, gpio.pins, strict=True):
            for seat in [*pin_map.seats, *([0] if pin_map.dealer is not None else [])]:
                self.headers[seat] = (panel, pins)
        spec = self.config.spec.zeromq
        self.sub = Subscriber(spec.pub, spec.snapshot, self.config.table_id)
        self._events = self.sub.events(timeout=EVENT_TIMEOUT)
        kind, _ = next(self._events)
        assert kind == "snapshot"

    def close(self) -> None:
        self.client.close()
        if self.sub is not None:
            self.sub.close()
        try:
            self.thread.stop()
        finally:
            self.shoe.close()

    def send(self, inp: I.Input) -> None:
        if isinstance(inp, I.CardSeen):
            self.shoe.deal(inp.card, burn=inp.burn)
            return
        if self.by_panel(inp):
            self.routes["panel"] += 1
            self._settle()  # wait once, after the whole input was keyed in
            return
        self.routes["command"] += 1
        kind = str(inp.to_dict()["input"])
        self.by_command[kind] = self.by_command.get(kind, 0) + 1
        reply = self.client.call(**command_for(inp))
        if not reply.get("ok") and not reply.get("refused"):
            raise ScenarioError(0, f"the daemon rejected {inp.to_dict()}: {reply.get('error')}")

    # --------------------------------------------------------------- fingers on the mock pins
    def _drive(self, seat: int, spec: InputPin, active: bool) -> None:
        """Drive a contact without waiting: one panel takes its edges in order (0 ms debounce).

        Two panels are two workers, so before a contact on another header the
        last one is waited for (chips lifted before the dealer opens betting).
        """
        if self._driving is not None and self._driving != seat:
            self._settle()
        self._driving = seat
        panel, pins = self.headers[seat]
        pins.drive(spec.pin, active == (spec.active == "high"), panel.map.chip_of(spec))

    def _settle(self) -> None:
        """Wait until the header driven last has taken every edge (see :meth:`Panel.flush`)."""
        if self._driving is not None and not self.headers[self._driving][0].flush(EVENT_TIMEOUT):
            raise ScenarioError(0, f"the panels did not take the pins within {EVENT_TIMEOUT} s")
        self._driving = None

    def press(self, seat: int, word: str) -> None:
        pin_map = self.headers[seat][0].map
        panel = pin_map.dealer if seat == 0 else pin_map.seats[seat]
        assert panel is not None
        spec = panel.buttons[word]
        self._drive(seat, spec, True)
        self._drive(seat, spec, False)

    def chips(self, seat: int, spot: str, on: bool) -> None:
        self._drive(seat, self.headers[seat][0].map.seats[seat].spots[spot].sensor, on)
        (self.covered.add if on else self.covered.discard)((seat, spot))

    def by_panel(self, inp: I.Input) -> bool:
        """Send ``inp`` as presses and chips if the panels can say exactly it; False if they cannot."""
        if isinstance(inp, I.OpenBetting):
            for seat, spot in sorted(self.covered):  # last round's chips come off first (no auto-bet)
                self.chips(seat, spot, False)
        for word, cls in DEALER_INPUTS.items():
            if inp == cls():
                self.press(0, word)
                return True
        lim = self.config.limits
        seat = getattr(inp, "seat", 0)
        if seat not in self.headers or not self.headers[seat][0].map.seats.get(seat):
            return False  # no panel for it (a seat the table has not): the command, refused with its reason
        if isinstance(inp, I.PlaceWager) and (inp.seat, inp.spot) not in self.covered:
            panel = self.headers[inp.seat][0]
            if inp.spot not in panel.map.seats[inp.seat].spots:
                return False  # a spot the panel has no sensor for: the command, refused with its reason
            keys = presses_for(panel.selected(inp.seat, inp.spot), inp.amount,
                               panel.map.seats[inp.seat].buttons, lim.unit, lim.min_bet, panel.map.bet_step)
            if keys is None or not lim.min_bet <= inp.amount <= lim.max_bet:
                return False
            for word in keys:
                self.press(inp.seat, word)
            self.chips(inp.seat, inp.spot, True)
            return True
        if isinstance(inp, I.CancelWager) and (inp.seat, inp.spot) in self.covered:
            self.chips(inp.seat, inp.spot, False)
            return True
        if isinstance(inp, I.Decision):
            if inp.amount is None:
                self.press(inp.seat, inp.action)
                return True
            ante = self.headers[inp.seat][0].logic.view.wagers.get((inp.seat, BET_2X_ANTE), 0)
            if inp.action == "bet" and inp.amount == 2 * ante:
                self.press(inp.seat, BET_2X)
                return True
        return False

    def receive(self, count: int) -> list[dict[str, Any]]:
        assert self._events is not None
        out = []
        for _ in range(count):
            try:
                kind, payload = next(self._events)
            except StopIteration:
                raise ScenarioError(0, f"no event from the daemon within {EVENT_TIMEOUT} s") from None
            if kind != "event":
                raise ScenarioError(0, f"subscriber had to re-sync (gap in seq) at seq {payload['seq']}")
            out.append(payload)
        return out


def strip(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k not in ("table", "seq")}


def run_through_daemon(scenario: Scenario, source: str, out: TextIO, settled_only: bool,
                       table: TableConfig | None = None) -> None:
    """Play every round through a daemon, writing the engine-only run's lines; ScenarioError on failure.

    ``table``: on that table file's pin maps and simulated expanders (``--table``).
    """
    logging.getLogger("croupier").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="croupier-scenario-") as tmp:
        harness = ThroughDaemon(scenario, source, Path(tmp), table)
        harness.start()
        try:
            _play(harness, scenario, out, settled_only)
        finally:
            harness.close()
        log.info("%s: %d inputs by panel, %d by command %s", source, harness.routes["panel"],
                 harness.routes["command"], harness.by_command)


def _play(h: ThroughDaemon, scenario: Scenario, out: TextIO, settled_only: bool) -> None:
    mirror = scenario.new_table()
    seat_credits(h, scenario)
    for n, spec in enumerate(scenario.spec.rounds, start=1):
        for inp in round_inputs(mirror, spec, n, first=n == 1):
            play_input(h, mirror, inp, n, out, settled_only)
        out.flush()


def seat_credits(h: ThroughDaemon, scenario: Scenario) -> None:
    """The scenario's players take their seats (the engine-only run seats them silently: not printed).

    A seat listed with 0 credits is seated by one minor unit in and out again, as a player who bought in
    and cashed out stays seated: the daemon takes no ``credit_in`` of 0 (docs/rules/common.md), and the
    seat must be there all the same (a Designated Player rotates onto it, and covers nothing)."""
    for seat, amount in sorted(scenario.spec.credits.items()):
        for inp in (I.CreditIn(seat, amount),) if amount else (I.CreditIn(seat, 1), I.CreditOut(seat, 1)):
            h.send(inp)
            h.receive(1)


def play_input(h: ThroughDaemon, mirror: Table, inp: I.Input, round_no: int, out: TextIO,
               settled_only: bool) -> None:
    """Apply ``inp`` to the mirror, send it to the daemon: its events must be the mirror's, byte for byte."""
    expected = [e.to_dict() for e in mirror.apply(inp)]
    h.send(inp)
    got = [strip(p) for p in h.receive(len(expected))]
    for want, have in zip(expected, got, strict=True):
        if json.dumps(want) != json.dumps(have):
            raise ScenarioError(
                round_no, f"the daemon published {json.dumps(have)}, the engine {json.dumps(want)}"
            )
        if not settled_only or have["event"] == "round_settled":
            out.write(json.dumps(have) + "\n")
        if have["event"] == "refused":
            raise ScenarioError(round_no, have["reason"])
        if have["event"] == "tilt":
            raise ScenarioError(round_no, f"tilt ({have['reason']}): {have['detail']}")

"""The daemon hosting GPIO panels: table-file checks, presses through the journal, faults, lamps, order.

Everything is real: table files in tmp_path, the daemon on a thread with its
journal and ipc:// sockets, the panel driver over gpiozero's MockFactory
(the simulated hardware), driven over the daemon's control socket the way
``croupier sim panel`` and the demo drive it, or through the mock pins.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpiozero.pins.mock import MockFactory, MockPin  # type: ignore[import-untyped, unused-ignore]
from test_daemon_support import journal_inputs, write_table

from controller.cli import main
from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import load_table
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.games import GAMES
from controller.simulation.shoe_shuffle import ShuffledShoe
from drivers.gpio.control import ControlClient

MOCK = {"backend": "mock", "control": "tcp://127.0.0.1:0"}


class Table:
    """A daemon on a thread with its command client and a control client on its panels."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.config = load_table(path)
        self.daemon = Daemon(self.config, use_shoe=False)
        self.thread = DaemonThread(self.daemon).start()
        self.cmd = CommandClient(self.config.spec.zeromq.command, timeout=15, key=local_key(self.config))
        assert self.daemon.gpio is not None
        endpoint = self.daemon.gpio.control_endpoint
        assert endpoint is not None
        self.ctl = ControlClient(endpoint)

    def call(self, cmd: str, **fields: Any) -> dict[str, Any]:
        return self.cmd.call(cmd, **fields)

    def status(self) -> dict[str, Any]:
        return self.call("status")

    def lamps(self) -> dict[str, dict[str, Any]]:
        answer: dict[str, dict[str, Any]] = json.loads(self.ctl.call("lamps"))
        return answer

    def sources(self) -> list[tuple[str, dict[str, Any]]]:
        return journal_inputs(self.config.state_dir)

    def close(self) -> None:
        self.ctl.close()
        self.cmd.close()
        self.thread.stop()


def stable(status: dict[str, Any]) -> dict[str, Any]:
    """The table's state in a status reply, without what changes with every input (seq, rows, time)."""
    moving = ("seq", "journal", "uptime", "gpio", "shoe_device", "selftest")
    return {k: v for k, v in status.items() if k not in moving}


# ------------------------------------------------------------------ the table file


@pytest.mark.timeout(30)
def test_bad_pin_map_refuses_to_start_naming_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad_panel.yaml"
    bad.write_text(yaml.safe_dump({"game": "swap_hand", "seats": {1: {"buttons": {"fly": {"pin": 4}}}}}))
    path = write_table(tmp_path, game="swap_hand", panels=["bad_panel.yaml"], gpio={"backend": "mock"})
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: key 'panels.0': {bad}: key 'seats.1.buttons.fly': unknown action 'fly'" in err
    assert not (tmp_path / "t1-state").exists()  # refused before the journal was opened

    for panels, gpio, key, why in [
        (["baccarat.yaml"], {"backend": "mock"}, "panels.0",
         "the map is for baccarat, the table plays swap_hand"),
        (["swap_hand.yaml"], None, "gpio", "panels need a gpio section"),
        (["swap_hand.yaml", "swap_hand.yaml"], {"backend": "mock"}, "panels",
         "seats.1: also in panels.0"),
        (["nowhere.yaml"], {"backend": "mock"}, "panels.0", "no file 'nowhere.yaml'"),
        ([{"map": "swap_hand.yaml", "seats": {1: 9}}], {"backend": "mock"}, "panels.0.map",
         "seat 9 is not a seat of this table"),
        (["swap_hand.yaml"], {"backend": "lgpio", "control": "tcp://127.0.0.1:0"}, "gpio.control",
         "a control socket drives mock pins only"),
        (["swap_hand.yaml"], {"backend": "mock", "control": "tcp://10.0.0.1:7000"}, "gpio.control",
         "must be on loopback"),
    ]:
        extra: dict[str, Any] = {"panels": panels} | ({"gpio": gpio} if gpio else {})
        path = write_table(tmp_path, game="swap_hand", **extra)
        assert main(["run", str(path)]) == 2
        err = capsys.readouterr().err
        assert f"{path}: key '{key}': " in err and why in err, (panels, err)



@pytest.mark.timeout(30)
def test_gpio_control_without_mock_panels_is_an_error_not_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for extra, why in [
        ({}, "has no gpio section, so there are no panel pins to control"),
        ({"panels": ["swap_hand.yaml"], "gpio": {"backend": "lgpio"}},
         "has gpio.backend lgpio; a control socket drives mock pins only"),
        ({"panels": ["swap_hand.yaml"], "gpio": {"backend": "mock"}, "__endpoint": "tcp://10.0.0.1:7000"},
         "control endpoint must be on loopback"),
    ]:
        endpoint = extra.pop("__endpoint", "tcp://127.0.0.1:7000")
        path = write_table(tmp_path, game="swap_hand", **extra)
        assert main(["run", str(path), "--gpio-control", endpoint]) == 2
        err = capsys.readouterr().err
        assert f"croupier run: --gpio-control {endpoint}: " in err and why in err, err
        assert str(path) in err or "loopback" in why
        assert not (tmp_path / "t1-state").exists()  # refused before the journal was opened

# --------------------------------------------------------- one decision path


def swap_hand_table(tmp_path: Path) -> Table:
    path = write_table(tmp_path, game="swap_hand", limits={"unit": 100, "min_bet": 200, "max_bet": 100_000},
                       panels=["dealer.yaml", "swap_hand.yaml", {"map": "swap_hand.yaml", "seats": {1: 2}}],
                       gpio=MOCK)
    t = Table(path)
    for seat in (1, 2):
        assert t.call("credit_in", seat=seat, amount=100_000)["ok"]
        t.ctl.call(f"plug {seat}")  # the mock presence loops start open: the panels "plugged in"
    t.ctl.call("press dealer new_shoe")
    return t


def deal_until_decision(t: Table, shoe: ShuffledShoe) -> dict[str, list[str]]:
    for _ in range(40):
        due = t.status()["due"] or {}
        if "decision" in due:
            return dict(due["decision"])
        assert "card" in due, due
        assert t.call("card", card=str(shoe.draw()))["ok"]
    raise AssertionError("no decision due after 40 cards")


@pytest.mark.timeout(60)
def test_press_from_the_wrong_seat_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    t = swap_hand_table(tmp_path)
    try:
        t.ctl.call("press dealer open_betting")
        t.ctl.call("chips 1 main on")
        t.ctl.call("chips 2 main on")
        t.ctl.call("press dealer close_betting")
        shoe = ShuffledShoe(6, 3, 0)
        due = deal_until_decision(t, shoe)
        acting = int(next(iter(due)))
        other = 2 if acting == 1 else 1
        before = t.status()
        action = due[str(acting)][0]
        t.ctl.call(f"press {other} {action}")
        after = t.status()
        assert after["seq"] == before["seq"] + 1
        assert stable(after) == stable(before)
        last = t.call("recall", n=1)["rounds"][-1]["inputs"][-1]
        assert last["source"] == f"gpio seat {other} {action}"
        # ... and the seat to act, pressing the same button, is taken: the same input a command makes.
        t.ctl.call(f"press {acting} {action}")
        decision = t.call("recall", n=1)["rounds"][-1]["decisions"][-1]
        assert (decision["seat"], decision["action"]) == (acting, action)
        sources = [s for s, _ in t.sources()]
        assert sources[-2:] == [f"gpio seat {other} {action}", f"gpio seat {acting} {action}"]
    finally:
        t.close()


# ----------------------------------------------------- chips moved after the close


@pytest.mark.timeout(60)
def test_chips_moved_after_close_is_a_journaled_fault_that_survives_a_restart(tmp_path: Path) -> None:
    path = write_table(tmp_path, panels=["baccarat.yaml"], gpio=MOCK)
    t = Table(path)
    try:
        t.call("credit_in", seat=1, amount=100_000)
        t.ctl.call("press dealer new_shoe")
        t.ctl.call("press dealer open_betting")
        t.ctl.call("press 1 bet_up")
        t.ctl.call("chips 1 banker on")
        t.ctl.call("press dealer close_betting")
        before = t.status()
        assert before["wagers"] == [{"seat": 1, "spot": "banker", "amount": 200}]
        t.ctl.call("chips 1 banker off")
        after = t.status()
        assert after["wagers"] == before["wagers"] and after["credits"] == before["credits"]
        assert after["offline"] == {"panel 1": "chips moved after no more bets: banker chips lifted"}
        assert after["tilt"]["reason"] == "device_offline"
        assert t.sources()[-1] == ("gpio panel 1", {
            "input": "device", "device": "panel 1", "online": False,
            "detail": "chips moved after no more bets: banker chips lifted"})
        assert t.lamps()["tower fault"]["mode"] == "fault"
    finally:
        t.close()
    t = Table(path)  # the restart: the journal replayed, the fault and the tilt still there
    try:
        again = t.status()
        assert stable(again) == stable(after)
        assert t.lamps()["tower fault"]["mode"] == "fault"
        t.ctl.call("press dealer void")  # the dealer voids: the wager comes back, the panel is cleared
        done = t.status()
        assert done["phase"] == "idle" and done["tilt"] is None and done["offline"] == {}
        assert done["credits"] == {"1": 100_000}
    finally:
        t.close()


# ---------------------------------------------------------------- simultaneous presses


@pytest.mark.timeout(60)
def test_simultaneous_presses_from_two_seats_arrive_in_order(tmp_path: Path) -> None:
    two_seats = tmp_path / "two_seats.yaml"
    two_seats.write_text(yaml.safe_dump({"game": "swap_hand", "seats": {
        1: {"buttons": {"hit": {"pin": 4}, "stand": {"pin": 5}}},
        2: {"buttons": {"hit": {"pin": 6}, "stand": {"pin": 7}}}}}))
    path = write_table(tmp_path, game="swap_hand", panels=["two_seats.yaml"], gpio=MOCK)
    t = Table(path)
    try:
        assert t.daemon.gpio is not None
        panel, pins = t.daemon.gpio.panels[0], t.daemon.gpio.pins[0]
        expected = []
        for i in range(10):
            first, second = ((4, "1 hit"), (6, "2 hit")) if i % 2 == 0 else ((7, "2 stand"), (5, "1 stand"))
            pins.drive(first[0], False)  # active low: both contacts close within microseconds
            pins.drive(second[0], False)
            assert panel.flush()  # held past the debounce time: two presses
            pins.drive(first[0], True)
            pins.drive(second[0], True)
            assert panel.flush()
            expected += [f"gpio seat {first[1]}", f"gpio seat {second[1]}"]
        t.call("ping")  # the loop has run every post queued before this request
        assert [s for s, _ in t.sources()] == expected
    finally:
        t.close()


# ------------------------------------------------------------- lamps tell the truth


PREFER = ("stand", "keep", "check", "extend", "dp_extend", "poker", "blackjack")
SIM = {"baccarat": "baccarat_sim.yaml", "one_card_poker": "one_card_poker_sim.yaml",
       "swap_hand": "swap_hand_sim.yaml", "two_way_winner": "two_way_winner_sim.yaml"}
TABLES = Path(__file__).resolve().parents[1] / "firmware_configs" / "tables"


def check_lamps(t: Table, seats: list[int]) -> None:
    """Every lamp against the table's state: decisions blink iff legal now, spots lit iff staked, tower."""
    status, lamps = t.status(), t.lamps()
    due = (status["due"] or {}).get("decision", {})
    staked = {(w["seat"], w["spot"]) for w in status["wagers"]}
    game = GAMES[status["game"]]
    for seat in seats:
        for word in game.actions:
            mode = lamps.get(f"seat {seat} {word}", {}).get("mode")
            if mode is not None:
                want = "blink" if word in due.get(str(seat), []) else "off"
                assert mode == want, (seat, word, status["due"])
        for spot in game.bet_spots:
            lamp = lamps.get(f"seat {seat} spot {spot}")
            if lamp is not None:
                assert lamp["mode"] == ("on" if (seat, spot) in staked else "off"), (seat, spot)
                assert lamp["lit"] == ((seat, spot) in staked)
    phase = status["phase"]
    tower = (("idle", phase == "idle"), ("betting", phase == "betting"), ("in_play", phase == "dealing"))
    for name, lit in tower:
        assert lamps[f"tower {name}"] == {"mode": "on" if lit else "off", "lit": lit}, (name, phase)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("game", sorted(SIM))
def test_lamps_on_the_mock_pins_follow_a_round(tmp_path: Path, game: str) -> None:
    data = yaml.safe_load((TABLES / SIM[game]).read_text())
    sim = data.pop("simulation")
    data.pop("shoe")
    data["panels"] = [_absolute(p) for p in data["panels"]]
    data["gpio"]["control"] = "tcp://127.0.0.1:0"
    data["zeromq"] = {k: f"ipc://{tmp_path}/{k}" for k in ("pub", "snapshot", "command")}
    data["state_dir"] = str(tmp_path / "state")
    path = tmp_path / "table.yaml"
    path.write_text(yaml.safe_dump(data))
    t = Table(path)
    try:
        seats = sorted({p["seat"] for p in sim["players"]})
        for seat in seats:
            t.call("credit_in", seat=seat, amount=100_000)
            if game == "swap_hand":
                t.ctl.call(f"plug {seat}")
        if sim.get("dp"):
            t.call("set_dp", seat=sim["dp"])
        t.ctl.call("press dealer new_shoe")
        check_lamps(t, seats)
        t.ctl.call("press dealer open_betting")
        check_lamps(t, seats)
        players = [s for s in seats if s != sim.get("dp")]
        spots = {"baccarat": ["banker"], "one_card_poker": ["primary"], "swap_hand": ["main"],
                 "two_way_winner": ["bj_ante", "poker_ante"]}[game]
        for seat in players:
            for spot in spots:
                t.ctl.call(f"chips {seat} {spot} on")
                check_lamps(t, seats)
        t.ctl.call("press dealer close_betting")
        check_lamps(t, seats)
        shoe = ShuffledShoe(GAMES[game](GAMES[game].options_model.model_validate({})).decks, 7, 0)
        for _ in range(80):
            due = t.status()["due"] or {}
            if "card" in due:
                assert t.call("card", card=str(shoe.draw()))["ok"]
            elif "decision" in due:
                seat, legal = next(iter(sorted(due["decision"].items())))
                action = next((a for a in PREFER if a in legal), legal[0])
                t.ctl.call(f"press {seat} {action}")
            else:
                break
            check_lamps(t, seats)
        assert t.status()["phase"] == "idle"
        check_lamps(t, seats)
    finally:
        t.close()


def _absolute(entry: str | dict[str, Any]) -> str | dict[str, Any]:
    """The sim tables' panel paths are relative to firmware_configs/tables/; the copy lives in tmp."""
    if isinstance(entry, str):
        return str((TABLES / entry).resolve())
    return {**entry, "map": str((TABLES / entry["map"]).resolve())}



# ------------------------------------------------- chips on a spot across a restart


class _HeldPin(MockPin):  # type: ignore[misc]
    """A mock input whose level the outside world holds (chips on an optical sensor) whatever its pull:
    what a real Pi reads at start on a spot that still has chips on it."""

    held: dict[int, bool] = {}

    def _set_pull(self, value: str) -> None:
        super()._set_pull(value)
        level = self.held.get(int(self.info.name.removeprefix("GPIO")))
        if level is not None:
            self._change_state(level)


def _restart_with_chips(monkeypatch: pytest.MonkeyPatch, path: Path, *held: dict[int, bool]) -> Table:
    """Start the daemon again with the same state dir, map i's sensors reading ``held[i]`` (BCM: level)."""
    import drivers.gpio.expanders as expanders_module  # map_backends makes each map's pin factory

    headers = iter(held)
    monkeypatch.setattr(expanders_module, "make_factory", lambda name: MockFactory(
        pin_class=type("Held", (_HeldPin,), {"held": next(headers)})))
    return Table(path)


BANKER, PLAYER, TIE = 26, 13, 20  # the shipped baccarat map's chip sensors (active low: chips = False)
NONE = {BANKER: True, PLAYER: True, TIE: True}


@pytest.mark.timeout(60)
def test_chips_on_the_spots_across_a_restart_are_reconciled_with_the_accepted_wagers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_table(tmp_path, gpio=MOCK, panels=[
        "baccarat.yaml", {"map": "baccarat.yaml", "seats": {1: 2}, "dealer": False, "tower": False}])
    t = Table(path)
    try:
        for seat in (1, 2):
            t.call("credit_in", seat=seat, amount=100_000)
        t.ctl.call("press dealer new_shoe")
        t.ctl.call("press dealer open_betting")
        t.ctl.call("press 1 bet_up")
        t.ctl.call("chips 1 banker on")
        t.ctl.call("chips 1 tie on")
        before = t.status()
        assert before["wagers"] == [{"seat": 1, "spot": "banker", "amount": 200},
                                    {"seat": 1, "spot": "tie", "amount": 200}]
        rows = len(t.sources())
    finally:
        t.close()
    # While the daemon is down seat 1 lifts its tie chips and seat 2 puts chips on its banker spot.
    t = _restart_with_chips(monkeypatch, path, {**NONE, BANKER: False}, {**NONE, BANKER: False})
    try:
        t.call("ping")  # every post the panels made at start has been through the loop
        after = t.status()
        new = t.sources()[rows:]
        # seat 1 banker: chips present, wager accepted -> nothing posted, nothing charged twice
        assert not any(inp.get("seat") == 1 and inp.get("spot") == "banker" for _, inp in new), new
        # seat 2 banker: chips present, no wager -> nothing placed: the keyed amount is not journaled, so it
        # is back at the minimum, and the seat's bet keys blink until it chooses (docs/wiring.md)
        assert not any(inp.get("seat") == 2 for _, inp in new), new
        assert t.lamps()["seat 2 bet_up"]["mode"] == "blink"
        assert len(new) == 1  # the fault below
        # seat 1 tie: wager accepted, no chips -> a panel fault (betting cannot close), the wager kept
        detail = "chips missing at start: tie wager 200 accepted, no chips on the spot"
        assert after["offline"] == {"panel 1": detail}
        assert after["wagers"] == before["wagers"]
        assert after["credits"] == {"1": 100_000 - 400, "2": 100_000}
        assert t.call("close").get("refused"), "betting closed with chips missing"
        assert t.lamps()["tower fault"]["mode"] == "on"
        t.ctl.call("chips 1 tie on")  # the chips back: the fault clears, the wager is not placed again
        for line in ("press 2 clear_bet", "chips 2 banker off", "chips 2 banker on"):  # seat 2 chooses, bets
            t.ctl.call(line)
        back = t.status()
        assert back["offline"] == {}
        assert back["wagers"] == [*before["wagers"], {"seat": 2, "spot": "banker", "amount": 100}]
        assert back["credits"] == {"1": 100_000 - 400, "2": 100_000 - 100}
        rows = len(t.sources())
    finally:
        t.close()
    # Restarted again with every stack where it was: not one input.
    t = _restart_with_chips(monkeypatch, path, {**NONE, BANKER: False, TIE: False}, {**NONE, BANKER: False})
    try:
        t.call("ping")
        assert len(t.sources()) == rows
        assert stable(t.status()) == stable(back)
        t.ctl.call("press dealer close_betting")
        closed = t.status()
        assert closed["phase"] == "dealing" and closed["tilt"] is None
    finally:
        t.close()
    # Restarted mid-deal with seat 2's banker chips gone: a fault (a tilt), not a silent deal.
    t = _restart_with_chips(monkeypatch, path, {**NONE, BANKER: False, TIE: False}, NONE)
    try:
        t.call("ping")
        dealing = t.status()
        assert dealing["offline"] == {
            "panel 2": "chips missing at start: banker wager 100 accepted, no chips on the spot"}
        assert dealing["tilt"]["reason"] == "device_offline"
        t.ctl.call("chips 2 banker on")
        again = t.status()
        assert again["tilt"] is None and again["offline"] == {}
    finally:
        t.close()

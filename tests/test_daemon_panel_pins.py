"""The daemon's GPIO panels at the mock pins: lamps follow a round, chips on the spots survive a restart.

Everything is real: table files in tmp_path, the daemon on a thread with its
journal and ipc:// sockets (tests/panel_support.py), the panel driver over gpiozero's
MockFactory (the simulated hardware); the lamps are read and the chip sensors held
at the mock pins, the way a real Pi's pins would show and hold them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from gpiozero.pins.mock import MockFactory, MockPin  # type: ignore[import-untyped, unused-ignore]
from panel_support import MOCK, Table, banker_bet_on_seat_1, stable
from test_daemon_support import write_table

from controller.games import GAMES
from controller.simulation.shoe_shuffle import ShuffledShoe

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
        banker_bet_on_seat_1(t, (1, 2))
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

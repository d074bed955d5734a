"""The daemon hosting GPIO panels: table-file checks, presses through the journal, faults, order.

Everything is real: table files in tmp_path, the daemon on a thread with its
journal and ipc:// sockets, the panel driver over gpiozero's MockFactory
(the simulated hardware), driven over the daemon's control socket the way
``croupier sim panel`` and the demo drive it (tests/panel_support.py). What the
mock pins show and hold (lamps, chips on the spots) is in test_daemon_panel_pins.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from panel_support import MOCK, Table, banker_bet_on_seat_1, stable, swap_hand_table
from test_daemon_support import write_table

from controller.cli import main
from controller.simulation.shoe_shuffle import ShuffledShoe
from drivers.gpio import backend

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
def test_two_seats_of_a_map_made_one_table_seat_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``seats: {1: 3, 2: 3}`` kept one of the two (a dict): the other seat's lines were never opened, its
    buttons and chips did nothing, and gpio check read the same (a helper's review, 2026-12-07)."""
    seat = {1: (4, 17), 2: (27, 22)}
    two = {"game": "baccarat",
           "seats": {n: {"buttons": {"bet_up": {"pin": b}}, "spots": {"banker": {"sensor": c}}}
                     for n, (b, c) in seat.items()}}
    (tmp_path / "two_seats.yaml").write_text(yaml.safe_dump(two))
    path = write_table(tmp_path, panels=[{"map": "two_seats.yaml", "seats": {1: 3, 2: 3}}],
                       gpio={"backend": "mock"})
    assert main(["run", str(path)]) == 2
    said = capsys.readouterr().err
    assert f"{path}: key 'panels.0.seats': two of two_seats.yaml's seats made table seat 3" in said


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
        t.until("betting open", lambda status: status["phase"] == "betting")
        t.ctl.call("chips 1 main on")
        t.ctl.call("chips 2 main on")
        t.until("both main wagers", lambda status: {(1, "main"), (2, "main")}
                <= {(w["seat"], w["spot"]) for w in status["wagers"]})
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
        banker_bet_on_seat_1(t, (1,))
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


@pytest.mark.timeout(60)
def test_a_topped_up_wagers_chips_lifted_mid_deal_and_still_off_at_a_restart_keep_the_deal_halted(
    tmp_path: Path
) -> None:
    """The daemon on simulated panels (which come back with lifted chips still off): chips wager 200 on
    banker, the dealer adds 100 by command, betting closes, the chips are lifted mid-deal (the deal halts).
    Restarted with the chips still off, the deal stays halted (a review found it went on: 2026-12-07)."""
    path = write_table(tmp_path, panels=["baccarat.yaml"], gpio=MOCK)
    t = Table(path)
    try:
        banker_bet_on_seat_1(t, (1,))
        assert t.call("bet", seat=1, spot="banker", amount=100, by="dealer")["ok"]
        t.ctl.call("press dealer close_betting")
        closed = t.until("dealing", lambda s: s["phase"] == "dealing")
        assert closed["wagers"] == [{"seat": 1, "spot": "banker", "amount": 300}] and closed["tilt"] is None
        t.ctl.call("chips 1 banker off")
        halted = t.until("halted", lambda s: s["tilt"] is not None)
        assert halted["offline"] == {"panel 1": "chips moved after no more bets: banker chips lifted"}
    finally:
        t.close()
    t = Table(path)  # the restart: nobody touched the chips
    try:
        t.call("ping")
        assert t.daemon.gpio is not None
        assert not t.daemon.gpio.panels[0].logic.covered[(1, "banker")]  # still lifted on the mock pins
        again = t.status()
        assert again["tilt"] is not None and again["offline"], again
    finally:
        t.close()


@pytest.mark.timeout(60)
def test_simulated_restart_keeps_chips_put_down_mid_deal_on_their_spot_and_the_deal_halted(
    tmp_path: Path
) -> None:
    """Simulated panels come back as they were: chips put on player mid-deal are still there after a
    restart, so the fault stands (a review found no test would fail if they were not); pushed back, the deal
    goes on."""
    path = write_table(tmp_path, panels=["baccarat.yaml"], gpio=MOCK)
    t = Table(path)
    try:
        banker_bet_on_seat_1(t, (1,))
        t.ctl.call("press dealer close_betting")
        t.until("dealing", lambda s: s["phase"] == "dealing")
        t.ctl.call("chips 1 player on")
        halted = t.until("halted", lambda s: s["tilt"] is not None)
        assert halted["offline"] == {"panel 1": "chips moved after no more bets: player chips placed"}
    finally:
        t.close()
    t = Table(path)
    try:
        t.call("ping")
        assert t.daemon.gpio is not None
        assert t.daemon.gpio.panels[0].logic.covered[(1, "player")]
        again = t.status()
        assert again["offline"] == halted["offline"] and again["tilt"] is not None
        t.ctl.call("chips 1 player off")  # pushed back after the restart
        t.until("the deal going on", lambda s: s["tilt"] is None and s["offline"] == {})
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


# ---------------------------------------------------------------- an expander that stops answering


@pytest.mark.timeout(60)
def test_a_lamp_line_that_cannot_be_written_is_a_panel_fault_not_an_internal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An I2C expander that stops answering raises OSError on every lamp write (a review, 2026-12-05: the
    commands were applied but answered "internal error", their events never published, nothing halted,
    and the panel's worker logged every blink). Now the input's answer and events stand, the map's panels
    go offline (one WARNING), betting cannot close, and the fault clears once the lamps can be written."""
    failing = {"on": False}
    real_set = backend._ZeroOutput.set

    def set_lamp(self: Any, lit: bool) -> None:
        if failing["on"]:
            raise OSError(121, "Remote I/O error")
        real_set(self, lit)

    monkeypatch.setattr(backend._ZeroOutput, "set", set_lamp)
    t = Table(write_table(tmp_path, panels=["baccarat.yaml"], gpio=MOCK))
    try:
        assert t.call("credit_in", seat=1, amount=100_000)["ok"] and t.call("new_shoe")["ok"]
        failing["on"] = True
        opened = t.call("open")
        assert opened["ok"] and [e["event"] for e in opened["events"]] == ["betting_opened"]
        status = t.until("the panels offline", lambda s: set(s["offline"]) == {"panel 1", "dealer panel"})
        assert status["offline"]["panel 1"].endswith("cannot be written: [Errno 121] Remote I/O error")
        assert t.call("bet", seat=1, spot="player", amount=1000)["ok"]
        refused = t.call("close")
        assert refused["refused"] and "is offline" in refused["error"]
        failing["on"] = False
        t.call("cancel", seat=1, spot="player")  # an input: the lamps are written again
        t.until("the panels back", lambda s: s["offline"] == {})
        assert t.call("bet", seat=1, spot="player", amount=1000)["ok"] and t.call("close")["ok"]
    finally:
        t.close()

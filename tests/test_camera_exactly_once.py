"""Every card the simulated dealer put in the camera's window is in the journal exactly once, in order.

The daemon is the real ``croupier run`` in a subprocess, the camera the simulated window file read by
the real recognition, the journal a real SQLite file. The fault-injection points end the daemon at
the worst instants of the camera path: a card stable but not journaled (SIGKILL, and SIGTERM: a clean
stop arriving then), journaled but not yet noted by the camera link, both done, and after any journal
commit. The restarted camera finds the card still in the window: the table must not deal it again,
and where it cannot tell (the card is the one it journaled last, never seen gone) it holds it in a
``repeat_card`` tilt that the simulated dealer answers. Then Baccarat rounds through SIGKILLs and
SIGTERMs at random instants, many with a card lying in the window (docs/vision.md, "Across restarts").
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from camera_rig import CameraTable

from controller.cards import DECK, parse_card

#: Unset: the suite's seeds (the shoe's 3, the strikes' 42); set, both (to try other sessions).
SEED = os.environ.get("CROUPIER_CAMERA_SOAK_SEED")


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[CameraTable]:
    r = CameraTable(tmp_path, seed=3 if SEED is None else int(SEED))
    yield r
    r.close()


def check(rig: CameraTable) -> None:
    """The journal, replayed, dealt exactly the cards placed, in order (a repeat answered ``same``
    deals nothing)."""
    assert rig.dealt() == rig.placed
    plain = sum(1 for _, d in rig.inputs() if d["input"] == "card" and not d.get("repeat"))
    taken = sum(1 for _, d in rig.inputs() if d["input"] == "take_held")
    assert plain + taken == len(rig.placed)
    assert rig.repeat_rows() == rig.same + rig.new


#: The k-th time each point is passed: the second card of the first round (a commit: mid-round).
FAULTS = [
    "camera_read:2:kill",  # stable, its frame saved, not journaled
    "camera_read:2:term",  # a clean stop arriving then
    "camera_committed:2:kill",  # journaled; the link has not noted it (the card lies in the window)
    "camera_committed:2:term",  # a clean stop right after the commit
    "camera_delivered:2:kill",  # both done
    "journal_commit:7:kill",  # after any commit (commands, cards, the window seen empty)
]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("fault", FAULTS)
def test_the_worst_instants_of_the_camera_path_lose_or_double_no_card(rig: CameraTable, fault: str) -> None:
    proc = rig.start(fault)
    rig.seat()
    while proc.poll() is None:
        rig.play_round()
    assert proc.returncode == (0 if fault.endswith(":term") else -signal.SIGKILL)
    rig.play_round()  # the restarted daemon, with the card the fault caught still in the window
    rig.stop()
    check(rig)
    if fault.startswith(("camera_committed", "camera_delivered")) and fault.endswith(":kill"):
        # The card lay in the window, journaled: the restart asked, and the dealer said "the same card".
        assert rig.same == 1 and rig.new == 0


@pytest.mark.timeout(120)
def test_a_clean_stop_with_a_card_in_the_window_asks_the_dealer_and_deals_it_once(rig: CameraTable) -> None:
    rig.start()
    rig.seat()
    rig.play_round()  # its last card lies in the window
    rig.stop()
    rig.start()
    status = rig.status()
    deadline = time.monotonic() + 30
    while status["tilt"] is None:  # the camera reads its first frames
        assert time.monotonic() < deadline, "no repeat_card tilt"
        status = rig.status()
    assert status["tilt"]["reason"] == "repeat_card" and status["tilt"]["held"] == [rig.placed[-1]]
    assert rig.resolve(status) and rig.same == 1
    rig.play_round()
    rig.stop()
    check(rig)


@pytest.mark.timeout(120)
def test_an_identical_card_swapped_in_while_the_daemon_was_down_is_taken_when_the_dealer_says_so(
        rig: CameraTable) -> None:
    rig.start()
    rig.seat()
    rig.open_round()
    rig.deal_card()
    rig.stop()
    same = parse_card(rig.placed[-1])
    assert rig.swap()  # another deck's copy, from the shoe, put in its place while the table was down
    assert rig.camera.shoe.cards.count(same) + rig.placed.count(same.code) == 8  # 8 decks: 8 of each
    rig.start()
    while rig.status()["tilt"] is None:
        time.sleep(0.02)
    assert rig.resolve(rig.status()) and rig.new == 1 and rig.same == 0
    assert [d["card"] for _, d in rig.inputs() if d["input"] == "card"][-2:] == [same.code] * 2
    while rig.status()["phase"] == "dealing":
        rig.deal_card()
    rig.stop()
    check(rig)


@pytest.mark.timeout(120)
def test_a_camera_unplugged_and_back_keeps_the_card_in_the_window_as_dealt(rig: CameraTable) -> None:
    rig.start()
    rig.seat()
    rig.open_round()
    rig.deal_card()
    card = rig.camera.shown
    rows = rig.last_row()
    rig.camera.close()  # no frames: offline (a device_offline tilt mid-deal)
    while "camera" not in rig.status()["offline"]:
        time.sleep(0.02)
    assert rig.status()["tilt"]["reason"] == "device_offline"
    rig.camera.show(card)  # back, the same card still lying there
    while rig.status()["tilt"] is not None:
        time.sleep(0.02)
    time.sleep(0.5)  # a card dealt again would be journaled by now
    added = [d for _, d in rig.inputs(rows)]
    assert [(d["input"], d.get("online")) for d in added] == [("device", False), ("device", True)]
    while rig.status()["phase"] == "dealing":
        rig.deal_card()
    rig.stop()
    check(rig)


@pytest.mark.timeout(120)
def test_an_identical_next_card_is_dealt_once_the_starved_camera_has_seen_the_window_empty(
        rig: CameraTable) -> None:
    """Two identical cards in a row, the daemon starved of CPU (stopped) while the dealer clears the
    window: its camera never read the window empty, so it rightly takes the twin for the card still
    lying there; the dealer waits until it has read it empty, and the twin is dealt, once."""
    proc = rig.start()
    rig.seat()
    rig.open_round()
    rig.deal_card()
    twin = parse_card(rig.placed[-1])
    assert rig.take_twin(twin)
    rig.camera.shoe.cards.append(twin)  # the next card drawn
    proc.send_signal(signal.SIGSTOP)
    thaw = threading.Timer(1.0, proc.send_signal, args=(signal.SIGCONT,))
    thaw.start()
    try:
        rig.deal_card(timeout=20)
    finally:
        thaw.cancel()
        proc.send_signal(signal.SIGCONT)
    assert rig.placed[-1] == rig.placed[-2] and rig.repeat_rows() == 0
    while rig.status()["phase"] == "dealing":
        rig.deal_card()
    rig.stop()
    check(rig)


#: The suite's size (about a minute, most of it the daemon's starts: the worst instants are each struck
#: on purpose above, so this samples random ones); the acceptance run of docs/vision.md sets
#: CROUPIER_CAMERA_SOAK_ROUNDS=200 and CROUPIER_CAMERA_SOAK_STRIKES=120 (docs/testing.md).
ROUNDS = int(os.environ.get("CROUPIER_CAMERA_SOAK_ROUNDS", "7"))
STRIKES = int(os.environ.get("CROUPIER_CAMERA_SOAK_STRIKES", "16"))


@pytest.mark.timeout(max(300, 30 * ROUNDS))  # a loaded 2-core machine: up to 20 s a round
def test_rounds_dealt_by_camera_through_dozens_of_kills_journal_every_card_once(rig: CameraTable) -> None:
    """SIGKILL and SIGTERM at random instants (most within a card's way from the window to the journal,
    so with a card lying in the window): the journal deals exactly the cards the dealer placed."""
    for card in DECK:  # painted now, so that a card goes in the window as soon as it is empty long enough
        rig.camera.photo(card)
    rng = random.Random(42 if SEED is None else int(SEED))
    kills = terms = 0
    strike_at = set(rng.sample(range(ROUNDS * 5), min(STRIKES, ROUNDS * 5)))
    rig.start()
    rig.seat()
    deal_card = rig.deal_card
    placed = 0

    def strike(proc: object) -> None:
        nonlocal kills, terms
        if rig.proc is None or rig.proc is not proc or rig.proc.poll() is not None:
            return
        if (kills + terms) % 3 == 2:  # one strike in three is a clean stop
            rig.proc.send_signal(signal.SIGTERM)
            terms += 1
        else:
            rig.proc.kill()
            kills += 1

    def dealing_struck(timeout: float = 60.0) -> None:
        """The dealer's deal, with a strike at a random instant from the window's emptying to a little
        after the card's commit; mostly waited for, so the restart finds the card lying in the window
        (else the dealer may put the next card in while the table is down)."""
        nonlocal placed
        placed += 1
        if placed not in strike_at:
            return deal_card(timeout)
        target = rig.proc
        timer = threading.Timer(rng.random() * 0.6, strike, args=(target,))
        timer.start()
        deal_card(timeout)
        if rng.random() < 0.8:
            timer.join()
            if target is not None and rig.proc is target and rng.random() < 0.3:
                target.wait(30)  # struck after the commit, not restarted yet: down, a twin card put in
                swaps.append(rig.swap())
        else:
            timers.append(timer)

    timers: list[threading.Timer] = []
    swaps: list[bool] = []
    rig.deal_card = dealing_struck  # type: ignore[method-assign]
    for _ in range(ROUNDS):
        rig.play_round()
    for timer in timers:
        timer.cancel()
        timer.join()
    rig.stop()
    print(f"\ncamera soak: {ROUNDS} rounds, {len(rig.placed)} cards placed, {len(rig.dealt())} dealt by the "
          f"journal, {kills} SIGKILL, {terms} SIGTERM, {rig.starts} starts, repeat_card tilts: {rig.same} "
          f"same card, {rig.new} new card ({sum(swaps)} twins put in while down)")
    check(rig)
    assert kills + terms >= STRIKES * 3 // 4 and terms >= (kills + terms) // 3, (kills, terms)

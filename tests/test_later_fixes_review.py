"""What a second reading found in the day's later fixes (2026-12-07), each test failing before its fix: the
rules version not raised with the 2WayWinner close; a journal export of such rows called standalone; ctl's
words for a plain line's shoe reset; a frozen camera with rare noisy frames flapping online and offline (a
plain line's lost card right after the reset: tests/test_shoe_plain_lost_line.py)."""

from __future__ import annotations

import copy

import numpy as np

from controller import inputs as I
from controller.cards import parse_card
from controller.daemon.camera_frames import OldFrames
from controller.daemon.journal_export import replays_alone
from controller.daemon.journal_read import Entry
from controller.games.two_way_winner.options import TwoWayWinnerOptions
from controller.games.two_way_winner.rules import TwoWayWinner
from controller.limits import TableLimits
from controller.money import Currency
from controller.rules_version import RULES_VERSION
from controller.table import Table
from controller.tools.ctl import format_reply


def test_the_fresh_deck_refusal_changes_what_a_rules_version_4_journal_replays_to() -> None:
    """eff35db makes the engine refuse a 2WayWinner ``close`` that version 4 (638f510) took: a journal
    written under version 4 holding a round dealt on from the last round's deck replays now into a refused
    close, its cards ``card_not_due`` tilts and its wagers unsettled. controller/rules_version.py: "Bump it
    in the same change as any engine change that alters what some input sequence does (events,
    settlements, refusals)"; the number is still 4, so the daemon replays such a journal instead of
    refusing it with the archive command."""
    table = Table(TwoWayWinner(TwoWayWinnerOptions()), TableLimits(seats=6))
    ante = [I.PlaceWager(1, "bj_ante", 1000), I.PlaceWager(1, "poker_ante", 1000)]
    inputs = [I.CreditIn(1, 100_000), I.NewShoe(), I.OpenBetting(), *ante, I.CloseBetting(),
              *(I.CardSeen(parse_card(c)) for c in ("TC", "9H", "9D", "TS")),
              I.Decision(1, "blackjack"), I.Decision(1, "stand"),
              I.OpenBetting(), *ante, I.CloseBetting()]  # version 4: closed, and dealt on
    events = [e for inp in inputs for e in table.apply(inp)]
    assert events[-1].event == "refused"  # the engine change: what version 4 took is refused now
    assert RULES_VERSION > 4, "an engine change in what is refused, with the rules version not bumped"


def test_ctl_says_what_a_plain_lines_shoe_reset_did() -> None:
    """``shoe reset`` on a plain line answers ``"sent": null`` (4aba3e8): ctl prints "ok: None sent to the
    shoe (its HELLO will say it is back)": nothing was sent, and a plain reader never says HELLO; the
    fault was cleared then and there."""
    reply = {"ok": True, "cmd": "shoe", "action": "reset", "sent": None}
    text = format_reply({"cmd": "shoe", "action": "reset"}, reply, Currency())
    assert "None" not in text and "HELLO" not in text, text


def test_a_frozen_camera_with_rare_noisy_frames_does_not_flap_online_and_offline() -> None:
    """docs/vision.md: back after ``stable_frames`` new frames with no frozen spell among them, "a dark
    scene with a rare noisy pixel does not flap it online and offline". Since 6358f40 the new frames need
    not come in a row, only with no ``frozen_after`` gap: a stalled camera whose old buffer gets a noisy
    row now and then (3 new frames in 2 s, then none for 3.5 s: 4 new frames in 93) comes back online
    after every frozen spell and goes offline again 3 s later, a journaled device row and a tilt each time.
    Fed as the reader thread does (``_repeated``, then ``_back`` while offline)."""
    rng = np.random.default_rng(3)
    base = rng.integers(0, 256, (96, 128, 3), dtype=np.uint8)
    old = OldFrames(frozen_after=3.0, stable_frames=3)
    gaps = [3.5, 0.9, 0.9, 0.9] * 6
    noisy_at, t = [], 0.0
    for gap in gaps:
        t += gap
        noisy_at.append(round(t * 15))
    online, changes = True, []
    for n in range(round(t * 15) + 60):
        now = 100.0 + n / 15
        frame = base.copy()
        if n in noisy_at:
            frame[rng.integers(0, 6) * 16, rng.integers(0, 128)] ^= 1  # one noisy pixel in a sampled row
        if old.old(frame, now):
            if old.frozen(now) is not None and online:
                online = False
                changes.append(("offline", round(now - 100, 2)))
        elif not online and old.back():
            online = True
            changes.append(("online", round(now - 100, 2)))
    assert len(changes) == 1, f"flapped {len(changes)} times on {len(noisy_at)} noisy frames: {changes}"


def test_a_2waywinner_export_is_not_standalone_when_a_close_was_refused_for_the_used_deck() -> None:
    """``croupier journal export``'s ``standalone`` (controller.daemon.journal_export.replays_alone) says
    rows replay alone on a new table when its shoe is shuffled before the next card. Since eff35db a
    2WayWinner table with cards seen refuses ``close`` until ``new_shoe``, and a new table does not: rows
    where the dealer's close was refused, a player bet on, then ``new_shoe`` and ``close`` came, replay on a
    new table into a close taken at once and the later wager refused: other credits, still "standalone"."""
    def game() -> Table:
        return Table(TwoWayWinner(TwoWayWinnerOptions()), TableLimits(seats=6))

    def ante(seat: int) -> list[I.Input]:
        return [I.PlaceWager(seat, "bj_ante", 1000), I.PlaceWager(seat, "poker_ante", 1000)]

    before = game()
    played = [I.CreditIn(1, 100_000), I.NewShoe(), I.OpenBetting(), *ante(1), I.CloseBetting(),
              *(I.CardSeen(parse_card(c)) for c in ("TC", "9H", "9D", "TS")),
              I.Decision(1, "blackjack"), I.Decision(1, "stand"), I.CreditOut(1, 100_000)]
    for inp in played:
        assert all(e.event != "refused" for e in before.apply(inp)), inp
    rows = [I.CreditIn(1, 100_000), I.CreditIn(2, 100_000), I.OpenBetting(), *ante(1), I.CloseBetting(),
            *ante(2), I.NewShoe(), I.CloseBetting()]
    entries = [Entry(n, 0.0, "command:dealer", inp, None) for n, inp in enumerate(rows, 1)]
    alone = replays_alone(copy.deepcopy(before), game(), iter(entries))
    new = game()
    for inp in rows:
        before.apply(inp)
        new.apply(inp)
    assert not alone or (before.staked, before.credits) == (new.staked, new.credits), (
        f"standalone, yet the table staked {before.staked}, a new one {new.staked}")

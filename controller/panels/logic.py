"""What the panels mean, with no pins and no clock: presses and chips in, inputs and lamp states out.

Everything here is pure so it can be tested by calling it: the panel link
(:mod:`controller.panels.link`) feeds it the driver's debounced pin events
and the table's state, and the driver (:mod:`drivers.gpio.panel`) does the
I/O. The rules it follows:

* A decision button posts the same :class:`Decision` a command would, always:
  a press from a seat that is not to act, or of an action not legal now, is
  still posted and the table refuses it with a reason. The panel never
  second-guesses the core, so the journal shows every press.
* Bets: each seat has a selected amount, starting at the table minimum;
  ``bet_up``/``bet_down`` move it by the table unit within the limits
  (held down, they repeat in growing steps: :mod:`drivers.gpio.betkeys`),
  a chip key ``add_N`` adds N units, ``clear_bet`` goes back to the minimum;
  ``repeat_bet`` selects, spot by spot, what that seat had down when betting
  last closed. Chips landing on a spot's sensor while betting is open post a
  :class:`PlaceWager` of the selected amount, and lifting them posts a
  :class:`CancelWager`. Chips already on a spot when betting opens are placed
  then (a player letting a bet ride). After a daemon restart the keyed amount is
  the minimum again and ``repeat_bet`` the journal's last round; the seat's bet
  keys blink, and its chips wager nothing, until it presses ``clear_bet`` or
  ``repeat_bet`` (controller.daemon.panels.after_restart).
* After "no more bets" a wager's chips stay down, and a spot without one stays
  empty (chips there are pushed back). A change is a fault ("chips moved after no more bets") reported as
  ``DeviceStatus('panel N', online=False)``: it changes no wager, and the table
  halts the deal (a device-offline tilt) until the chips are back as they were
  (the panel reports itself online) or the dealer voids the round. Faults of
  this kind end with the round.
* At start (the first view, after the daemon replayed its journal) the
  sensors are reconciled with the wagers the table already accepted, never
  posted blindly: chips on a spot with its wager accepted post nothing;
  chips on a spot with no wager accepted are placed (betting open); a wager
  accepted with no chips on its spot is a fault ("chips missing at start"),
  never a silent cancel, until the chips are back (the wager stands, and was
  not charged again), the wager is taken back, or the round ends or is voided.
* A stuck button or a missing panel (its presence loop open) is the same
  ``DeviceStatus`` for the panel, and ``online=True`` when it recovers.
"""

from __future__ import annotations

from collections.abc import Mapping

from controller import inputs as I
from controller.games import GAMES
from controller.limits import TableLimits
from controller.panels.view import (
    BET_2X_ANTE,
    DEALER_DEVICE,
    DEALER_INPUTS,
    JOIN,
    JOURNAL_FAULT,
    MISSING,
    RESTORED,
    LampView,
    Post,
    chips_said,
    moved,
    seat_device,
)
from drivers.gpio.events import LampMode
from drivers.gpio.pinmap import BET_2X, PinMap, chip_key_units, is_bet_word


class PanelLogic:
    """Bets, decisions, faults and lamps for the panels of one pin map."""

    def __init__(self, pin_map: PinMap, limits: TableLimits) -> None:
        self.map = pin_map
        self.limits = limits
        self.spots = GAMES[pin_map.game].bet_spots if pin_map.game in GAMES else ()
        self.view = LampView()
        self.amount: dict[int, int] = {seat: self.least() for seat in pin_map.seats}
        self.repeat: dict[int, dict[str, int]] = {}
        self.last_round: dict[int, dict[str, int]] = {}
        #: Seats whose keyed amount a daemon restart put back at the minimum: their bet keys blink
        #: until the seat presses clear_bet or repeat_bet (controller.daemon.panels.after_restart).
        self.restarted: set[int] = set()
        self._betting_wagers: Mapping[tuple[int, str], int] = {}
        self.covered: dict[tuple[int, str], bool] = {
            (seat, spot): False for seat, panel in pin_map.seats.items() for spot in panel.spots
        }
        self.at_close: dict[tuple[int, str], bool] | None = None
        self.faults: dict[str, dict[str, str]] = {}
        #: What the table was last told of each panel: its offline words ("" online), the journal's at a
        #: restart unless posted since; the start posts only a change (a review, 2026-12-07).
        self.told: dict[str, str] = {}
        #: Spots whose wager the table had accepted but whose chips were missing at start (betting open).
        self.missing: set[tuple[int, str]] = set()
        #: Wagers standing at start that were keyed by command, not placed by chips: no chips expected.
        self.keyed: set[tuple[int, str]] = set()
        #: Spots whose chips placed a wager this betting round (their chips were down when it was placed).
        self.chipped: set[tuple[int, str]] = set()
        self._synced = False

    # -------------------------------------------------------------- table state
    def update(self, view: LampView) -> list[Post]:
        """Take the table's new state; returns inputs due to a phase change (chips already down)."""
        if not self._synced:
            return self._start(view)
        before, self.view = self.view.phase, view
        out: list[Post] = []
        for seat, spot in sorted(self.missing):
            if view.phase != "betting" or (seat, spot) not in view.wagers:
                self.missing.discard((seat, spot))  # taken back, voided: nothing is missing any more
                out.extend(self.fault(seat_device(seat), f"chips {spot}", None))
        if view.phase == "betting":
            self._betting_wagers = view.wagers
            # Chips lifted and their wager taken back: no longer the chips of a wager (a wager keyed by
            # command there later has none: a review, 2026-12-07, found it a move at the close).
            self.chipped -= {k for k in self.chipped if k not in view.wagers and not self.covered.get(k)}
        if before != "betting" and view.phase == "betting":
            self.chipped.clear()
            for (seat, spot), covered in sorted(self.covered.items()):
                if covered:
                    out.extend(self._place(seat, spot, "already on the spot when betting opened"))
        if before == "betting" and view.phase != "betting":
            last: dict[int, dict[str, int]] = {}
            for (seat, spot), amount in self._betting_wagers.items():
                if spot in self.spots:
                    last.setdefault(seat, {})[spot] = amount
            self.last_round = last
            # ``repeat`` stays what the seat chose until it keys another amount: chips left on a spot
            # ride at the amount the panel shows, and clearing it here made them bet the keyed amount
            # (the minimum after a clear_bet) at the next open, a fifth of a 500 (a review, 2026-12-07).
        if view.phase == "dealing" and self.at_close is None:
            # A wager its chips placed stood at the close with its chips down, whatever the sensor says
            # now: chips lifted while the close was being journaled sent a cancel the table then refused,
            # and taking the sensor now as the state at the close hid the move (a review, 2026-12-07).
            # Chips stand at the close only on a wager the table holds. Chips on any other spot wager
            # nothing, and are lifted as the dealer pushes them back, no move: a wager the table handed
            # back at the close (a lone 2WayWinner ante, a One Card Poker Tie without its primary: the
            # lift halted everyone's deal, a review, 2026-12-07), chips put down as the close was applied
            # (their wager came after it, refused: a late bet is no bet), chips a restart's blink kept
            # from wagering. Put down again during the deal, they are a move.
            self.at_close = {key: covered and key in view.wagers for key, covered in self.covered.items()}
            for key in sorted(self.chipped & set(view.wagers)):
                self.at_close[key] = True
                if not self.covered.get(key, False):
                    out.extend(self.fault(seat_device(key[0]), f"chips {key[1]}", moved(key[1], False)))
        if view.phase != "dealing" and self.at_close is not None:
            self.at_close = None
            for seat, spot in sorted(self.covered):
                out.extend(self.fault(seat_device(seat), f"chips {spot}", None))
        if view.phase != "dealing":
            for device in sorted(self.faults):
                out.extend(self.fault(device, RESTORED, None))
        return out

    def _start(self, view: LampView) -> list[Post]:
        """The first view (the table as the journal rebuilt it): sensors reconciled with accepted wagers.

        A restart must not charge a seat twice: chips still on a spot whose
        wager the table holds post nothing. Chips on a spot with no wager are
        placed if betting is open and the amount was chosen (:meth:`_place`). A
        wager with no chips on its spot is not cancelled behind anyone's back:
        it is a fault, so the dealer sees it (betting cannot close, or the deal
        halts) and the player puts the chips back, takes the wager back, or
        the dealer voids the round.
        """
        self._synced = True
        self.view = view
        out: list[Post] = []
        if view.phase == "betting":
            self._betting_wagers = view.wagers
        said = {seat: chips_said(self.faults.get(seat_device(seat), {}).get(RESTORED, ""))
                for seat in self.map.seats} if view.phase == "dealing" else {}
        if view.phase == "dealing":
            self.at_close = {}
        for (seat, spot), covered in sorted(self.covered.items()):
            amount, was = view.wagers.get((seat, spot)), said.get(seat, {}).get(spot)
            if covered and amount is not None and (seat, spot) not in self.keyed:
                self.chipped.add((seat, spot))  # its chips: lifted as the close is applied, a move
            if covered and amount is None and view.phase == "betting":
                out.extend(self._place(seat, spot, "chips on the spot at start"))
            elif (not covered and amount is not None and view.phase in ("betting", "dealing")
                  and (seat, spot) not in self.keyed and was is None):
                detail = f"{MISSING}{spot} wager {amount} accepted, no chips on the spot"
                self.faults.setdefault(seat_device(seat), {})[f"chips {spot}"] = detail
                if view.phase == "betting":
                    self.missing.add((seat, spot))
            if self.at_close is not None:
                # What the chips must read for the deal to go on: as at the close. A chips fault the journal
                # holds says so (down, unless put down after it: a keyed wager's too); else as far as the
                # table knows (an accepted wager has chips, unless keyed by command; none on a spot
                # without a wager: they stand for nothing, and are pushed back, :meth:`update`).
                self.at_close[(seat, spot)] = (not was.on if was is not None else amount is not None
                                               and (covered or (seat, spot) not in self.keyed))
                if was is not None and covered != self.at_close[(seat, spot)]:
                    self.faults.setdefault(seat_device(seat), {})[f"chips {spot}"] = was.words  # still moved
        for device in sorted(self.faults):
            keys = self.faults[device]
            # The journal's faults are now each spot's own (kept while its chips are not as at the close,
            # ended as any by the sensor: :meth:`sensor`); a missing panel, a stuck button, a dead chip:
            # their pins say again (a review, 2026-12-07).
            keys.pop(RESTORED, None)
            now = JOIN.join(keys[k] for k in sorted(keys))
            if now != self.told.get(device, ""):
                self.told[device] = now
                status = I.DeviceStatus(device, not now, now or "back to normal at start")
                out.append((status, f"gpio {device}"))
        return out

    def restore(self, offline: Mapping[str, str]) -> None:
        """Faults of this map's panels the table still holds from before a restart (the journal's).

        The pins cannot say what a chip sensor read at the close, but a chips
        fault's words do: at start (:meth:`_start`) it becomes its spot's own
        fault again while the chips are not as at the close, and ends when
        they are (or with the round); a missing panel or a stuck button is
        re-reported by its pin at start.
        Without this the table would keep the panel offline forever, since the
        panel reports only changes.
        """
        mine = {seat_device(s) for s in self.map.seats} | ({DEALER_DEVICE} if self.map.dealer else set())
        for device, detail in offline.items():
            if device in mine:
                self.faults.setdefault(device, {})[RESTORED] = detail
                self.told.setdefault(device, detail)  # unless a post since (a lamp that failed as it opened)

    # ------------------------------------------------------------------ inputs
    def selected(self, seat: int, spot: str) -> int:
        """The amount chips on ``spot`` will wager now."""
        return self.repeat.get(seat, {}).get(spot, self.amount[seat])

    def choose_again(self) -> None:
        """Every seat's keyed amount back at the table minimum, its bet keys blinking until it presses
        ``clear_bet`` or ``repeat_bet``; chips wager nothing until then. After a daemon restart (the keyed
        amount is not journaled), and when the map's inputs failed (a dead chip's keys may have stepped
        it)."""
        self.amount.update({seat: self.least() for seat in self.map.seats})
        self.restarted = set(self.map.seats)

    def step(self, seat: int, units: int) -> None:
        """Move seat ``seat``'s selected amount by ``units`` table units, within the table's limits.

        bet_up/bet_down (the map's ``bet_step``, or a held button's growing steps) and the chip keys
        (``add_N``) all come here; a selection past a limit stops at the limit.
        """
        self.amount[seat] = self._within(self.amount[seat] + units * self.limits.unit)
        self.repeat.pop(seat, None)

    def least(self) -> int:
        """The least amount a seat may select: ``min_bet``, or on a map whose ``bet_step`` is more than one
        unit the first multiple of it at or above (Swap-Hand's even units: at a ``min_bet`` of an odd
        number of units, stepping by two from it selected only amounts the table refuses: a review,
        2026-12-07)."""
        grid = self.map.bet_step * self.limits.unit
        return -(-self.limits.min_bet // grid) * grid

    def _within(self, amount: int) -> int:
        """``amount`` stopped at the least (:meth:`least`) and greatest amount a seat may select."""
        grid = self.map.bet_step * self.limits.unit
        return max(self.least(), min(self.limits.max_bet // grid * grid, amount))

    def button(self, seat: int | None, word: str) -> list[Post]:
        """A debounced press of ``word`` on seat ``seat``'s panel (``None``: the dealer panel)."""
        if seat is None:
            if word == "confirm" and self.view.tilt == "held_card":  # confirm: take the held card
                return [(I.TakeHeld(), f"gpio dealer {word}")]
            return [(DEALER_INPUTS[word](), f"gpio dealer {word}")]
        source = f"gpio seat {seat} {word}"
        if word in ("clear_bet", "repeat_bet"):
            self.restarted.discard(seat)  # an amount chosen afresh after a restart: no surprise left
        units = {"bet_up": self.map.bet_step, "bet_down": -self.map.bet_step}.get(word, chip_key_units(word))
        if units is not None:  # bet_up, bet_down, a chip key: the selected amount moves, nothing posted
            self.step(seat, units)
            return []
        if word == "clear_bet":
            self.amount[seat] = self.least()
            self.repeat.pop(seat, None)
            return []
        if word == "repeat_bet":  # within today's limits, as every change is (limits change at a start)
            last = self.last_round.get(seat, {})
            self.repeat[seat] = {spot: self._within(amount) for spot, amount in last.items()}
            return []
        if word == BET_2X:
            # Without an ante there is no "twice": amount 0 lets the table refuse it with its reason.
            return [(I.Decision(seat, "bet", self._twice_the_ante(seat)), source)]
        return [(I.Decision(seat, word), source)]

    def sensor(self, seat: int, spot: str, covered: bool) -> list[Post]:
        """A spot's chip sensor settled covered or uncovered."""
        self.covered[(seat, spot)] = covered
        phase = self.view.phase
        if phase == "betting" and (seat, spot) in self.missing:
            if not covered:
                return []
            self.missing.discard((seat, spot))  # the chips of an accepted wager are back: it stands...
            self.chipped.add((seat, spot))  # ...with its chips (lifted as the close is applied: a move)
            return self.fault(seat_device(seat), f"chips {spot}", None)
        if phase == "betting":
            if covered:
                return self._place(seat, spot, "chips on the spot")
            return [(I.CancelWager(seat, spot), f"gpio seat {seat} sensor {spot}: chips lifted")]
        if phase == "dealing" and self.at_close is not None:
            changed = covered != self.at_close.get((seat, spot), False)
            detail = moved(spot, covered) if changed else None
            return self.fault(seat_device(seat), f"chips {spot}", detail)
        return []

    def _place(self, seat: int, spot: str, why: str) -> list[Post]:
        """Chips wager the selected amount; nothing while a restart's blink says it is not chosen yet, nor
        while the map's inputs are failed (line_check: a dead chip's "covered" spots are its garbage)."""
        if seat in self.restarted or "inputs" in self.faults.get(seat_device(seat), {}):
            return []  # the spot's lamp stays dark: choose (clear_bet, repeat_bet), then chips down again
        amount = self.selected(seat, spot)
        self.chipped.add((seat, spot))
        return [(I.PlaceWager(seat, spot, amount), f"gpio seat {seat} sensor {spot}: {why}")]

    def fault(self, device: str, key: str, detail: str | None) -> list[Post]:
        """Raise (``detail``) or clear (``None``) one fault of a panel; posts only when its status changes."""
        current = self.faults.setdefault(device, {})
        was_offline = bool(current)
        if detail is None:
            if current.pop(key, None) is None:
                return []
        else:
            if current.get(key) == detail:
                return []
            current[key] = detail
        source, text = f"gpio {device}", JOIN.join(current[k] for k in sorted(current))
        if current or was_offline:
            self.told[device] = text
            return [(I.DeviceStatus(device, not text, text or f"{key}: back to normal"), source)]
        return []

    # ------------------------------------------------------------------- lamps
    def lamps(self) -> dict[str, LampMode]:
        """Every lamp of this map and what it shows for the current view."""
        v = self.view
        out: dict[str, LampMode] = {}
        tilted = v.tilt is not None
        for seat, panel in self.map.seats.items():
            legal = set(v.due.get(seat, ()))
            can_bet = v.phase == "betting" and seat in v.seated and seat != v.dp_seat
            for word, button in panel.buttons.items():
                if button.lamp is None:
                    continue
                if tilted:
                    mode = LampMode.FAULT
                elif is_bet_word(word):
                    keyed = LampMode.BLINK if seat in self.restarted else LampMode.ON
                    mode = keyed if can_bet else LampMode.OFF
                elif word == BET_2X:  # only when the round takes what the press posts (a natural, funded)
                    doubles = self._twice_the_ante(seat) in v.bets.get(seat, ())
                    mode = LampMode.BLINK if doubles else LampMode.OFF
                else:
                    mode = LampMode.BLINK if word in legal else LampMode.OFF
                out[f"seat {seat} {word}"] = mode
            for spot, spec in panel.spots.items():
                if spec.lamp is None:
                    continue
                if tilted:
                    out[f"seat {seat} spot {spot}"] = LampMode.FAULT
                else:
                    staked = (seat, spot) in v.wagers
                    out[f"seat {seat} spot {spot}"] = LampMode.ON if staked else LampMode.OFF
        if self.map.dealer is not None:
            lit = self._dealer_lit()
            for word, button in self.map.dealer.buttons.items():
                if button.lamp is not None:
                    out[f"dealer {word}"] = LampMode.ON if word in lit else LampMode.OFF
        if self.map.tower is not None:
            states = {"idle": v.phase == "idle", "betting": v.phase == "betting",
                      "in_play": v.phase == "dealing"}
            for name, on in states.items():
                out[f"tower {name}"] = LampMode.ON if on and not tilted else LampMode.OFF
            out["tower fault"] = LampMode.FAULT if tilted else (LampMode.ON if v.offline else LampMode.OFF)
        return out

    def _twice_the_ante(self, seat: int) -> int:
        """What a ``bet_2x`` press of ``seat`` bets."""
        return 2 * self.view.wagers.get((seat, BET_2X_ANTE), 0)

    def _dealer_lit(self) -> set[str]:
        """Dealer lamps light the actions that make sense now; on a tilt, the ones that resolve it.

        A journal fault refuses every input (void too), so no dealer lamp may offer one.
        """
        v = self.view
        if v.tilt == JOURNAL_FAULT:
            return set()
        if v.tilt == "card_not_due":
            return {"burn", "void"}
        if v.tilt == "impossible_card":
            return {"confirm", "void"}
        if v.tilt in ("held_card", "repeat_card"):  # confirm takes it (a repeat: nothing), burn burns it
            return {"confirm", "burn", "void"}
        if v.tilt is not None:
            return {"void"}
        if v.phase == "idle":
            return {"open_betting", "new_shoe"}
        if v.phase == "betting":  # close is refused while a device is offline: not offered then
            return {"void"} if v.offline else {"close_betting", "void"}
        return {"void"} if v.burn_next else {"burn", "void"}

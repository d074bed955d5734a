"""The seats' money at the table: credits in and out, wagers placed and taken back, rounds settled.

Every amount is an integer of minor units, and every settlement is checked to pay each staked wager
exactly once (the nets and the house's sum to zero by construction). Kept apart from
:mod:`controller.table` so the round's lifecycle reads without it; :class:`WagerRules` is part of
:class:`~controller.table.Table`.
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Any, NoReturn

from controller import inputs as I
from controller.events import CreditChanged, Event, RoundResult, RoundSettled, WagerPlaced, WagerReturned
from controller.game_base import Game, Refusal, Settlement
from controller.limits import TableLimits
from controller.money import Currency


class SeatMeters:
    """Per-seat accounting meters (gaming standards' soft meters)."""

    __slots__ = ("credits_in", "credits_out", "wagered", "won", "lost", "rounds")

    def __init__(self) -> None:
        self.credits_in = self.credits_out = self.wagered = self.won = self.lost = self.rounds = 0

    def to_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}


#: The wire's key of each seat number (seats are 1..12): views are built every round.
_SEAT_KEYS = tuple(str(seat) for seat in range(13))

#: Settlement lines in seat order, then spot name.
_by_seat_spot = attrgetter("seat", "spot")


class WagerRules:
    """The table's handlers for credits and wagers, and its settlement (a mixin of
    :class:`~controller.table.Table`)."""

    game: Game
    round_no: int
    phase: str
    credits: dict[int, int]
    meters: dict[int, SeatMeters]
    chosen: dict[int, dict[str, int]]
    staked: dict[tuple[int, str], int]
    house_net: int
    rounds_settled: int
    rounds_voided: int
    meters_after: int
    shoe_results: list[dict[str, Any]]
    _limits: TableLimits
    _money: Currency
    _wager_limits: tuple[int, int, int, int]
    _derives: bool
    _after_round: bool

    if TYPE_CHECKING:  # the table's own, which a settlement ends the round with
        limits: TableLimits

        def _end_round(self) -> None: ...
        def seated(self) -> list[int]: ...

    def _check_seat(self, seat: int) -> None:
        if not 1 <= seat <= self._limits.seats:
            raise Refusal(f"no seat {seat}: this table has seats 1..{self._limits.seats}")

    def _credits_view(self) -> dict[str, int]:
        return {_SEAT_KEYS[s]: c for s, c in self.credits.items()}

    def meters_dict(self) -> dict[str, Any]:
        """The meters of this period, and ``since`` when it began: after which round, and the decimals
        every amount of it is in (one scale: a change of decimals starts a new period)."""
        return {
            "table": {
                "rounds_settled": self.rounds_settled,
                "rounds_voided": self.rounds_voided,
                "house_net": self.house_net,
            },
            "seats": {str(s): m.to_dict() for s, m in sorted(self.meters.items())},
            "since": {"round": self.meters_after, "minor_units": self._limits.minor_units},
        }

    def _new_meter_period(self) -> None:
        """Every meter back to 0, as a gaming machine's meters are cleared when its accounting
        denomination changes: a change of the currency's decimals changes what a minor unit is worth,
        so a total across it would add two scales (50.00 and 9,000 are not 14,000 of anything). Made
        only between rounds with no money held (controller.daemon.journal_limits), so nothing is lost:
        every round stays in recall at its own scale. Each seat seated keeps a meter, at 0."""
        self.meters = {seat: SeatMeters() for seat in self.credits}
        self.house_net = self.rounds_settled = self.rounds_voided = 0
        self.meters_after = self.round_no

    def limits_refusal(self, limits: TableLimits) -> str | None:
        """Why ``limits`` cannot take effect now (None if they can), so that no money held is dropped
        or rescaled: a seat that holds credits or a wager must stay a seat of the table (one cashed
        out to nothing may go: it holds no money), so must the Designated Player (it banks the next
        round), and the currency's decimals change only while no money is held (every amount is
        kept in minor units: new decimals would rescale it). The engine's own rule, so a journal
        whose row breaks it replays as refused; the daemon asks it before it journals a change."""
        holding = (*(s for s, c in self.credits.items() if c), *(seat for seat, _ in self.staked))
        held = [s for s in holding if s > limits.seats]
        if held:
            return (f"seat {max(held)} holds credits or a wager: it cannot be left out of the "
                    f"{limits.seats} seat(s) of the new limits (cash it out first)")
        banker = self.game.view().get("dp_seat")  # banks the next round, with credits or not
        if isinstance(banker, int) and banker > limits.seats:
            return (f"seat {banker} is the Designated Player: it cannot be left out of the {limits.seats} "
                    "seat(s) of the new limits (set another DP first)")
        if limits.minor_units != self._limits.minor_units and (any(self.credits.values()) or self.staked):
            return (f"currency.minor_units {self._limits.minor_units} -> {limits.minor_units} while seats "
                    "hold credits or wagers (journaled in minor units: it would rescale them; "
                    "cash out first)")
        return None

    def _set_limits(self, inp: I.SetLimits) -> list[Event]:
        """The limits from the next round on: only between rounds, as a floor changes its sign between
        hands, so no round is played under two sets of limits (a journaled change waits for the round
        in play to end: controller.daemon.journal_limits). New decimals start new meters; other
        changes (seats, unit, minimum, maximum) keep them: their amounts are still at one scale."""
        if self.phase != "idle":
            raise Refusal(f"the limits change between rounds, not while round {self.round_no} is in play "
                          f"({self.phase})")
        try:
            limits = TableLimits(**inp.limits())
        except ValueError as exc:
            raise Refusal(f"not table limits: {exc}") from None
        why = self.limits_refusal(limits)
        if why is not None:
            raise Refusal(why)
        decimals_change = limits.minor_units != self._limits.minor_units
        self.limits = limits
        for seat in [s for s in self.credits if s > limits.seats]:  # cashed out to nothing: gone
            del self.credits[seat]
        if decimals_change:
            self._new_meter_period()
        return []

    def _place_wager(self, inp: I.PlaceWager) -> list[Event]:
        seat, spot, amount = inp.seat, inp.spot, inp.amount
        if self.phase != "betting":
            raise Refusal("betting is not open")
        seats, unit, min_bet, max_bet = self._wager_limits
        if not 1 <= seat <= seats:
            self._check_seat(seat)
        if seat not in self.credits:
            raise Refusal(f"seat {seat} is not seated (no credits)")
        game = self.game
        if spot not in game.bet_spots:
            raise Refusal(f"{game.name} has no spot {spot!r}; spots: {', '.join(game.bet_spots)}")
        current = self.chosen.get(seat)
        total = amount if current is None else current.get(spot, 0) + amount
        if amount <= 0 or total % unit or not min_bet <= total <= max_bet:
            self._refuse_amount(spot, amount, total)
        new_bets = {spot: total} if current is None else {**current, spot: total}
        game.check_bets(seat, new_bets, self._limits)
        credits = self.credits
        if not self._derives:  # the wager is staked as chosen: one spot changes, by ``amount``
            if amount > credits[seat]:
                self._refuse_cost(seat, amount)
            left = credits[seat] = credits[seat] - amount
            self.chosen[seat] = new_bets
            self.staked[(seat, spot)] = total
            return [WagerPlaced(self.round_no, seat, spot, total, left)]
        before = game.with_derived(current or {})
        after = game.with_derived(new_bets)
        cost = sum(after.values()) - sum(before.values())
        if cost > credits[seat]:
            self._refuse_cost(seat, cost)
        left = credits[seat]
        credits[seat] -= cost
        self.chosen[seat] = new_bets
        events: list[Event] = []
        for name, value in after.items():
            if before.get(name) != value:
                self.staked[(seat, name)] = value
                left -= value - before.get(name, 0)  # each event's credits are those after it, not after all
                events.append(WagerPlaced(self.round_no, seat, name, value, left))
        return events

    def _refuse_amount(self, spot: str, amount: int, total: int) -> NoReturn:
        """Why a wager's amount (or the spot's new total) is not one the limits take."""
        lim, m = self._limits, self._money.format
        if amount <= 0:
            raise Refusal(f"a wager must be positive, not {m(amount)}")
        if total % lim.unit:
            raise Refusal(f"{spot} wager {m(total)} is not a multiple of the unit {m(lim.unit)}")
        if total < lim.min_bet:
            raise Refusal(f"{spot} wager {m(total)} is below the table minimum {m(lim.min_bet)}")
        raise Refusal(f"{spot} wager {m(total)} is over the table maximum {m(lim.max_bet)}")

    def _refuse_cost(self, seat: int, cost: int) -> NoReturn:
        m = self._money.format
        raise Refusal(f"seat {seat} has {m(self.credits[seat])} credits, the wager needs {m(cost)}")

    def _cancel_wager(self, inp: I.CancelWager) -> list[Event]:
        seat, spot = inp.seat, inp.spot
        if self.phase != "betting":
            raise Refusal("betting is not open: wagers cannot be taken back")
        current = self.chosen.get(seat, {})
        if spot not in current:
            raise Refusal(f"seat {seat} has no wager on {spot!r}")
        new_bets = {k: v for k, v in current.items() if k != spot}
        before = self.game.with_derived(current)
        after = self.game.with_derived(new_bets)
        events: list[Event] = []
        for name, value in before.items():
            back = value - after.get(name, 0)
            if back:
                self.credits[seat] += back
                if name in after:
                    self.staked[(seat, name)] = after[name]
                else:
                    del self.staked[(seat, name)]
                events.append(
                    WagerReturned(self.round_no, seat, name, back, self.credits[seat], "cancelled")
                )
        if new_bets:
            self.chosen[seat] = new_bets
        else:
            del self.chosen[seat]
        return events

    def _return_seat(self, seat: int, why: str) -> list[Event]:
        events: list[Event] = []
        for name in sorted(self.game.with_derived(self.chosen[seat])):
            amount = self.staked.pop((seat, name))
            self.credits[seat] += amount
            events.append(WagerReturned(self.round_no, seat, name, amount, self.credits[seat], why))
        del self.chosen[seat]
        return events

    def _settle(self, lines: list[Settlement], result: dict[str, Any]) -> list[Event]:
        """Pay every line, meter it, and check that each staked wager has exactly one line."""
        staked, credits, all_meters = self.staked, self.credits, self.meters
        unsettled = dict(staked)
        lines.sort(key=_by_seat_spot)
        wire: list[dict[str, Any]] = []
        total = 0
        counted = 0  # the last seat whose round was metered: a seat's lines are together
        for line in lines:
            seat, net = line.seat, line.net
            total += net
            meters = all_meters[seat]
            stake = unsettled.pop((seat, line.spot), None)
            if stake is not None:
                if stake != line.stake:
                    raise AssertionError(f"settlement of {(seat, line.spot)} has stake {line.stake}, "
                                         f"staked {stake}")
                credits[seat] += stake + net
                meters.wagered += stake
                if seat != counted:
                    meters.rounds += 1
                    counted = seat
            elif (seat, line.spot) in staked:
                raise AssertionError(f"wager {(seat, line.spot)} has more than one settlement line")
            else:  # a line with no stake of its own (a banking seat's result)
                credits[seat] += net
            if net > 0:
                meters.won += net
            elif net < 0:
                meters.lost -= net
            wire.append(line.to_dict())
        if unsettled:
            raise AssertionError(f"wagers without a settlement line: {sorted(unsettled)}")
        house = -total
        self.house_net += house
        self.rounds_settled += 1
        events: list[Event] = []
        if result:
            events.append(RoundResult(self.round_no, self.game.name, result))
            self.shoe_results.append({"round": self.round_no, "result": result})
        events.append(
            RoundSettled(
                self.round_no,
                self.game.name,
                wire,
                house,
                self._credits_view(),
            )
        )
        self._end_round()
        if self._after_round:
            events.extend(self.game.after_round(self.seated()))
        return events

    def _credit_in(self, inp: I.CreditIn) -> list[Event]:
        self._check_seat(inp.seat)
        if inp.amount < 0:
            raise Refusal(f"credit in must not be negative, not {self._money.format(inp.amount)}")
        credits = self.credits
        if inp.seat in credits:
            credits[inp.seat] += inp.amount
        else:  # a new seat, sorted in place: a round in play shares this dict
            seats = sorted([*credits.items(), (inp.seat, inp.amount)])
            credits.clear()
            credits.update(seats)
        meters = self.meters.setdefault(inp.seat, SeatMeters())
        meters.credits_in += inp.amount
        return [CreditChanged(inp.seat, "in", inp.amount, self.credits[inp.seat])]

    def _credit_out(self, inp: I.CreditOut) -> list[Event]:
        self._check_seat(inp.seat)
        have = self.credits.get(inp.seat)
        if have is None:
            raise Refusal(f"seat {inp.seat} is not seated")
        if inp.amount <= 0:
            raise Refusal(f"credit out must be positive, not {self._money.format(inp.amount)}")
        if inp.amount > have:
            m = self._money.format
            raise Refusal(f"seat {inp.seat} has {m(have)} credits, cannot pay out {m(inp.amount)}")
        if self.phase == "dealing":
            raise Refusal("credits cannot be paid out while a round is being dealt")
        self.credits[inp.seat] = have - inp.amount
        self.meters[inp.seat].credits_out += inp.amount
        return [CreditChanged(inp.seat, "out", inp.amount, self.credits[inp.seat])]

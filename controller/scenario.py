"""Scenario files: a table and its rounds as cards in shoe order and decisions.

A scenario is how a rule is tested, how a disputed round is replayed and how
the daemon is tested in the loop; the format is docs/scenarios.md. This
module loads a file strictly (an unknown key or an unquoted odds value is an
error naming it) and turns each round into the table inputs a real table
would see, in the order it would see them. Running them is
:func:`run_scenario`; the daemon harness feeds the same inputs through real
devices instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from controller import inputs as I
from controller.cards import Card, CardError, parse_card
from controller.configfile import ConfigFileError, read_yaml, validation_problems
from controller.events import Event
from controller.game_base import CardDue, DecisionDue, Game
from controller.games import check_game_name, game_class
from controller.limits import TableLimits
from controller.table import Table


class ScenarioError(Exception):
    """A scenario that cannot be run; ``round`` is 0 for an error in the file as a whole."""

    def __init__(self, round_no: int, reason: str) -> None:
        super().__init__(reason)
        self.round = round_no
        self.reason = reason

    def to_dict(self) -> dict[str, Any]:
        return {"event": "error", "round": self.round, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class ShoeCard:
    """A card of a round's list; ``burn`` when written ``~XX`` (declared by the dealer)."""

    card: Card
    burn: bool


class RoundSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    shuffle: bool = False
    dp: int | None = None
    bets: dict[int, dict[str, int]] = Field(default_factory=dict)
    cards: list[str] = Field(default_factory=list)
    decisions: list[list[int | str]] = Field(default_factory=list)

    @field_validator("cards")
    @classmethod
    def _cards(cls, value: list[str]) -> list[str]:
        for text in value:
            try:
                parse_card(text[1:] if text.startswith("~") else text)
            except CardError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("decisions")
    @classmethod
    def _decisions(cls, value: list[list[int | str]]) -> list[list[int | str]]:
        for d in value:
            ok = (
                len(d) in (2, 3)
                and isinstance(d[0], int)
                and isinstance(d[1], str)
                and (len(d) == 2 or isinstance(d[2], int))
            )
            if not ok:
                raise ValueError(f"a decision is [seat, action] or [seat, action, amount], not {d!r}")
        return value

    def shoe_cards(self) -> list[ShoeCard]:
        return [
            ShoeCard(parse_card(t[1:]), True) if t.startswith("~") else ShoeCard(parse_card(t), False)
            for t in self.cards
        ]

    def decision_inputs(self) -> list[I.Decision]:
        out = []
        for d in self.decisions:
            seat, action = d[0], d[1]
            amount = d[2] if len(d) == 3 else None
            assert isinstance(seat, int) and isinstance(action, str)
            assert amount is None or isinstance(amount, int)
            out.append(I.Decision(seat, action, amount))
        return out


class ScenarioFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    game: str
    options: dict[str, Any] = Field(default_factory=dict)
    table: dict[str, Any] = Field(default_factory=dict)
    credits: dict[int, int] = Field(default_factory=dict)
    rounds: list[RoundSpec]

    @field_validator("game")
    @classmethod
    def _game(cls, value: str) -> str:
        return check_game_name(value)


@dataclass(slots=True)
class Scenario:
    """A loaded scenario: the game and table ready to build, and its rounds."""

    spec: ScenarioFile
    game: Game
    limits: TableLimits

    def new_table(self) -> Table:
        """A fresh table with the scenario's credits seated (also used by the daemon harness)."""
        game = type(self.game)(self.game.options)
        table = Table(game, self.limits)
        for seat, amount in sorted(self.spec.credits.items()):
            refused = [e for e in table.apply(I.CreditIn(seat, amount)) if e.event == "refused"]
            if refused:
                raise ScenarioError(0, f"credits: {refused[0].to_dict()['reason']}")
        return table


def _format_error(where: str, exc: ValidationError) -> str:
    return "; ".join(f"{key}: {reason}" for key, reason in validation_problems(exc, where))


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file; :class:`ScenarioError` (round 0) names the key."""
    path = Path(path)
    try:
        raw = read_yaml(path, ConfigFileError)
    except ConfigFileError as exc:  # "<file>: cannot read: ..." or "<file>: not valid YAML: line N, ..."
        raise ScenarioError(0, str(exc)) from None
    return scenario_from_data(raw, str(path))


def scenario_from_data(raw: object, name: str = "scenario") -> Scenario:
    """Validate already-parsed scenario data (``name`` prefixes every error)."""
    if not isinstance(raw, dict):
        raise ScenarioError(0, f"{name}: a scenario is a mapping with game, rounds, ...")
    try:
        spec = ScenarioFile.model_validate(raw)
    except ValidationError as exc:
        raise ScenarioError(0, f"{name}: {_format_error('', exc)}") from None
    cls = game_class(spec.game)
    try:
        options = cls.options_model.model_validate(spec.options)
    except ValidationError as exc:
        raise ScenarioError(0, f"{name}: {_format_error('options', exc)}") from None
    try:
        limits = TableLimits.model_validate({"seats": cls.default_seats, **spec.table})
    except ValidationError as exc:
        raise ScenarioError(0, f"{name}: {_format_error('table', exc)}") from None
    return Scenario(spec, cls(options), limits)


def betting_inputs(spec: RoundSpec, first: bool) -> Iterator[I.Input]:
    """The inputs before a round's cards: shuffle, DP, open, wagers, close."""
    if spec.shuffle or first:
        yield I.NewShoe()
    if spec.dp is not None:
        yield I.SetDesignatedPlayer(spec.dp)
    yield I.OpenBetting()
    for seat, spots in sorted(spec.bets.items()):
        for spot, amount in spots.items():
            yield I.PlaceWager(seat, spot, amount)
    yield I.CloseBetting()


def round_inputs(table: Table, spec: RoundSpec, round_no: int, first: bool) -> Iterator[I.Input]:
    """The inputs of one round, each chosen when the previous one has been applied to ``table``.

    Cards go in when the round asks for a card, decisions when it asks for
    a decision; ``~`` burns go in wherever they stand (declared, then seen).
    :class:`ScenarioError` when the file has too few or too many of either.
    """
    yield from betting_inputs(spec, first)
    cards = spec.shoe_cards()
    decisions = spec.decision_inputs()
    ci = di = 0
    while True:
        while ci < len(cards) and cards[ci].burn:
            yield I.DeclareBurn()
            yield I.CardSeen(cards[ci].card)
            ci += 1
        if table.phase != "dealing":
            break
        due = table.due()
        if isinstance(due, CardDue):
            if ci >= len(cards):
                raise ScenarioError(round_no, f"too few cards: a card for {due.hand} is due")
            yield I.CardSeen(cards[ci].card)
            ci += 1
        elif isinstance(due, DecisionDue):
            if di >= len(decisions):
                seats = ", ".join(f"seat {s}: {'/'.join(a)}" for s, a in due.choices.items())
                raise ScenarioError(round_no, f"a decision is due ({seats}) but the scenario has no more")
            yield decisions[di]
            di += 1
        else:  # pragma: no cover - a dealing round always waits for something
            raise ScenarioError(round_no, "the round waits for nothing but is not settled")
    if ci < len(cards):
        rest = " ".join(c.card.code for c in cards[ci:])
        raise ScenarioError(round_no, f"too many cards: {rest} left after the round settled")
    if di < len(decisions):
        rest = ", ".join(f"[{d.seat}, {d.action}]" for d in decisions[di:])
        raise ScenarioError(round_no, f"decisions left after the round settled: {rest}")


def play_round(table: Table, spec: RoundSpec, round_no: int, first: bool) -> Iterator[Event]:
    """Play one scenario round into ``table``, yielding events as they happen.

    A refused input or a tilt is illegal in a scenario: :class:`ScenarioError`.
    """
    for inp in round_inputs(table, spec, round_no, first):
        for event in table.apply(inp):
            yield event
            if event.event == "refused":
                raise ScenarioError(round_no, event.to_dict()["reason"])
            if event.event == "tilt":
                tilt = event.to_dict()
                raise ScenarioError(round_no, f"tilt ({tilt['reason']}): {tilt['detail']}")


def run_scenario(scenario: Scenario) -> Iterator[Event]:
    """Yield every event of every round; raises :class:`ScenarioError` at the first illegal step."""
    table = scenario.new_table()
    for n, spec in enumerate(scenario.spec.rounds, start=1):
        yield from play_round(table, spec, n, first=n == 1)

"""Events are immutable records to everything that reads them, and plain slotted classes at run time.

The engine builds about a dozen events per round, so they are not frozen
dataclasses at run time (see :func:`controller.events.record`); these tests
hold the promises that replace the run-time freeze: the type checker refuses
an assignment to any event's field, and every event keeps its fields,
equality, hash and wire form.
"""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from mypy import api as mypy_api

from controller import events as E

EVENT_CLASSES = [
    cls
    for _, cls in inspect.getmembers(E, inspect.isclass)
    if issubclass(cls, E.Event) and cls is not E.Event
]


def test_assigning_an_event_field_is_a_type_error(tmp_path):
    source = tmp_path / "mutate.py"
    source.write_text(
        "from controller.events import CardDealt, RoundSettled\n"
        "dealt = CardDealt(1, 'AS', 'player')\n"
        "dealt.card = 'KD'\n"
        "settled = RoundSettled(1, 'baccarat', [], 0, {})\n"
        "settled.house_net = 5\n"
    )
    out, err, status = mypy_api.run(
        ["--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), str(source)]
    )
    assert status == 1, out + err
    assert f'{source}:3: error: Property "card" defined in "CardDealt" is read-only' in out
    assert f'{source}:5: error: Property "house_net" defined in "RoundSettled" is read-only' in out


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda c: c.__name__)
def test_every_event_is_a_slotted_record_whose_wire_form_follows_its_fields(cls):
    names = tuple(f.name for f in dataclasses.fields(cls))
    assert cls.__slots__ == names
    assert cls.__match_args__ == names  # what to_dict walks
    values = {name: f"v{i}" for i, name in enumerate(names)}
    event = cls(**values)
    assert event.to_dict() == {"event": cls.event, **values}
    assert list(event.to_dict()) == ["event", *names]
    assert not hasattr(event, "__dict__")  # slotted: no stray attribute can be added
    twin = cls(**values)
    assert twin == event and hash(twin) == hash(event)
    if names:
        other = cls(**{**values, names[0]: "changed"})
        assert other != event

"""docs/events.md, docs/commands.md and docs/zeromq.md agree with docs/schema/ field by field.

Why: a display developer reads the docs and validates against the schema; both must say the same.
The list of messages comes from the schema (every payload of docs/schema/asyncapi.json), so a new
event, side topic, command or reply is checked as soon as the code defines it. The docs give each
message a field list in one parseable layout (docs/events.md, "How fields are written"):

    Fields (`event.decision`):
    - `round`: int
    - `amount`: int | null — minor units; null for an action without an amount

A header line ending ``(`DEF`):`` names the schema definition (``*`` matches any suffix: the
fields common to every event, request or reply), then one bullet per field: its name (``?`` when it
may be left out), its type (``int``, ``number``, ``string``, ``bool``, ``object``, ``list``,
``null``, JSON literals for a fixed value or a closed set, the name of an object that has a field
list of its own, ``|`` between alternatives; ``"<name>"`` in a ``*`` list is the definition's own
name), then ``—`` and what it means (units, values). Objects inside messages (``Currency``,
``HeartbeatTilt``, ``ShoeDevice``...) have field lists too, so the check reaches every depth the
schema declares.
"""

from __future__ import annotations

import json
import re
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from controller.daemon.contract import ASYNCAPI_NAME, BUNDLE_NAME, SCHEMA_DIR

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("docs/events.md", "docs/commands.md", "docs/zeromq.md")
HEADER = re.compile(r"\(`([\w.*]+)`\):$")
FIELD = re.compile(r"^- `(\w+)`(\?)?: (.+?)(?: — (.*))?$")
JSON_TYPES = {"integer": "int", "number": "number", "string": "string", "boolean": "bool",
              "object": "object", "array": "list", "null": "null"}


@cache
def defs() -> dict[str, Any]:
    bundle: dict[str, Any] = json.loads((SCHEMA_DIR / BUNDLE_NAME).read_text(encoding="utf-8"))
    return dict(bundle["$defs"])


def wire_messages() -> list[str]:
    """Every message on the sockets, as asyncapi.json lists their payloads."""
    asyncapi = json.loads((SCHEMA_DIR / ASYNCAPI_NAME).read_text(encoding="utf-8"))
    names = [m["payload"]["$ref"].split("#/$defs/")[1] for m in asyncapi["components"]["messages"].values()]
    return sorted(set(names))


def documented_objects() -> list[str]:
    """The messages and every object with declared fields that they contain (at any depth)."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.split("#/$defs/")[1] not in found:
                name = ref.split("#/$defs/")[1]
                found.add(name)
                walk(defs()[name])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    messages = wire_messages()
    for name in messages:
        walk(defs()[name])
    return sorted(set(messages) | {n for n in found if "properties" in defs()[n]})


def kinds(prop: dict[str, Any]) -> frozenset[str]:
    """A property's alternatives as the docs write them: a JSON type, or the literal of a const/enum."""
    if "$ref" in prop:  # a documented object by its name (it has a field list of its own)
        name = prop["$ref"].split("#/$defs/")[1]
        return frozenset({name}) if "properties" in defs()[name] else kinds(defs()[name])
    if "const" in prop:
        return frozenset({json.dumps(prop["const"])})
    if "enum" in prop:
        return frozenset(json.dumps(value) for value in prop["enum"])
    for key in ("anyOf", "oneOf"):
        if key in prop:
            return frozenset().union(*(kinds(alt) for alt in prop[key]))
    if "type" in prop:
        types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        return frozenset(JSON_TYPES[t] for t in types)
    if "properties" in prop:
        return frozenset({"object"})
    raise AssertionError(f"no type the docs can name in {prop}")


def documented() -> dict[str, dict[str, tuple[bool, frozenset[str], str]]]:
    """Every field list of the docs: definition -> field -> (optional, alternatives, where)."""
    found: dict[str, dict[str, tuple[bool, frozenset[str], str]]] = {}
    for doc in DOCS:
        lines = (ROOT / doc).read_text(encoding="utf-8").splitlines()
        current: str | None = None
        for number, line in enumerate(lines, 1):
            where = f"{doc}:{number}"
            header = HEADER.search(line)
            if header:
                current = header.group(1)
                assert current not in found, f"{where}: a second field list for {current}"
                found[current] = {}
                continue
            if current is None:
                continue
            if line.startswith("  ") and found[current]:  # a description's continuation
                continue
            field = FIELD.match(line)
            if field is None:
                assert found[current], f"{where}: the field list of {current} has no fields"
                current = None
                continue
            name, optional, typ = field.group(1), field.group(2) == "?", field.group(3)
            assert name not in found[current], f"{where}: {current}.{name} listed twice"
            found[current][name] = (optional, frozenset(t.strip() for t in typ.split("|")), where)
    return found


def expected(name: str, lists: dict[str, dict[str, tuple[bool, frozenset[str], str]]],
             ) -> dict[str, tuple[bool, frozenset[str], str]]:
    """The fields the docs give ``name``: its own list and every ``*`` list that matches it."""
    fields = dict(lists.get(name, {}))
    for pattern, common in lists.items():
        if "*" in pattern and fnmatchcase(name, pattern):
            suffix = name.split(".", 1)[1]
            for field, (optional, alternatives, where) in common.items():
                assert field not in fields, f"{where}: {name}.{field} is also in its own list"
                own = frozenset(a.replace("<name>", suffix) for a in alternatives)
                fields[field] = (optional, own, where)
    return fields


@pytest.mark.parametrize("name", documented_objects())
def test_the_docs_give_every_field_of_the_message_as_the_schema_does(name: str) -> None:
    lists = documented()
    schema = defs()[name]
    assert "properties" in schema, name
    fields = expected(name, lists)
    assert name in lists or fields, (f"no field list for {name} in {', '.join(DOCS)}: add "
                                     f"'Fields (`{name}`):' and one line per field")
    required = set(schema.get("required", []))
    problems = []
    for field, prop in schema["properties"].items():
        if field not in fields:
            problems.append(f"{name}.{field} ({' | '.join(sorted(kinds(prop)))}) is not documented")
            continue
        optional, alternatives, where = fields[field]
        if optional != (field not in required):
            mark, said = ("?", "optional") if field not in required else ("", "required")
            problems.append(f"{where}: {name}.{field} is {said} in the schema: write `{field}`{mark}:")
        if alternatives != kinds(prop):
            problems.append(f"{where}: {name}.{field} is documented {' | '.join(sorted(alternatives))}, "
                            f"the schema says {' | '.join(sorted(kinds(prop)))}")
    for field, (_, _, where) in fields.items():
        if field not in schema["properties"]:
            problems.append(f"{where}: {name}.{field} is documented but the schema has no such field")
    assert not problems, "\n".join(problems)


def test_every_field_list_of_the_docs_is_a_message_of_the_schema() -> None:
    messages = documented_objects()
    for pattern, fields in documented().items():
        where = next(iter(fields.values()))[2] if fields else pattern
        matched = [m for m in messages if fnmatchcase(m, pattern)]
        assert matched, f"{where}: {pattern} is no message of docs/schema/"


def test_the_checker_sees_a_wrong_type_a_missing_null_and_a_missing_field() -> None:
    """The comparison can fail: a schema property and docs lines that disagree are told apart."""
    assert kinds({"anyOf": [{"type": "integer"}, {"type": "null"}]}) == {"int", "null"}
    assert kinds({"enum": ["on", "blink"], "type": "string"}) == {'"on"', '"blink"'}
    assert kinds({"const": True, "type": "boolean"}) == {"true"}
    assert kinds({"anyOf": [{"$ref": "#/$defs/Currency"}, {"type": "null"}]}) == {"Currency", "null"}
    match = FIELD.match("- `amount`?: int | null — minor units")
    assert match is not None and match.groups() == ("amount", "?", "int | null", "minor units")
    assert FIELD.match("- amount: int") is None

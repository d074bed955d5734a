"""The machine-readable contract: JSON Schema (draft 2020-12) and AsyncAPI 3, generated from the code.

Why generated: a display developer in another language codes against the
schema, so it must say exactly what the daemon sends. Every event schema
comes from its dataclass in :mod:`controller.events` (pydantic's
``TypeAdapter``), the side topics, snapshot exchange and replies from
:mod:`controller.daemon.messages`, and the command requests from the field
tables of :mod:`controller.daemon.commands`, and the lines of ``croupier
journal export`` from :mod:`controller.daemon.journal_export`; nothing is
written twice by hand. ``python -m controller.daemon.contract`` rewrites docs/schema/;
``--check`` fails when the committed files differ (tests/test_contract.py
runs the same comparison and validates a real session of each game).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Final

from pydantic import TypeAdapter

from controller import events as ev
from controller.daemon import journal_export
from controller.daemon import messages as msg
from controller.daemon.commands import INPUT_COMMANDS, MAX_TEXT, QUERIES, TEXT_LIMITS
from controller.daemon.private import write_atomic
from controller.daemon.requests import MAX_INT
from controller.daemon.topics import SIDE_TOPICS

SCHEMA_DIR: Final = Path(__file__).resolve().parents[2] / "docs" / "schema"
BUNDLE_NAME: Final = "croupier.schema.json"
ASYNCAPI_NAME: Final = "asyncapi.json"
DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

#: Types of command fields (commands.py) as JSON Schema types.
_JSON_TYPES: Final[dict[type, str]] = {int: "integer", str: "string", bool: "boolean", dict: "object"}
#: Objects that may carry more keys than declared (a shoe status's detail varies with the status).
_OPEN: Final = {"ShoeStatusMessage"}


def event_classes() -> list[type[ev.Event]]:
    """Every event type, in the order docs/events.md lists them (declaration order)."""
    return [cls for cls in vars(ev).values()
            if isinstance(cls, type) and issubclass(cls, ev.Event) and cls is not ev.Event]


def _close(schema: Any, name: str = "") -> Any:
    """``additionalProperties: false`` on every declared object: an undeclared key is a contract break."""
    if isinstance(schema, dict):
        if "properties" in schema and "additionalProperties" not in schema and name not in _OPEN:
            schema["additionalProperties"] = False
        for key, value in schema.items():
            _close(value, "" if key != "$defs" else "")
            if key == "$defs":
                for def_name, sub in value.items():
                    if def_name in _OPEN:
                        sub.pop("additionalProperties", None)
    elif isinstance(schema, list):
        for item in schema:
            _close(item)
    return schema


def _about(cls: type[ev.Event]) -> str:
    """The first paragraph of the event's docstring (dataclasses without one get a generated one)."""
    doc = (cls.__doc__ or "").strip()
    if not doc or doc.startswith(f"{cls.__name__}("):
        return f"The {cls.event} event (docs/events.md)."
    return " ".join(doc.split("\n\n")[0].split())


class _Bundle:
    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}

    def typed(self, name: str, typ: Any) -> dict[str, Any]:
        """Add ``typ``'s schema (and the schemas it uses) as ``$defs/name``; a reference to it."""
        schema = TypeAdapter(typ).json_schema(ref_template="#/$defs/{model}")
        for sub_name, sub in schema.pop("$defs", {}).items():
            self.defs[sub_name] = sub
        self.defs[name] = schema
        return {"$ref": f"#/$defs/{name}"}

    def event(self, cls: type[ev.Event]) -> dict[str, Any]:
        body = TypeAdapter(cls).json_schema(ref_template="#/$defs/{model}")
        assert "$defs" not in body, cls  # events are flat JSON-native records
        for key, prop in body["properties"].items():
            _refine(key, prop)
        name = f"event.{cls.event}"
        self.defs[name] = {
            "title": cls.event,
            "description": _about(cls),
            "type": "object",
            "properties": {
                "event": {"const": cls.event},
                "table": {"type": "string", "description": "the table id"},
                "seq": {"type": "integer", "minimum": 1, "description": "per table, gap-free"},
                **body["properties"],
            },
            "required": ["event", "table", "seq", *body.get("required", [])],
        }
        return {"$ref": f"#/$defs/{name}"}

    def request(self, name: str, fields: dict[str, tuple[type, bool]], about: str, journaled: bool) -> None:
        """One command's request, held to what the daemon checks before anything (docs/security.md, "What
        a client may write"): each text's length and no control characters, seats and counts from 1, an
        amount from 1 (its upper bound is the table's ``max_bet`` or ``max_credit``, in the snapshot's
        ``limits``). Before (a third-party client, 2026-12-07), a ``by`` of 65 characters or an amount
        of 0 passed the schema and was refused by the daemon."""
        props: dict[str, Any] = {"cmd": {"const": name}}
        for key, (kind, _required) in fields.items():
            prop: dict[str, Any] = {"type": _JSON_TYPES[kind]}
            if key in ("seat", "n", "round", "amount"):
                prop["minimum"] = 1
            if kind is str:
                prop.update(_text(key))
            if key == "name":
                prop.update(minLength=1)
            props[key] = prop
        props["table"] = {"type": "string", "description": "refused unapplied by a daemon of another table"}
        if journaled:
            props["ref"] = {**_text("ref"), "minLength": 1, "description": "idempotency key"}
            props["by"] = {**_text("by"), "minLength": 1, "description": "journaled as command:BY"}
        else:  # queries take and ignore them (one parser for every command), held to the same lengths
            props["ref"] = {**_text("ref"), "minLength": 1}
            props["by"] = {**_text("by"), "minLength": 1}
        self.defs[f"request.{name}"] = {
            "title": name, "description": about, "type": "object", "properties": props,
            "required": ["cmd", *[k for k, (_t, req) in fields.items() if req]],
        }


#: No control characters: the daemon refuses a request's text with any (commands.check_text).
NO_CONTROL: Final = "^[^\\u0000-\\u001f\\u007f]*$"


def _text(key: str) -> dict[str, Any]:
    """A request's text field as :func:`controller.daemon.commands.check_text` holds it."""
    return {"type": "string", "maxLength": TEXT_LIMITS.get(key, MAX_TEXT), "pattern": NO_CONTROL}


#: A card as the wire writes it (rank, suit), or "" where a field has none (a device tilt's card).
CARD_PATTERN = "^([2-9TJQKA][CDHS])?$"
#: One settlement line (docs/scenarios.md): what a (seat, spot) staked and its net.
SETTLEMENT_LINE = {
    "type": "object", "additionalProperties": False, "required": ["seat", "spot", "stake", "net"],
    "properties": {"seat": {"type": "integer", "minimum": 1}, "spot": {"type": "string", "minLength": 1},
                   "stake": {"type": "integer", "minimum": 0}, "net": {"type": "integer"}},
}


def _refine(key: str, prop: dict[str, Any]) -> None:
    """What an event field's type alone does not say, by its name: a seat from 1, an amount, a stake and
    credits never negative, a card a card, a settlement line its four fields (a third party's validator
    took a negative wager and a line without its stake, a review found, 2026-12-07). That the house's
    net is minus the lines' is a sum no schema says: docs/events.md does."""
    kinds = {prop.get("type"), *(p.get("type") for p in prop.get("anyOf", []))}
    if key == "seat" and "integer" in kinds:
        prop["minimum"] = 1
    elif key in ("amount", "stake", "credits") and prop.get("type") == "integer":
        prop["minimum"] = 0
    elif key == "credits" and prop.get("type") == "object":
        prop["additionalProperties"] = {"type": "integer", "minimum": 0}
    elif key == "card" and prop.get("type") == "string":
        prop["pattern"] = CARD_PATTERN
    elif key == "settlements" and prop.get("type") == "array":
        prop["items"] = SETTLEMENT_LINE


def build_schema() -> dict[str, Any]:
    """The bundle: every message under ``$defs``, plus one union per socket's messages."""
    b = _Bundle()
    event_refs = [b.event(cls) for cls in event_classes()]
    b.defs["event"] = {"description": "Any table event (PUB topic <table>.<event>).", "oneOf": event_refs}
    side = [b.typed("Lamps", msg.Lamps), b.typed("Heartbeat", msg.Heartbeat),
            b.typed("ShoeStatusMessage", msg.ShoeStatusMessage),
            b.typed("JournalFaultMessage", msg.JournalFaultMessage)]
    b.defs["ShoeStatusMessage"]["properties"]["event"]["pattern"] = "^shoe_"
    b.defs["side_topic"] = {"description": "A side-topic message (no seq): lamps, heartbeat, shoe_status, "
                            "journal_fault.", "oneOf": side}
    b.typed("SnapshotRequest", msg.SnapshotRequest)
    b.defs["SnapshotRequest"]["properties"]["since"].update(minimum=0, maximum=MAX_INT)
    b.defs["SnapshotRequest"]["properties"]["journal_id"].update(minLength=1, maxLength=64)
    b.typed("SnapshotReply", msg.SnapshotReply)
    b.typed("ErrorReply", msg.ErrorReply)
    b.typed("InputReply", msg.InputReply)
    for name, typ in msg.QUERY_REPLIES.items():
        b.typed(f"reply.{name}", typ)
    for name, (fields, _build, about) in INPUT_COMMANDS.items():
        b.request(name, fields, about, journaled=True)
    for name, (fields, about) in QUERIES.items():
        b.request(name, fields, about, journaled=False)
    b.defs["command_request"] = {
        "description": "Any command (docs/commands.md).",
        "oneOf": [{"$ref": f"#/$defs/request.{n}"} for n in [*INPUT_COMMANDS, *QUERIES]],
    }
    currency = b.defs["Currency"]["properties"]  # what the table file allows (config.CurrencySpec)
    currency["code"].update(pattern="^([A-Z]{3})?$", description="ISO 4217 (EUR), or \"\" when the table "
                            "file names none: show amounts without a code; never a guessed one")
    currency["minor_units"].update(minimum=0, maximum=4, description="decimals: 99500 is 995.00 with 2")
    for name in SIDE_TOPICS:  # readers tell a side topic from an event by the missing seq: never allow one
        b.defs[name]["not"] = {"description": "a side topic never has a seq", "properties": {"seq": {}},
                               "required": ["seq"], "additionalProperties": True}
    for definition in b.defs.values():  # missed or replied events are events
        events = definition.get("properties", {}).get("events")
        if events is not None:
            events["items"] = {"$ref": "#/$defs/event"}
    bundle: dict[str, Any] = {
        "$schema": DIALECT,
        "$id": BUNDLE_NAME,
        "title": "Croupier table daemon: wire messages",
        "description": "Generated by python -m controller.daemon.contract from controller/events.py, "
        "controller/daemon/messages.py and controller/daemon/commands.py; do not edit.",
        "$defs": dict(sorted(b.defs.items())),
    }
    _close(bundle)
    return bundle


def _message(name: str, ref: str, summary: str) -> dict[str, Any]:
    return {"name": name, "summary": summary, "contentType": "application/json",
            "payload": {"$ref": f"{BUNDLE_NAME}#/$defs/{ref}"}}


def build_asyncapi(schema: dict[str, Any]) -> dict[str, Any]:
    """AsyncAPI 3: the three sockets, their topics, and each message pointing into the bundle."""
    defs = schema["$defs"]
    messages: dict[str, Any] = {}
    for name in (d for d in defs if d.startswith("event.")):
        event = name.removeprefix("event.")
        messages[f"event_{event}"] = _message(event, name, defs[name]["description"])
    for name, topic in SIDE_TOPICS.items():
        messages[f"side_{topic}"] = _message(topic, name, f"<table>.{topic} side topic (no seq)")
    messages["snapshot_request"] = _message("snapshot_request", "SnapshotRequest",
                                            "{} or {since, journal_id}")
    messages["snapshot_reply"] = _message("snapshot_reply", "SnapshotReply", "the state at seq")
    messages["error_reply"] = _message("error_reply", "ErrorReply", "a refused or invalid request")
    messages["input_reply"] = _message("input_reply", "InputReply", "an input command applied")
    for name in (d for d in defs if d.startswith("request.")):
        cmd = name.removeprefix("request.")
        messages[f"command_{cmd}"] = _message(cmd, name, defs[name]["description"])
    for name in (d for d in defs if d.startswith("reply.")):
        cmd = name.removeprefix("reply.")
        messages[f"reply_{cmd}"] = _message(f"{cmd}_reply", name, f"the {cmd} query's reply")

    def refs(prefix: str) -> dict[str, Any]:
        return {k: {"$ref": f"#/components/messages/{k}"} for k in messages if k.startswith(prefix)}

    table_param = {"description": "the table id (table: in the table file)"}
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "Croupier table daemon",
            "version": str(ev.EVENTS_VERSION),
            "description": "One daemon per table; ZeroMQ sockets bound by the daemon (docs/zeromq.md, "
            "docs/commands.md). Each PUB message is two frames: the topic, then the JSON payload. "
            f"Payload schemas are JSON Schema draft 2020-12 in {BUNDLE_NAME}. Generated; do not edit.",
        },
        "defaultContentType": "application/json",
        "servers": {
            name: {"host": f"127.0.0.1:{port}", "protocol": "zmq", "description": about}
            for name, port, about in (
                ("pub", 5556, "PUB: every event and side topic (zeromq.pub)"),
                ("snapshot", 5557, "ROUTER: the clone-pattern snapshot (zeromq.snapshot); use REQ"),
                ("command", 5558, "ROUTER: operator commands (zeromq.command); use REQ"),
            )
        },
        "channels": {
            "events": {"address": "{table}.{event}", "servers": [{"$ref": "#/servers/pub"}],
                       "parameters": {"table": table_param, "event": {"description": "the event name"}},
                       "messages": refs("event_")},
            "sideTopics": {"address": "{table}.{topic}", "servers": [{"$ref": "#/servers/pub"}],
                           "parameters": {"table": table_param,
                                          "topic": {"enum": list(SIDE_TOPICS.values())}},
                           "messages": refs("side_")},
            "snapshotRequests": {"address": None, "servers": [{"$ref": "#/servers/snapshot"}],
                                 "messages": refs("snapshot_request")},
            "snapshotReplies": {"address": None, "servers": [{"$ref": "#/servers/snapshot"}],
                                "messages": {**refs("snapshot_reply"), **refs("error_reply")}},
            "commands": {"address": None, "servers": [{"$ref": "#/servers/command"}],
                         "messages": refs("command_")},
            "commandReplies": {"address": None, "servers": [{"$ref": "#/servers/command"}],
                               "messages": {**refs("reply_"), **refs("input_reply"), **refs("error_reply")}},
        },
        "operations": {
            "receiveEvents": {"action": "receive", "channel": {"$ref": "#/channels/events"}},
            "receiveSideTopics": {"action": "receive", "channel": {"$ref": "#/channels/sideTopics"}},
            "requestSnapshot": {"action": "send", "channel": {"$ref": "#/channels/snapshotRequests"},
                                "reply": {"channel": {"$ref": "#/channels/snapshotReplies"}}},
            "sendCommand": {"action": "send", "channel": {"$ref": "#/channels/commands"},
                            "reply": {"channel": {"$ref": "#/channels/commandReplies"}}},
        },
        "components": {"messages": messages},
    }


def rendered() -> dict[str, str]:
    """File name -> text, exactly as committed in docs/schema/."""
    schema = build_schema()
    return {BUNDLE_NAME: json.dumps(schema, indent=1) + "\n",
            ASYNCAPI_NAME: json.dumps(build_asyncapi(schema), indent=1) + "\n",
            journal_export.EXPORT_NAME: journal_export.rendered()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m controller.daemon.contract", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/schema/ is not up to date")
    parser.add_argument("--dir", type=Path, default=SCHEMA_DIR, help="where the files are (docs/schema)")
    args = parser.parse_args(argv)
    stale = []
    for name, text in rendered().items():
        path = args.dir / name
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            stale.append(str(path))
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(path, text, mode=0o644)  # committed documents: everyone reads them
    if args.check and stale:
        print("out of date (run python -m controller.daemon.contract): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

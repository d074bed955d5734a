"""What a client of a table reads off its command and snapshot sockets, checked before it is used.

Whatever answers at an endpoint may be another program, or a peer sending damaged or hostile bytes, so
a reply is refused with :class:`BadReply`, naming the endpoint and what was wrong, before anything
reads it: never another exception out of ``croupier ctl``, ``watch`` or a display's loop (a fuzz
review found a RecursionError from a deeply nested reply, and a KeyError and an AttributeError from
a snapshot without ``seq`` or with ``lamps`` that is no object: tests/test_fuzz_client_replies.py).
Apart from controller.daemon.client, which sends and follows: these are the protocol's rules
(docs/zeromq.md, ``SnapshotReply``), in one place for the command client and the Subscriber.
"""

from __future__ import annotations

import json
from typing import Any

from controller.quote import quote


class BadReply(RuntimeError):
    """Something answered, but not with a Croupier reply (JSON object): the wrong kind of socket?"""


def decode_reply(endpoint: str, data: bytes) -> dict[str, Any]:
    """``data``, the reply ``endpoint`` sent, as a JSON object; BadReply if it is not one. Python's JSON
    parser recurses, so a reply nested a few thousand deep raises RecursionError: a bad reply too."""
    try:
        reply = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        reply = None
    if not isinstance(reply, dict):
        raise BadReply(f"{endpoint} answered {data[:60]!r}, not a Croupier reply (a JSON object)")
    return reply


def check_snapshot(endpoint: str, reply: dict[str, Any]) -> dict[str, Any]:
    """``reply``, an ``ok`` snapshot reply from ``endpoint``, if a follower can draw from it and go on
    (the fields the clone pattern reads: docs/zeromq.md, steps 2 to 5); BadReply saying which field is
    wrong otherwise. Checked whole before use, so a follower never takes half of a bad reply."""
    problem = _snapshot_problem(reply)
    if problem is not None:
        raise BadReply(f"{endpoint} answered a snapshot {problem}: not a Croupier snapshot reply "
                       "(docs/zeromq.md)")
    return reply


def _is_seq(value: object) -> bool:
    """A ``seq``: an integer from 0 (JSON's ``true`` is no number, though Python's bool is an int)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _shown(reply: dict[str, Any], name: str) -> str:
    """A field as an error shows it: missing, or its value cut short (a reply may be hundreds of KB)."""
    return "missing" if name not in reply else quote(reply[name])


def _snapshot_problem(reply: dict[str, Any]) -> str | None:
    """What makes ``reply`` no snapshot to draw from (``whose ...``), or None."""
    if not _is_seq(reply.get("seq")):
        return f"whose seq is {_shown(reply, 'seq')}, not an integer from 0"
    for name in ("journal_id", "run"):
        if not isinstance(reply.get(name), str):
            return f"whose {name} is {_shown(reply, name)}, not a string"
    if not isinstance(reply.get("state"), dict):
        return f"whose state is {_shown(reply, 'state')}, not an object"
    if "lamps" in reply and not isinstance(reply["lamps"], dict):
        return f"whose lamps are {_shown(reply, 'lamps')}, not an object"
    events = reply.get("events", [])
    if not isinstance(events, list) or not all(isinstance(e, dict) and _is_seq(e.get("seq")) for e in events):
        return f"whose events are {_shown(reply, 'events')}, not a list of events each with its seq"
    return None


def check_message(endpoint: str, numbered: bool, data: bytes) -> dict[str, Any]:
    """A message off the events socket ``endpoint`` (``numbered``: on an event's topic, not a side
    topic's), if a follower can apply it; BadReply naming what is wrong otherwise: the fields the clone
    pattern reads of an event (its ``seq``) and of a heartbeat (docs/zeromq.md, step 5). Only the daemon
    publishes there, so a bad message is a fault to stop on and say, never one to skip quietly: a
    follower that skipped it would show a table it no longer follows. The one reading of a published
    message for the Subscriber and the display's feed (:mod:`signage.feed`)."""
    problem: str | None
    try:
        message = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        message, problem = None, "not JSON (or nested too deep to read)"
    else:
        problem = _message_problem(message, numbered) if isinstance(message, dict) else "not a JSON object"
    if problem is not None or not isinstance(message, dict):
        raise BadReply(f"{endpoint} published {data[:60]!r}: {problem}, not a Croupier message "
                       "(docs/zeromq.md)")
    return message


def _message_problem(message: dict[str, Any], numbered: bool) -> str | None:
    """What makes a published ``message`` unusable by a follower, or None."""
    if numbered and "seq" in message and not _is_seq(message["seq"]):
        return f"its seq is {_shown(message, 'seq')}, not an integer from 0"
    if message.get("event") != "heartbeat":
        return None
    if not isinstance(message.get("journal_id"), str) or not isinstance(message.get("table", ""), str):
        return "a heartbeat without its journal_id and table as strings"
    if "last_seq" in message and not _is_seq(message["last_seq"]):
        return f"a heartbeat whose last_seq is {_shown(message, 'last_seq')}, not an integer from 0"
    if message.get("lamps") is not None and not isinstance(message["lamps"], dict):  # null: no panels
        return f"a heartbeat whose lamps are {_shown(message, 'lamps')}, not an object or null"
    return None

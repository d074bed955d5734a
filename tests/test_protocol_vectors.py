"""docs/protocol-vectors.json is what the daemon does today, and every message in it is the schema's.

Why: third parties code from our documents alone; the vectors show which reply a resend, a refusal that
keeps its ref and an invalid request get, and which events a command publishes. Recorded again here
from a real daemon (journal, CURVE keys, sockets), so a change of behaviour that leaves the file behind
fails, as a stale schema does (tests/test_contract.py)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from controller.daemon.contract import BUNDLE_NAME, SCHEMA_DIR
from controller.daemon.vectors import STAND_INS, record

pytestmark = pytest.mark.timeout(120)

VECTORS = Path(__file__).resolve().parents[1] / "docs" / "protocol-vectors.json"


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    defs = json.loads((SCHEMA_DIR / BUNDLE_NAME).read_text(encoding="utf-8"))["$defs"]
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": defs})


def _check(name: str, message: dict[str, Any]) -> None:
    errors = sorted(_validator(name).iter_errors(message), key=str)
    assert not errors, f"{name}: {errors[0].message} at {list(errors[0].absolute_path)} in {message}"


def test_the_committed_vectors_are_what_the_daemon_answers() -> None:
    committed = json.loads(VECTORS.read_text(encoding="utf-8"))
    assert committed == record(), "docs/protocol-vectors.json is stale: python -m controller.daemon.vectors"


def test_every_vector_is_the_schemas_and_says_who_answers() -> None:
    vectors = json.loads(VECTORS.read_text(encoding="utf-8"))
    for exchange in vectors["command_socket"]:
        request, reply = exchange["request"], exchange["reply"]
        if "cmd" in reply or reply["ok"]:  # an invalid request is, by definition, no request.* of the schema
            _check(f"request.{request['cmd']}", request)
        kind = f"reply.{request['cmd']}"
        kind = "ErrorReply" if not reply["ok"] else "InputReply" if "events" in reply else kind
        _check(kind, reply)
        assert reply["table"] == vectors["table"] and reply["journal_id"] == STAND_INS["journal_id"]
    for exchange in vectors["snapshot_socket"]:
        _check("SnapshotRequest", exchange["request"])
        _check("SnapshotReply", exchange["reply"])
    seqs = [message["payload"]["seq"] for message in vectors["pub_socket"]["events"]]
    assert seqs == list(range(1, len(seqs) + 1))
    for message in vectors["pub_socket"]["events"]:
        assert message["topic"] == f"{vectors['table']}.{message['payload']['event']}"
        _check("event", message["payload"])
    _check("Heartbeat", vectors["pub_socket"]["heartbeat"]["payload"])
    _check("side_topic", vectors["pub_socket"]["heartbeat"]["payload"])


def test_the_vectors_show_each_answer_the_docs_promise() -> None:
    """What docs/commands.md says of refs, refusals and who answers, as the vectors hold it."""
    replies = {e["shows"].split(":")[0]: e["reply"] for e in
               json.loads(VECTORS.read_text(encoding="utf-8"))["command_socket"]}
    first, again = replies["a credit, applied"], replies["the same request resent"]
    assert again == {**first, "duplicate": True}
    assert replies["another body under a used ref"]["ref_reused"]
    assert replies["a command the key's role may not send"]["denied"]
    assert replies["a seat the table lacks"]["cmd"] == "credit_in"
    assert "cmd" not in replies["an invalid request"]
    assert replies["meant for another table"]["wrong_table"]
    refused = replies["a wager the table refuses (over the seat's credits)"]
    assert refused["refused"] and refused["row"] and refused["seq"]

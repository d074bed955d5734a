"""Golden vectors of the daemon's protocol: one recorded session, every request and the reply it got.

Why: a third party writes its cashier app or its display from our documents alone (docs/zeromq.md,
docs/commands.md, the schema in docs/schema/). A schema says what a message may be; it does not say
which reply a resend gets, what a refusal that keeps its ref looks like beside an invalid request that
keeps none, or which events a command publishes. ``docs/protocol-vectors.json`` shows them, recorded from
a real daemon (journal, sockets, CURVE keys) by this module, and ``tests/test_protocol_vectors.py``
records them again and compares, so the file is what the daemon does today:

    python -m controller.daemon.vectors > docs/protocol-vectors.json

Only what differs from run to run is written as a fixed stand-in: the journal's id, the run's id and
the heartbeat's clock (:data:`STAND_INS`).
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Final

import yaml
import zmq

from controller.daemon.client import CommandClient, local_key, request_snapshot
from controller.daemon.config import load_table
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon

TABLE: Final = "bac-07"
#: The values that differ from one recording to the next, and what the file writes instead.
STAND_INS: Final = {"journal_id": "00000000-0000-4000-8000-00000000000a", "run": "00000000000000000000000b",
                    "at": 1767225600.0}
#: Each exchange: the key that sends it (its role), what it shows, the request.
SESSION: Final[list[tuple[str, str, dict[str, Any]]]] = [
    ("operator", "a credit, applied: the reply carries the events it published",
     {"cmd": "credit_in", "seat": 1, "amount": 100000, "ref": "cage-1", "by": "cage 2"}),
    ("operator", "the same request resent: the first reply, repeated, with duplicate",
     {"cmd": "credit_in", "seat": 1, "amount": 100000, "ref": "cage-1", "by": "cage 2"}),
    ("operator", "another body under a used ref: refused naming both, nothing done",
     {"cmd": "credit_in", "seat": 1, "amount": 90000, "ref": "cage-1", "by": "cage 2"}),
    ("observer", "a command the key's role may not send: denied, and kept under its ref",
     {"cmd": "credit_in", "seat": 2, "amount": 5000, "ref": "obs-1"}),
    ("operator", "a seat the table lacks: refused before the journal, naming its cmd (kept under the ref)",
     {"cmd": "credit_in", "seat": 9, "amount": 100, "ref": "cage-2"}),
    ("operator", "an invalid request: no cmd in the reply, nothing kept under the ref",
     {"cmd": "credit_in", "seat": 1, "ref": "cage-3"}),
    ("operator", "meant for another table: refused unapplied",
     {"cmd": "ping", "table": "bac-99"}),
    ("operator", "a new shoe", {"cmd": "new_shoe", "ref": "shoe-1"}),
    ("operator", "betting opens", {"cmd": "open", "ref": "round-1-open"}),
    ("operator", "a wager", {"cmd": "bet", "seat": 1, "spot": "player", "amount": 1000, "ref": "bet-1"}),
    ("operator", "a wager the table refuses (over the seat's credits): journaled, a refused event",
     {"cmd": "bet", "seat": 1, "spot": "tie", "amount": 200000, "ref": "bet-2"}),
    ("operator", "the same wager by the generic input command",
     {"cmd": "input", "input": {"input": "place_wager", "seat": 1, "spot": "tie", "amount": 100},
      "ref": "bet-3"}),
    ("operator", "no more bets", {"cmd": "close", "ref": "round-1-close"}),
    ("operator", "a burn declared, then its card", {"cmd": "burn", "ref": "burn-1"}),
    ("operator", "the burned card", {"cmd": "card", "card": "QS", "ref": "card-1"}),
    ("operator", "Player's first card", {"cmd": "card", "card": "5C", "ref": "card-2"}),
    ("operator", "Player's second card", {"cmd": "card", "card": "3D", "ref": "card-3"}),
    ("operator", "Banker's first card", {"cmd": "card", "card": "2H", "ref": "card-4"}),
    ("operator", "Banker's second card: Player's natural 8 beats 3, the round settles",
     {"cmd": "card", "card": "AS", "ref": "card-5"}),
    ("observer", "a query", {"cmd": "meters", "seat": 1}),
]


def _table_file(folder: Path) -> Path:
    data = {"table": TABLE, "game": "baccarat", "seats": 7,
            "limits": {"unit": 100, "min_bet": 100, "max_bet": 1_000_000},
            "zeromq": {"pub": f"ipc://{folder}/pub", "snapshot": f"ipc://{folder}/snap",
                       "command": f"ipc://{folder}/cmd"},
            "state_dir": str(folder / "state")}
    path = folder / f"{TABLE}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _stand_in(value: Any, real: dict[str, Any]) -> Any:
    """``value`` with the recording's own ids and clock replaced by :data:`STAND_INS`."""
    if isinstance(value, dict):
        return {k: STAND_INS[k] if k in STAND_INS and k in real and v == real[k] else _stand_in(v, real)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_stand_in(v, real) for v in value]
    return value


class Published(threading.Thread):
    """Every message on a PUB socket under ``prefix`` (all: ``""``), as (topic, payload), read on a thread
    of its own until :attr:`stop` is set (the recording here, and the session tests of the contract)."""

    def __init__(self, endpoint: str, prefix: str = "") -> None:
        super().__init__(daemon=True)
        self.sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.SUB)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.SUBSCRIBE, prefix.encode())
        self.sock.connect(endpoint)
        self.messages: list[tuple[str, dict[str, Any]]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            if self.sock.poll(50):
                topic, data = self.sock.recv_multipart()
                self.messages.append((topic.decode(), json.loads(data)))
        self.sock.close()

    def wait(self, found: Any, what: str, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for _topic, payload in list(self.messages):
                if found(payload):
                    return payload
            time.sleep(0.02)
        raise TimeoutError(f"no {what} on the PUB socket within {timeout:g} s")


def record() -> dict[str, Any]:
    """The session of :data:`SESSION` against a real daemon in a temporary folder, as the file holds it."""
    with tempfile.TemporaryDirectory(prefix="croupier-vectors-") as tmp:
        config = load_table(_table_file(Path(tmp)))
        z = config.spec.zeromq
        keys = {role: local_key(config, role, f"{role}-1") for role in ("operator", "observer")}
        published = Published(z.pub, f"{TABLE}.")
        with DaemonThread(Daemon(config, use_shoe=False, fsync=False)) as running:
            published.start()
            try:
                published.wait(lambda p: p.get("event") == "heartbeat", "heartbeat")
                clients = {role: CommandClient(z.command, timeout=10, key=key) for role, key in keys.items()}
                exchanges: list[dict[str, Any]] = []
                for role, shows, request in SESSION:
                    reply = clients[role].send_raw(json.dumps(request).encode())
                    exchanges.append({"shows": shows, "key_role": role, "request": request, "reply": reply})
                for client in clients.values():
                    client.close()
                last = max(e["reply"].get("seq", 0) for e in exchanges)
                real: dict[str, Any] = {"journal_id": exchanges[0]["reply"]["journal_id"],
                                        "run": running.daemon.run_id}
                followed = {"since": 3, "journal_id": real["journal_id"]}
                snapshots: list[tuple[str, dict[str, Any]]] = [
                    ("the whole state and its seq: draw it", {}),
                    ("the events after seq 3 of the journal the client follows", followed),
                    ("another journal named: the state alone, redraw", {"since": 3, "journal_id": "f" * 32}),
                ]
                replies = [{"shows": shows, "request": req,
                            "reply": request_snapshot(z.snapshot, req.get("since"),
                                                      journal_id=req.get("journal_id"))}
                           for shows, req in snapshots]
                beat = published.wait(lambda p: p.get("event") == "heartbeat" and p["last_seq"] == last,
                                      "heartbeat at the last seq")
                real["at"] = beat["at"]
            finally:
                published.stop.set()
                published.join()
        events = [{"topic": t, "payload": p} for t, p in published.messages if "seq" in p]
    vectors: dict[str, Any] = _stand_in({
        "about": __doc__.split("\n\n")[0] if __doc__ else "",
        "table": TABLE,
        "command_socket": exchanges,
        "snapshot_socket": replies,
        "pub_socket": {"events": events, "heartbeat": {"topic": f"{TABLE}.heartbeat", "payload": beat}},
    }, real)
    return vectors


def main(argv: list[str] | None = None) -> int:
    del argv
    logging.getLogger().setLevel(logging.ERROR)  # the denied request's warning is the session's, not news
    sys.stdout.write(json.dumps(record(), indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

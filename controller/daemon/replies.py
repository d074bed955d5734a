"""The daemon's answers: commands checked and dispatched, its queries, snapshot replies and heartbeats.

Each reply is built from the daemon's state on its loop thread, so it is
consistent with the events published so far; an invalid or forbidden request
changes nothing and says why (docs/commands.md, docs/zeromq.md).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from controller.daemon import resend
from controller.daemon.auth import permitted
from controller.daemon.commands import (
    CommandError,
    InputCommand,
    Query,
    WrongTable,
    error_reply,
    parse_command,
)
from controller.daemon.heartbeat import heartbeat_payload
from controller.daemon.host import DaemonHost
from controller.daemon.journal import JournalFault, open_readonly, starting_limits
from controller.daemon.keys import KeyInfo
from controller.daemon.recall import recall_from_journal
from controller.daemon.requests import RequestError, parse_snapshot_request
from controller.daemon.shoe_events import shoe_command
from controller.table import Table
from drivers.shoe.linehealth import shoe_health


def journal_fault_reply(cmd: str, fault: JournalFault, known: bool = True) -> dict[str, Any]:
    """The answer to every input once the journal cannot be written: the reason, never "internal error".
    ``known``: False when the input's ref could not be looked up, so whether it was applied is unknown."""
    what = ("this input was not applied" if known else
            "whether this ref's input was applied could not be read (do not act on it as refused)")
    return error_reply(
        f"journal fault: {fault}: the table is halted and {what}; "
        "restart the daemon once the journal can be written (and resend with the same ref)",
        cmd=cmd, journal_fault=True,
    )


def identify(d: DaemonHost, reply: dict[str, Any]) -> dict[str, Any]:
    """Every reply says which table and which journal answered (``table``, ``journal_id``)."""
    reply.setdefault("table", d.config.table_id)
    reply["journal_id"] = d.journal_id
    return reply


async def handle_command(d: DaemonHost, payload: bytes, caller: KeyInfo) -> dict[str, Any]:
    """One request from ``caller``'s key, one reply; an invalid or forbidden one changes nothing."""
    service = d.service
    assert service is not None
    try:
        limits = service.table.limits  # in force: a change of the table file's may wait for the round's end
        parsed = parse_command(payload, limits.seats, d.config.table_id, limits,
                               d.config.spec.currency.currency())
    except WrongTable as exc:
        return error_reply(str(exc), wrong_table=True)
    except CommandError as exc:
        try:
            resent = resend.taken_before(service, payload, caller.name, error_reply(str(exc)))
        except JournalFault as fault:
            d.journal_faulted(fault)
            return journal_fault_reply("", fault, known=False)
        if isinstance(resent, dict):
            return resent  # refused now, or as it was first (a resend of a refusal: controller.daemon.resend)
        parsed = resent  # taken under the limits before a change: answered as it was first
    if not permitted(caller.role, parsed.name):
        # A resend of what the key sent while its role allowed it gets its first reply: the key is
        # told what happened, and nothing more is done (a "denied" would read as never applied).
        try:
            first = resend.repeat(service, parsed, caller.name) if isinstance(parsed, InputCommand) else None
        except resend.RefUnread as exc:
            d.journal_faulted(exc.fault)
            return journal_fault_reply(parsed.name, exc.fault, known=False)
        if first is not None and (first.get("duplicate") or first.get("ref_reused")):
            return first  # another body under a used ref is refused naming both, whatever the role
        assert d.guard is not None
        d.guard.refusals.warning(f"key {caller.name!r}", "refused %s from key %r: role %s may not",
                                 parsed.name, caller.name, caller.role)
        denied = error_reply(f"{parsed.name}: key {caller.name!r} has role {caller.role}, which may not "
                             f"send it (docs/security.md)", cmd=parsed.name, denied=True)
        # Kept under its ref: a resend once the role allows it is denied again, not applied as new.
        if isinstance(parsed, InputCommand):
            return resend.refuse(service, parsed, caller.name, denied)
        return denied
    if isinstance(parsed, Query) and parsed.name == "shoe":
        return await shoe_command(d, parsed.args["action"], caller.name)
    if isinstance(parsed, InputCommand):
        try:
            return resend.run(service, d.submit, parsed, caller.name)
        except resend.RefUnread as exc:
            d.journal_faulted(exc.fault)
            return journal_fault_reply(parsed.name, exc.fault, known=False)
        except JournalFault as exc:
            d.journal_faulted(exc)  # once: a failed read of a ref faults the journal too
            return journal_fault_reply(parsed.name, exc)
    return await _query(d, parsed)


async def _query(d: DaemonHost, q: Query) -> dict[str, Any]:
    service = d.service
    assert service is not None
    if q.name == "ping":
        return {
            "ok": True,
            "cmd": "ping",
            "table": d.config.table_id,
            "seq": service.seq,
            "currency": d.config.spec.currency.model_dump(),  # how ctl reads typed amounts
        }
    if q.name == "snapshot":
        return {"ok": True, "cmd": "snapshot", **service.snapshot(), "journal_id": d.journal_id,
                "run": d.run_id}
    if q.name == "status":
        return {
            "ok": True,
            "cmd": "status",
            **service.status(),
            "shoe_device": _shoe_device(d),
            "camera": d.camera.status() if d.camera is not None else None,
            "gpio": _gpio_status(d),
            "uptime": round(time.time() - d.started, 1),
            "selftest": d.selftest.to_dict(),
            "fsync": d.fsync,
        }
    if q.name == "meters":
        return meters_reply(service.table, service.seq, q.args.get("seat"))
    assert q.name == "recall"
    return await _recall(d, q.args.get("n"), q.args.get("round"))


def meters_reply(table: Table, seq: int, seat: int | None = None) -> dict[str, Any]:
    """The ``meters`` reply: the period's meters (all seats', or ``seat``'s) and since when they run."""
    meters = table.meters_dict()
    since = meters["since"]
    if seat is not None:
        if str(seat) not in meters["seats"]:
            when = "never been seated" if not since["round"] else (
                f"not been seated since the meters restarted after round {since['round']}")
            return error_reply(f"meters: seat {seat} has {when}")
        meters["seats"] = {str(seat): meters["seats"][str(seat)]}
    # ``table`` is the table's id in every reply; its meters are ``totals``.
    return {"ok": True, "cmd": "meters", "seq": seq, "totals": meters["table"], "seats": meters["seats"],
            "since": since}


def _shoe_device(d: DaemonHost) -> dict[str, Any] | None:
    """The ``status`` reply's ``shoe_device``: the port, the line and what the table makes of it."""
    if d.shoe_profile is None:
        return None
    connected = d.shoe.reader.connected if d.shoe is not None else False
    return {
        "port": d.shoe_profile.port,
        "protocol": d.shoe_profile.protocol,
        "connected": connected,
        # What the table makes of it: a shoe that cannot be opened or went away is offline.
        "state": "connected" if connected else "device_offline",
        "last_status": d.shoe_status,
        **(shoe_health(d.shoe.reader) if d.shoe is not None else {}),
        **(d.dispenser.view() if d.dispenser is not None else {"mode": "reader"}),
    }


def _gpio_status(d: DaemonHost) -> dict[str, Any] | None:
    if d.gpio is None:
        return None
    gpio = d.config.spec.gpio
    return {"backend": gpio.backend if gpio else None, "maps": [name for name, _ in d.config.panels],
            "control": d.gpio.control_endpoint,
            "lamps": d.gpio.lamps_payload(d.config.table_id)}


async def _recall(d: DaemonHost, n: int | None, round_no: int | None) -> dict[str, Any]:
    service = d.service
    assert service is not None
    current = service.table.round_no
    if round_no is not None:
        if round_no > current:
            return error_reply(f"recall: round {round_no} has not been played (last round {current})")
        need = current - round_no + 1
    else:
        need = n or 10
    rounds = service.recorder.last(need)
    if len(rounds) < min(need, current):
        # Older than the rounds kept in memory: rebuild from the journal, off the loop thread.
        conn, path, last = open_readonly(service.journal.path.parent)
        table = Table(d.config.new_game(), starting_limits(service.journal.header, d.config.limits))
        try:
            rounds = await asyncio.get_running_loop().run_in_executor(
                None, recall_from_journal, conn, path, table, need, min(last, service.journal.last_id)
            )
        finally:
            conn.close()
    if round_no is not None:
        rounds = [r for r in rounds if r["round"] == round_no]
        if not rounds:
            return error_reply(f"recall: round {round_no} is not in the journal")
    return {"ok": True, "cmd": "recall", "seq": service.seq, "rounds": rounds}


def snapshot_reply(d: DaemonHost, payload: bytes) -> dict[str, Any]:
    """``{}`` or ``{"since": N}`` in; the state and its seq out (plus the missed events if held)."""
    service = d.service
    assert service is not None
    try:
        since, journal_id = parse_snapshot_request(payload)
    except RequestError as exc:
        return error_reply(f"snapshot: {exc}")
    reply: dict[str, Any] = {"ok": True, **service.snapshot(), "journal_id": d.journal_id, "run": d.run_id,
                             "refused_cards": list(service.refused_cards)}
    if d.gpio is not None:
        reply["lamps"] = d.gpio.lamps_payload(d.config.table_id)
    # Missed events only make sense in the journal the client was following: a client that
    # names another journal (the state dir was replaced) gets the state alone and redraws.
    if since is not None and journal_id in (None, d.journal_id):
        events = service.events_since(since)
        if events is not None:
            reply["events"] = events
    return reply


def heartbeat(d: DaemonHost) -> dict[str, Any]:
    """The ``<table>.heartbeat`` message as things stand now."""
    assert d.service is not None
    lamps = d.gpio.lamps_payload(d.config.table_id) if d.gpio is not None else None
    return heartbeat_payload(d.config.table_id, d.journal_id, d.run_id, d.service.seq,
                             d.service.table, lamps, d.zmq_spec.heartbeat,
                             journal_fault=d.service.journal_fault(),
                             tilt=d.service.tilt_view())


async def heartbeats(d: DaemonHost, interval: float) -> None:
    """One heartbeat at once (a restarted table re-publishes its lamps), then every ``interval``."""
    while True:
        d.publish_side("heartbeat", heartbeat(d))
        await asyncio.sleep(interval)

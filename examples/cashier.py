#!/usr/bin/env python3
"""A cashier's command client, written only from docs/commands.md and docs/security.md (pyzmq, no Croupier).

It sends one command over the table's CURVE-secured command socket and, when no reply comes in time,
sends the very same request again (same ``ref``): the daemon may have journaled the first before the
reply was lost, and a resend gets the first reply, never a second credit. It prints the reply as one
JSON line and says what happened:

    python examples/cashier.py --command tcp://10.0.0.7:5558 --table baccarat_sim \\
        --key ~/croupier-keys/ann.key_secret --server-key ~/croupier-keys/server.key \\
        credit_in --seat 3 --amount 50000 --ref slip-0042

Exit 0: applied (or applied before: ``duplicate``); 1: refused by the table or the daemon, or meant for
another table (the reply says why: the slip is not paid); 2: nothing is known: no reply after every
try, a reply naming no journal, or a journal fault (the daemon could not tell whether the ref was
applied: docs/commands.md, "Errors"); resend later with the same ref, never a new one.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import zmq
import zmq.auth


def request_of(args: argparse.Namespace) -> dict[str, Any]:
    """The request as docs/commands.md writes it; ``table`` names the table meant, so a daemon of
    another table refuses it unapplied (``wrong_table``)."""
    request: dict[str, Any] = {"cmd": args.cmd, "table": args.table, "ref": args.ref}
    if args.seat is not None:
        request["seat"] = args.seat
    if args.amount is not None:
        request["amount"] = args.amount
    if args.by:
        request["by"] = args.by
    return request


def ask(endpoint: str, keys: tuple[bytes, bytes, bytes], payload: bytes, timeout_ms: int,
        ) -> dict[str, Any] | None:
    """One try on a new REQ socket (a REQ socket that timed out cannot send again): the reply, or None."""
    public, secret, server = keys
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)  # an unanswered try is dropped with its socket
    sock.curve_publickey, sock.curve_secretkey, sock.curve_serverkey = public, secret, server
    try:
        sock.connect(endpoint)
        sock.send(payload)
        if not sock.poll(timeout_ms):
            return None
        reply: dict[str, Any] = json.loads(sock.recv())
        return reply
    finally:
        sock.close()


def verdict(reply: dict[str, Any], table: str) -> tuple[int, str]:
    """Exit code and words for ``reply`` (docs/commands.md: InputReply, ErrorReply)."""
    if reply.get("wrong_table"):
        return 1, f"refused: {reply.get('error')}"
    if reply.get("journal_fault"):  # not a refusal: whether it was applied is not known (never pay it out)
        return 2, f"unknown, the table's journal is faulted: {reply.get('error')}"
    if reply.get("table") != table or not reply.get("journal_id"):
        return 2, f"answered by {reply.get('table')!r}, not table {table!r}: nothing is known"
    where = f"table {reply['table']}, journal {reply['journal_id']}"
    if reply.get("ok"):
        again = " (applied before: this is the first reply, repeated)" if reply.get("duplicate") else ""
        return 0, f"applied at row {reply['row']}, seq {reply['seq']}{again}; {where}"
    return 1, f"refused: {reply.get('error')}; {where}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--command", required=True, help="the table's command endpoint")
    parser.add_argument("--table", required=True, help="the table id the command is meant for")
    parser.add_argument("--key", required=True, help="your NAME.key_secret (public and secret key)")
    parser.add_argument("--server-key", required=True, help="the table's server.key (its public key)")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds to wait for each reply")
    parser.add_argument("--tries", type=int, default=5, help="sends of the same request before giving up")
    parser.add_argument("cmd", choices=["credit_in", "credit_out", "meters", "status"])
    parser.add_argument("--seat", type=int)
    parser.add_argument("--amount", type=int, help="minor units (cents), as the table counts money")
    parser.add_argument("--ref", required=True, help="your slip's number: the same on every resend")
    parser.add_argument("--by", help="who keyed it (journaled beside your key's name)")
    args = parser.parse_args()
    public, secret = zmq.auth.load_certificate(args.key)
    server, _ = zmq.auth.load_certificate(args.server_key)
    if secret is None:
        parser.error(f"--key {args.key}: no secret key in it (give the .key_secret file)")
    payload = json.dumps(request_of(args)).encode()
    for attempt in range(1, args.tries + 1):
        reply = ask(args.command, (public, secret, server), payload, round(args.timeout * 1000))
        if reply is not None:
            code, words = verdict(reply, args.table)
            print(json.dumps(reply), flush=True)
            print(f"{words} (try {attempt})", file=sys.stderr)
            return code
        print(f"no reply within {args.timeout:g} s (try {attempt} of {args.tries}): sending it again, "
              f"same ref", file=sys.stderr)
    print(f"no reply after {args.tries} tries: nothing is known; resend later with ref {args.ref!r}",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())

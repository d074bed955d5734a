#!/usr/bin/env python3
"""A display's feed, written only from docs/zeromq.md and docs/schema/ (pyzmq and json, no Croupier).

It follows one table and prints one JSON line per thing a display must act on:

    {"what": "redraw", "journal_id": ..., "seq": N, "credits": {...}}   drew the whole state (a snapshot)
    {"what": "event", "seq": N, "event": "credit"}                      applied one event
    {"what": "behind", "seq": N, "table_seq": M}                        a heartbeat says events were missed
    {"what": "new_journal", "old": ..., "new": ...}                     the state dir was replaced
    {"what": "stale", "silent": S} / {"what": "live"}                   the feed went quiet / came back

    python examples/follow_table.py --pub tcp://127.0.0.1:5556 --snapshot tcp://127.0.0.1:5557 \
        --table baccarat_sim

The steps are docs/zeromq.md's "How a display subscribes" (1-6), nothing else.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import zmq


def say(**line: Any) -> None:
    print(json.dumps(line), flush=True)


class Display:
    def __init__(self, ctx: Any, snapshot: str, timeout: float) -> None:
        self.ctx, self.snapshot, self.timeout = ctx, snapshot, timeout
        self.journal_id: str | None = None
        self.run: str | None = None  # the daemon run the screen was drawn from
        self.seq: int | None = None
        self.credits: dict[str, int] = {}

    def ask(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """One REQ round trip to the snapshot socket; None when nothing answers (the daemon is down)."""
        req = self.ctx.socket(zmq.REQ)
        req.setsockopt(zmq.LINGER, 0)
        req.setsockopt(zmq.IPV6, 1)
        req.connect(self.snapshot)
        try:
            req.send(json.dumps(request).encode())
            if not req.poll(int(self.timeout * 1000)):
                return None
            reply: dict[str, Any] = json.loads(req.recv())
            return reply
        finally:
            req.close()

    def sync(self) -> bool:
        """Steps 2 and 4: the state (and the missed events, if the daemon still has them)."""
        request: dict[str, Any] = {}
        if self.seq is not None and self.journal_id is not None:
            request = {"since": self.seq, "journal_id": self.journal_id}
        reply = self.ask(request)
        if reply is None or not reply.get("ok"):
            return False
        if reply["journal_id"] != self.journal_id and self.journal_id is not None:
            say(what="new_journal", old=self.journal_id, new=reply["journal_id"])
        self.run = reply["run"]
        if "events" in reply and reply["journal_id"] == self.journal_id:
            for event in reply["events"]:
                self.apply(event)
        else:
            self.journal_id = reply["journal_id"]
            self.seq = reply["seq"]
            self.credits = dict(reply["state"]["credits"])
            say(what="redraw", journal_id=self.journal_id, seq=self.seq, credits=self.credits)
        return True

    def apply(self, event: dict[str, Any]) -> None:
        """Step 3: only the next seq; a seat's credits are in the events that change them."""
        assert self.seq is not None
        if event["seq"] != self.seq + 1:
            return
        self.seq = event["seq"]
        if "credits" in event and "seat" in event:
            self.credits[str(event["seat"])] = event["credits"]
        elif isinstance(event.get("credits"), dict):
            self.credits.update(event["credits"])
        say(what="event", seq=self.seq, event=event["event"], credits=self.credits)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pub", required=True)
    parser.add_argument("--snapshot", required=True)
    parser.add_argument("--table", required=True, help="the table id (topic prefix)")
    parser.add_argument("--stale-after", type=float, default=3.0, help="seconds without any message")
    args = parser.parse_args()
    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.IPV6, 1)
    sub.setsockopt(zmq.SUBSCRIBE, f"{args.table}.".encode())
    sub.connect(args.pub)  # step 1
    display = Display(ctx, args.snapshot, timeout=2.0)
    while not display.sync():  # step 2 (retry until a daemon answers)
        time.sleep(0.5)
    heard, stale = time.monotonic(), False
    try:
        while True:
            if not sub.poll(200):
                if not stale and time.monotonic() - heard >= args.stale_after:  # step 6
                    stale = True
                    say(what="stale", silent=round(time.monotonic() - heard, 1))
                continue
            topic, data = sub.recv_multipart()
            heard = time.monotonic()
            if stale:
                stale = False
                say(what="live")
            message = json.loads(data)
            if "seq" in message:  # an event
                assert display.seq is not None
                if message["seq"] > display.seq + 1:
                    display.sync()  # step 4: a gap
                display.apply(message)
            elif topic.decode().endswith(".heartbeat"):  # step 5
                if message["journal_id"] != display.journal_id:
                    display.seq = None  # another journal: nothing of ours counts, redraw
                    display.sync()
                elif display.seq is not None and message["last_seq"] > display.seq:
                    say(what="behind", seq=display.seq, table_seq=message["last_seq"])
                    display.sync()
                elif (display.seq is not None and message["last_seq"] < display.seq
                      and message["run"] != display.run):
                    display.seq = None  # a restart onto the journal restored from a copy: seqs again, redraw
                    display.sync()
                # one behind display.seq of the run drawn from was sent before the snapshot drawn: ignored
    except KeyboardInterrupt:
        return 0
    finally:
        sub.close()
        ctx.term()


if __name__ == "__main__":
    sys.exit(main())

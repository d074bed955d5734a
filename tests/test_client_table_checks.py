"""What a following client checks of the answers (docs/zeromq.md): that the table answering is the one it
follows, and that a heartbeat behind what it shows (the journal restored from a backup, its seqs coming
again) redraws it. Before (a helper's review, 2026-12-07), a display pointed at another table's sockets
drew that table's money as its own, and events after a restore were dropped as already shown."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import zmq
import zmq.asyncio
from test_daemon_support import config_for

from controller.daemon.client import CommandClient, Subscriber, local_key
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from signage.feed import TableFeed

pytestmark = pytest.mark.timeout(60)


def test_a_display_and_a_subscriber_refuse_another_tables_snapshot(tmp_path: Path) -> None:
    config = config_for(tmp_path)  # table t1
    z = config.spec.zeromq
    with DaemonThread(Daemon(config, use_shoe=False)):
        ctx = zmq.asyncio.Context()
        try:
            feed = TableFeed("tableA", "baccarat", z.pub, z.snapshot, {}, ctx)
            assert not asyncio.run(feed.resync(None))
            problem = feed.view.problem
            assert problem is not None and "answers for table 't1', not 'tableA'" in problem
            assert feed.view.seq == 0 and not feed.synced
        finally:
            ctx.term()
        wrong = Subscriber(z.pub, z.snapshot, table="tableA")
        try:
            with pytest.raises(RuntimeError, match="answers for table 't1', not 'tableA'"):
                wrong.sync()
        finally:
            wrong.close()


def test_a_subscriber_and_a_display_redraw_for_another_run_and_ignore_an_old_heartbeat(
        tmp_path: Path) -> None:
    """A heartbeat behind what is shown, of the run drawn from, was sent before the snapshot (a follower
    that took it for a journal restored from a backup redrew at every start, a review found); one of
    another run means the daemon restarted onto an older copy of its journal: redraw."""
    config = config_for(tmp_path)
    z = config.spec.zeromq
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(z.command, key=local_key(config, "operator", "olive"))
        try:
            assert client.call("credit_in", seat=1, amount=500)["ok"]
        finally:
            client.close()
        sub = Subscriber(z.pub, z.snapshot, table="t1")
        ctx = zmq.asyncio.Context()
        try:
            first = next(iter(sub._resync()))
            assert first[0] == "snapshot" and sub.seq == 1 and sub.run == first[1]["run"]
            beat = {"event": "heartbeat", "table": "t1", "journal_id": sub.journal_id, "run": sub.run,
                    "last_seq": 0}
            assert list(sub._check(beat)) == [] and sub.seq == 1 and sub.redraws == 0
            run, sub.seq = sub.run, 9  # as if drawn at seq 9 before a restart onto a copy at seq 1
            sub.run = "an earlier run"
            assert [kind for kind, _ in sub._check({**beat, "run": run, "last_seq": 1})] == ["snapshot"]
            assert sub.seq == 1 and sub.redraws == 1 and sub.run == run
            feed = TableFeed("t1", "baccarat", z.pub, z.snapshot, {}, ctx)
            assert asyncio.run(feed.resync(None)) and feed.daemon_run == sub.run
            assert feed._take({**beat, "limits": feed.view.limits}, True) == "side"
            assert feed._take({**beat, "run": "another"}, True) == "journal"  # behind, another run
            assert feed._take({**beat, "run": "another", "last_seq": 5}, True) == "gap"  # ahead: a gap
        finally:
            sub.close()
            ctx.term()

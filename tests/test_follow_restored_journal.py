"""A follower that missed a daemon's restart onto an older copy of its journal redraws from the new run.

The copy keeps the journal's id, and once the table has played on past the seq the follower showed, its
heartbeat says only "ahead": the follower asked for the events since its seq and laid the restored
journal's events on the lost history's state (a third party's reading of docs/zeromq.md showed seat 1
at 19,000 where the daemon had 10,000; a review, 2026-12-07). Every start has its own ``run``: a follower
drawn from another run redraws from a fresh snapshot.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from test_identity import fast_config, running

from controller.daemon.client import CommandClient, Subscriber, local_key

pytestmark = pytest.mark.timeout(90)


def _credit(config: Any, *amounts: int) -> None:
    client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
    try:
        for amount in amounts:
            assert client.call("credit_in", seat=1, amount=amount)["ok"]
    finally:
        client.close()


def _shown(sub: Subscriber, credits: dict[str, int], until: int) -> list[str]:
    """Follow until the seq ``until`` is shown, keeping seat credits as a display does; what came."""
    kinds = []
    for kind, payload in sub.events(timeout=15):
        kinds.append(kind)
        if kind == "snapshot":
            credits.clear()
            credits.update(payload["state"]["credits"])
        elif kind == "event" and "credits" in payload and "seat" in payload:
            credits[str(payload["seat"])] = payload["credits"]
        if sub.seq == until:
            return kinds
    raise AssertionError(f"never reached seq {until}: {kinds}")


def test_a_follower_redraws_after_a_restart_onto_an_older_copy_of_the_journal(tmp_path: Path) -> None:
    config = fast_config(tmp_path)
    local_key(config)  # the key authorised before the first start
    runner = running(config)
    _credit(config, 1000)
    runner.stop()
    copy = tmp_path / "copy"
    shutil.copytree(config.state_dir, copy)  # last night's copy: one credit in
    runner = running(config)
    z = config.spec.zeromq
    sub = Subscriber(z.pub, z.snapshot, table=config.table_id)
    credits: dict[str, int] = {}
    try:
        _credit(config, 2000, 4000)
        _shown(sub, credits, 3)
        assert credits == {"1": 7000}
        runner.stop()  # the disk lost; the copy restored, and the table plays on past seq 3
        shutil.rmtree(config.state_dir)
        shutil.copytree(copy, config.state_dir)
        runner = running(config)
        _credit(config, 100, 100, 100)  # seqs 2, 3, 4 of the restored journal: credits 1,300
        kinds = _shown(sub, credits, 4)
        assert "snapshot" in kinds and sub.redraws == 1
        assert credits == {"1": 1300}  # the daemon's, not 7,000 + 100
    finally:
        sub.close()
        runner.stop()

"""`croupier display` and keys: a table whose file says security.curve_events is followed with a key.

docs/security.md said "an observer key is what a display gets", but the display had no way to take one: its
sockets were plain, their CURVE handshake with the table never completed, and the screen said "no live
feed" for ever. It takes `--key` (or $CROUPIER_KEY) as `watch` does, only for a table that needs one.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest
import zmq.asyncio
from test_identity import running
from test_watch_keys import curve_table

from controller.cli import main
from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import TableConfig
from signage import display_cmd
from signage.feed import TableFeed

pytestmark = pytest.mark.timeout(60)


def _feed(config: TableConfig, *options: str) -> tuple[TableFeed, zmq.asyncio.Context]:
    parser = argparse.ArgumentParser()
    display_cmd.add_arguments(parser)
    ctx = zmq.asyncio.Context()
    [feed] = display_cmd.build_feeds([config], parser.parse_args([str(config.path), *options]), ctx)
    return feed, ctx


async def _follow_until(feed: TableFeed, seq: int) -> int:
    """Run the feed (SUB, then snapshot) until it shows ``seq``; the seq it shows."""
    task = asyncio.create_task(feed.run())
    try:
        for _ in range(200):
            if feed.synced and feed.view.seq >= seq:
                break
            await asyncio.sleep(0.05)
        return feed.view.seq
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def test_a_display_follows_a_curve_events_table_with_an_observer_key(tmp_path: Path) -> None:
    config = curve_table(tmp_path)
    observer, operator = local_key(config, "observer", "screen"), local_key(config)
    runner = running(config)
    try:
        feed, ctx = _feed(config, "--key", str(observer.path))
        try:
            assert feed.key is not None and feed.key.path == observer.path
            assert asyncio.run(feed.resync(None)) and feed.view.table == "c1"
            client = CommandClient(config.spec.zeromq.command, key=operator)
            try:
                assert client.call("credit_in", seat=1, amount=500)["ok"]
                shown = feed.view.seq
                # A fresh feed: its SUB and snapshot both go through the CURVE handshake.
                again, ctx2 = _feed(config, "--key", str(observer.path))
                try:
                    assert asyncio.run(_follow_until(again, shown + 1)) == shown + 1
                finally:
                    ctx2.destroy(linger=0)
            finally:
                client.close()
        finally:
            ctx.destroy(linger=0)
    finally:
        runner.stop()


def test_a_display_of_a_curve_events_table_without_a_key_stops_saying_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = curve_table(tmp_path)
    monkeypatch.delenv("CROUPIER_KEY", raising=False)
    assert main(["display", str(config.path), "--listen", "127.0.0.1:0"]) == 2
    err = capsys.readouterr().err
    assert "table c1: its file says security.curve_events, so the display needs a key" in err, err
    monkeypatch.setenv("CROUPIER_KEY", str(tmp_path / "missing.key_secret"))
    assert main(["display", str(config.path), "--listen", "127.0.0.1:0"]) == 2
    assert "missing.key_secret" in capsys.readouterr().err


def test_a_display_of_a_plain_table_uses_no_key_whatever_croupier_key_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_identity import fast_config

    config = fast_config(tmp_path)
    monkeypatch.setenv("CROUPIER_KEY", str(tmp_path / "missing.key_secret"))  # not even read
    feed, ctx = _feed(config)
    try:
        assert feed.key is None
    finally:
        ctx.destroy(linger=0)

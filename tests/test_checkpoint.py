"""Journal checkpoints: a checkpoint plus the inputs after it rebuilds exactly what a full replay does.

Every scenario file of every game is journaled through ``TableService.submit``
with a checkpoint after every input (mid-round included); then, for every
checkpoint, a fresh service starts from it and replays the rest, and must
match the full replay: the table's snapshot, the event seq, the round records,
the ring of recent events, and every event of every input applied afterwards.
Real SQLite files in a temp dir; nothing mocked.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import stat
import time
from pathlib import Path
from typing import Any

import pytest
import zmq
from test_daemon_support import wait_subscribed

from controller import inputs as I
from controller.cards import parse_card
from controller.cli import main as cli_main
from controller.daemon import checkpoint
from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import TableConfig, parse_table
from controller.daemon.journal import Journal
from controller.daemon.recall import recall_from_journal
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.daemon.service import TableService, event_payload
from controller.scenario import Scenario, load_scenario, round_inputs
from controller.table import Table

pytestmark = pytest.mark.timeout(120)

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.yaml"))


def config_for(scenario: Scenario, state: Path) -> TableConfig:
    lim = scenario.limits
    return parse_table({
        "table": "t", "game": scenario.spec.game, "options": dict(scenario.spec.options), "seats": lim.seats,
        "limits": {"unit": lim.unit, "min_bet": lim.min_bet, "max_bet": lim.max_bet},
        "state_dir": str(state),
    }, state.parent / "t.yaml")


def scenario_inputs(scenario: Scenario) -> list[I.Input]:
    mirror = scenario.new_table()
    out: list[I.Input] = [I.CreditIn(s, a) for s, a in sorted(scenario.spec.credits.items())]
    for n, spec in enumerate(scenario.spec.rounds, start=1):
        for inp in round_inputs(mirror, spec, n, first=n == 1):
            mirror.apply(inp)
            out.append(inp)
    return out


def open_service(config: TableConfig, **kw: Any) -> TableService:
    journal = Journal.open(config.state_dir, table="t", game=config.game_name, options=config.options_dict(),
                           fsync=False)
    return TableService(config, journal, **kw)


def state_of(service: TableService) -> dict[str, Any]:
    return {
        "snapshot": service.table.snapshot(),
        "seq": service.seq,
        "rounds": service.recorder.last(1000),
        "recent": [event_payload("t", s, e) for s, e in service.recent],
    }


def with_held_cards(scenario: Scenario, inputs: list[I.Input]) -> tuple[list[I.Input], int]:
    """``inputs`` with a tilt that holds cards: the shoe lid opens before the first card that
    is due, that card (and the next, if it is a card too) arrives during the tilt and is held, the lid
    closes and the dealer takes them; the index of the lid closing is returned too."""
    mirror = scenario.new_table()
    for k, inp in enumerate(inputs):
        if isinstance(inp, I.CardSeen) and mirror.due() is not None:
            n = 2 if isinstance(inputs[k + 1], I.CardSeen) else 1
            tilt = [I.DeviceStatus("shoe lid", False, "lid open"), *inputs[k:k + n],
                    I.DeviceStatus("shoe lid", True, "lid closed")]
            return inputs[:k] + tilt + [I.TakeHeld()] * n + inputs[k + n:], k + n + 1
        mirror.apply(inp)
    raise AssertionError("no card is dealt in the scenario")


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_checkpoint_plus_tail_equals_full_replay_at_every_checkpoint(path: Path, tmp_path: Path) -> None:
    scenario = load_scenario(path)
    config = config_for(scenario, tmp_path / "state")
    inputs, lid_closed = with_held_cards(scenario, scenario_inputs(scenario))
    half = max(len(inputs) // 2, lid_closed + 1)  # checkpoints with cards held, and in the held_card tilt
    assert half < len(inputs)
    live = open_service(config, keep_rounds=1000, checkpoint_every=1, checkpoint_keep=10**6,
                        checkpoint_mid_round=True)
    live.replay()
    for inp in inputs[:half]:
        live.submit(inp, "test", at=1.0)
    live.journal.close()
    with sqlite3.connect(config.state_dir / "journal.sqlite3") as conn:
        rows = checkpoint.rows(conn)
    assert rows == list(range(1, half + 1))  # one after every input, mid-round ones included

    full = open_service(config, keep_rounds=1000, checkpoint_every=10**9)
    full.replay(checkpoint_at=0)
    assert full.replayed == half
    want = state_of(full)
    mid_tilt = [r for r in want["rounds"] if any(c["event"] == "card_held" for c in r["cards"])]
    assert len(mid_tilt) == 1, "the held cards are in the round's record"
    want_after = [[e.to_dict() for e in full.table.apply(inp)] for inp in inputs[half:]]
    full.journal.close()
    for row in rows:
        service = open_service(config, keep_rounds=1000, checkpoint_every=10**9)
        service.replay(checkpoint_at=row)
        assert service.replayed == half - row
        assert state_of(service) == want, f"checkpoint at row {row}"
        after = [[e.to_dict() for e in service.table.apply(inp)] for inp in inputs[half:]]
        assert after == want_after, f"checkpoint at row {row}: the inputs after it play differently"
        service.journal.close()


def baccarat_session(tmp_path: Path, rounds: int, **kw: Any) -> tuple[TableConfig, TableService]:
    scenario = load_scenario(Path(__file__).parent / "scenarios" / "baccarat.yaml")
    config = config_for(scenario, tmp_path / "state")
    service = open_service(config, **kw)
    service.replay()
    spec = scenario.spec.rounds
    for seat, amount in sorted(scenario.spec.credits.items()):
        service.submit(I.CreditIn(seat, amount), "test")
    for n in range(1, rounds + 1):
        for inp in round_inputs(service.table, spec[(n - 1) % len(spec)], n, first=(n - 1) % len(spec) == 0):
            service.submit(inp, "test")
    return config, service


def test_start_uses_the_newest_checkpoint_taken_at_a_round_end(tmp_path: Path) -> None:
    config, live = baccarat_session(tmp_path, 30, checkpoint_every=50)
    want = state_of(live)
    assert live.checkpoint_row > 0 and live.table.phase == "idle"
    live.journal.close()
    with sqlite3.connect(config.state_dir / "journal.sqlite3") as conn:
        rows = checkpoint.rows(conn)
    assert len(rows) == checkpoint.KEEP  # older ones pruned
    again = open_service(config)
    again.replay()
    assert again.checkpoint_row == rows[-1]
    assert again.replayed == again.journal.last_id - rows[-1]
    assert state_of(again)["snapshot"] == want["snapshot"] and again.seq == want["seq"]
    assert again.status()["journal"]["checkpoint_row"] == rows[-1]


def test_recall_still_reaches_every_round_after_a_start_from_a_checkpoint(tmp_path: Path) -> None:
    config, live = baccarat_session(tmp_path, 20, checkpoint_every=30, keep_rounds=1000)
    every_round = live.recorder.last(1000)
    live.journal.close()
    again = open_service(config, keep_rounds=5)
    again.replay()
    assert again.checkpoint_row > 0
    conn = sqlite3.connect(f"file:{again.journal.path}?mode=ro", uri=True)
    table = Table(config.new_game(), config.limits)
    rebuilt = recall_from_journal(conn, again.journal.path, table, 1000, again.journal.last_id)
    conn.close()
    assert rebuilt == every_round and [r["round"] for r in rebuilt] == list(range(1, 21))


def _tamper(config: TableConfig, sql: str) -> None:
    with sqlite3.connect(config.state_dir / "journal.sqlite3") as conn:
        conn.execute(sql)


@pytest.mark.parametrize("sql, why", [
    ("UPDATE checkpoints SET code = 'someone else'", "other engine code"),
    ("UPDATE checkpoints SET sha256 = 'x'", "fails its SHA-256"),
])
def test_a_checkpoint_it_cannot_trust_is_skipped_and_said_so(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, sql: str, why: str) -> None:
    config, live = baccarat_session(tmp_path, 10, checkpoint_every=20)
    want = state_of(live)
    live.journal.close()
    _tamper(config, sql)
    again = open_service(config)
    with caplog.at_level(logging.WARNING, logger="croupier.daemon"):
        again.replay()
    assert why in caplog.text
    assert again.replayed == again.journal.last_id  # every input, from row 1
    assert state_of(again)["snapshot"] == want["snapshot"] and again.seq == want["seq"]


def test_a_daemon_starts_from_its_checkpoint_and_a_damaged_journal_takes_the_table_offline(
        tmp_path: Path) -> None:
    """Start-up skips the whole-file checks; they run after it, and a failure halts the table, saying why."""
    config, live = baccarat_session(tmp_path, 30, checkpoint_every=50)
    live.journal.close()
    _tamper(config, "DELETE FROM inputs WHERE id = 2")  # before the checkpoint: start-up never reads it
    zmq = {k: f"ipc://{tmp_path}/{k}" for k in ("pub", "snapshot", "command")}
    raw = {"table": "t", "game": "baccarat", "seats": 7, "state_dir": str(config.state_dir), "zeromq": zmq}
    daemon_config = parse_table(raw, tmp_path / "t.yaml")
    key = local_key(daemon_config)
    with DaemonThread(Daemon(daemon_config)) as thread:
        service = thread.daemon.service
        assert service is not None and service.checkpoint_row > 2
        client = CommandClient(zmq["command"], timeout=10, key=key)
        try:
            deadline = time.monotonic() + 30
            while "journal" not in (status := client.call("status"))["offline"]:
                assert time.monotonic() < deadline, status
                time.sleep(0.01)
            assert "rows are missing" in status["offline"]["journal"]
            reply = client.call("open")
            assert reply.get("ok")
            assert client.call("bet", seat=1, spot="player", amount=100, by="dealer")["ok"]
            closing = client.call("close")
            assert "journal is offline" in json.dumps(closing)
        finally:
            client.close()


# --------------------------------------------------------------- croupier journal export|archive|verify
def test_journal_export_archive_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config, live = baccarat_session(tmp_path, 8, checkpoint_every=20)
    last = live.journal.last_id
    state = str(config.state_dir)
    assert cli_main(["journal", "export", "--state-dir", state, "--from", "3", "--to", "5"]) == 0
    header, *lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert header["journal_id"] == live.journal.header["id"] and (header["from"], header["to"]) == (3, 5)
    assert [x["row"] for x in lines] == [3, 4, 5] and all(x["source"] == "test" for x in lines)
    entries = list(live.journal.entries(3, 5))
    assert [x["input"] for x in lines] == [e.input.to_dict() for e in entries]
    dest = tmp_path / "archive.sqlite3"
    assert cli_main(["journal", "archive", "--state-dir", state, str(dest)]) == 0  # while "running"
    assert f"{last} inputs" in capsys.readouterr().out
    copy = sqlite3.connect(dest)
    assert copy.execute("SELECT COUNT(*) FROM inputs").fetchone()[0] == last
    assert copy.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] >= 1
    copy.close()
    assert cli_main(["journal", "archive", "--state-dir", state, str(dest)]) == 1
    assert "already exists" in capsys.readouterr().err
    # Private from its first byte whatever the umask (a review, 2026-12-05: 0644 under umask 022), even
    # over a stale part a crash left.
    stale = tmp_path / "open.sqlite3.part"
    stale.write_text("a crash's leftover")
    old_umask = os.umask(0)
    try:
        assert cli_main(["journal", "archive", "--state-dir", state, str(tmp_path / "open.sqlite3")]) == 0
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE((tmp_path / "open.sqlite3").stat().st_mode) == 0o600 and not stale.exists()
    # One file: nothing of its making left beside it (its checks left open.sqlite3.part-wal and -shm).
    made = ("open.sqlite3.", "archive.sqlite3.")
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(made)]
    capsys.readouterr()
    assert cli_main(["journal", "verify", "--state-dir", state]) == 0
    assert f"{last} inputs, every row parses" in capsys.readouterr().out
    live.journal.close()
    _tamper(config, "UPDATE inputs SET input = '{not json' WHERE id = 4")
    assert cli_main(["journal", "verify", "--state-dir", state]) == 1
    assert "row 4: input does not parse" in capsys.readouterr().err
    assert cli_main(["journal", "export", "--state-dir", str(tmp_path / "nowhere")]) == 1
    assert "no journal here" in capsys.readouterr().err
    for rows in (["--from", "5", "--to", "2"], ["--from", "0"]):  # an empty or impossible range is said
        assert cli_main(["journal", "export", "--state-dir", state, *rows]) == 2
        assert "rows are numbered from 1 and --to is not before --from" in capsys.readouterr().err


@pytest.mark.parametrize("action", [["export"], ["verify"], ["archive", "copy.sqlite3"]])
def test_journal_tools_say_in_one_line_what_is_wrong_with_the_state_dir(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], action: list[str]) -> None:
    # Every action, on a state dir with no journal, a file that is not SQLite, and SQLite that is no journal:
    # exit 1 and one line naming the file (verify on a missing dir was a sqlite3 traceback).
    garbage, foreign = tmp_path / "garbage", tmp_path / "foreign"
    garbage.mkdir()
    (garbage / "journal.sqlite3").write_text("not a database at all\n")
    foreign.mkdir()
    sqlite3.connect(foreign / "journal.sqlite3").execute("CREATE TABLE other (a)").connection.close()
    cases = {tmp_path / "nowhere": "no journal here",
             garbage: "not a readable SQLite journal: file is not a database",
             foreign: "not a readable SQLite journal: no such table: inputs"}
    args = [*action[:1], *[str(tmp_path / a) for a in action[1:]]]
    for state, why in cases.items():
        assert cli_main(["journal", *args, "--state-dir", str(state)]) == 1
        err = capsys.readouterr().err
        assert err == f"croupier journal {action[0]}: {state / 'journal.sqlite3'}: {why}\n"
    assert not (tmp_path / "copy.sqlite3").exists()


def test_the_input_that_makes_a_checkpoint_due_is_published_first_and_a_failed_checkpoint_halts_at_once(
        tmp_path: Path) -> None:
    """The daemon writes a due checkpoint after the input's events are out (a round's settlement
    does not wait for milliseconds of pickling), before the next input; if that write fails, the
    table halts then, not at the next input. A trigger on the journal's checkpoints table makes the
    write fail as a full disk would: a real SQLite error."""
    zmq_spec = {k: f"ipc://{tmp_path}/{k}" for k in ("pub", "snapshot", "command")}
    raw = {"table": "t", "game": "baccarat", "seats": 7, "state_dir": str(tmp_path / "state"),
           "zeromq": zmq_spec}
    config = parse_table(raw, tmp_path / "t.yaml")
    key = local_key(config)
    daemon = Daemon(config, use_shoe=False)
    service = daemon.open()
    service.checkpoint_every = 5
    service.journal.connection.execute(
        "CREATE TRIGGER no_room BEFORE INSERT ON checkpoints BEGIN SELECT RAISE(ABORT, 'no room'); END")
    sub = zmq.Context.instance().socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"t.")
    sub.setsockopt(zmq.RCVTIMEO, 10_000)
    with DaemonThread(daemon):
        sub.connect(zmq_spec["pub"])
        client = CommandClient(zmq_spec["command"], timeout=10, key=key)
        try:
            wait_subscribed(sub)
            for n in range(1, 5):  # rows 1..4: no checkpoint due yet
                assert client.call("credit_in", seat=1, amount=100 * n)["ok"]
            assert client.call("credit_in", seat=2, amount=500)["ok"]  # row 5: due, and it fails
            topics = []
            while not topics or topics[-1] != "t.journal_fault":
                topic, body = sub.recv_multipart()
                topics.append(topic.decode())
            assert topics.count("t.credit") == 5 and topics.index("t.journal_fault") > max(
                i for i, t in enumerate(topics) if t == "t.credit")
            error = json.loads(body)["error"]
            assert "checkpoint write failed" in error and "no room" in error
            refused = client.call("credit_in", seat=3, amount=100)
            assert not refused.get("ok") and "journal" in json.dumps(refused)
        finally:
            client.close()
            sub.close(linger=0)


def test_a_checkpoint_on_a_full_disk_names_the_full_disk(tmp_path: Path) -> None:
    """SQLite rolls a transaction back itself when the disk fills; the code's own ROLLBACK then raised
    "cannot rollback - no transaction is active", which replaced the cause in the journal fault's words
    ("correct what it names" named nothing to correct; a helper's review, 2026-12-07)."""
    config, live = baccarat_session(tmp_path, 12, checkpoint_every=10**9)
    conn = live.journal.connection
    conn.execute(f"PRAGMA max_page_count={conn.execute('PRAGMA page_count').fetchone()[0]}")
    live.checkpoint_every = 1
    assert not live.maybe_checkpoint()
    assert live.journal.fault is not None
    assert "database or disk is full" in live.journal.fault.reason, live.journal.fault.reason


def test_a_start_from_a_checkpoint_keeps_the_tilts_refused_cards(tmp_path: Path) -> None:
    """Cards shown while a tilt waits for the dealer (refused_cards, which the dealer keys again) are the
    service's, not the table's: a checkpoint taken then, and a start from it, lost them (a helper's review,
    2026-12-07). No checkpoint is taken while they wait; the start replays from the one before."""
    config, live = baccarat_session(tmp_path, 2, checkpoint_every=1)
    # No card is due at an idle table: a tilt; the first cards are held, those past the hold refused.
    for code in ("5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH", "AH", "2C"):
        live.submit(I.CardSeen(parse_card(code)), "test")
        live.maybe_checkpoint()
    assert live.refused_cards == ["AH", "2C"] and live.checkpoint_row < live.journal.last_id
    live.journal.close()
    again = open_service(config, checkpoint_every=1)
    again.replay()
    assert again.refused_cards == ["AH", "2C"] and again.seq == live.seq

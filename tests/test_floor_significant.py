"""The floor's significant-event log fed by the recorder's own batch: which rows are logged, once each
though delivered twice, dealer events recorded like any event, and ``croupier floor verify`` and the
standalone verifier (examples/verify_event_log.py) agreeing on an intact log and on a tampered row.

A real journal (the daemon's Journal class, in a temp dir) turned into floor messages by the uplink's
own replay (controller.floor.derive) and written by the recorder's own transaction (store.write_batch)
into a real PostgreSQL; the transport between them is tested end to end in test_floor_record.py.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import psycopg
import pytest
from floor_support import postgres, query  # noqa: F401 (fixture)
from test_daemon_support import config_for
from test_standalone_subscriber import top_modules

from controller import inputs as I
from controller.cards import parse_card
from controller.cli import main as cli_main
from controller.daemon.journal import Journal
from controller.floor import eventlog, store
from controller.floor.derive import JournalSource, Replay
from controller.floor.schema import migrate
from controller.floor.wire import RowMessage
from tests.server_fixtures import FloorDatabase

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[1]
VERIFIER = ROOT / "examples" / "verify_event_log.py"

#: (source, input, the event log entries its row makes: kinds, a key's first use first).
ROWS: list[tuple[str, I.Input, list[str]]] = [
    ("command:cashier", I.CreditIn(1, 100_000), ["key_first_used", "operator_command"]),
    ("gpio dealer", I.NewShoe(), ["operator_command"]),  # an operator's act from the dealer's panel
    ("command:pit by Ann", I.DealerIn("Ann"), ["key_first_used", "operator_command"]),
    ("gpio dealer", I.OpenBetting(), []),
    ("gpio seat 1", I.PlaceWager(1, "banker", 1000), []),
    ("gpio dealer", I.CloseBetting(), []),
    ("shoe", I.CardSeen(parse_card("9H")), []),
    ("shoe", I.DeviceStatus("shoe lid", False, "the lid is open"), ["device_offline"]),  # tilts the deal
    ("shoe", I.DeviceStatus("shoe lid", True, "the lid is closed"), ["device_online"]),
    ("command:pit", I.DealerIn("Zoë"), ["operator_command"]),  # pit's second command: no new key entry
    ("shoe", I.CardSeen(parse_card("2C")), []),
    ("shoe", I.CardSeen(parse_card("5D")), []),
    ("shoe", I.CardSeen(parse_card("3S")), []),
    ("shoe", I.CardSeen(parse_card("4H")), ["tilt"]),  # no card is due: card_not_due
    ("gpio dealer", I.DeclareBurn(), ["operator_command"]),
    ("journal", I.DeviceStatus("journal", False, "page 7 is damaged"), ["journal_fault"]),
    ("command:pit", I.DealerOut(), ["operator_command"]),
    ("config", I.SetLimits(7, 100, 200, 500_000, 100_000_000, 2), ["operator_command"]),  # table file changed
]


def floor_messages(tmp_path: Path) -> list[RowMessage]:
    """ROWS journaled as the daemon journals them, then replayed into messages as the uplink does."""
    config = config_for(tmp_path, name="sig1")
    journal = Journal.open(config.state_dir, table=config.table_id, game=config.game_name,
                           options=config.options_dict(), fsync=False)
    for n, (source, inp, _) in enumerate(ROWS):
        journal.append(inp, source, 1_700_000_000.0 + n)
    journal.close()
    source = JournalSource(config)
    try:
        replay, last = Replay(source), source.last_row()
        return [replay.message(entry, last) for entry in source.entries(1, last)]
    finally:
        source.close()


def test_significant_rows_are_logged_once_in_the_recorders_batch_with_dealer_events(
        tmp_path: Path, postgres: FloorDatabase) -> None:  # noqa: F811
    messages = floor_messages(tmp_path)
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_batch(conn, messages[:9])
        store.write_batch(conn, messages)  # the first nine again (a redelivery) and the rest
    logged = query(postgres.dsn, "SELECT id, table_id, kind, origin, body FROM event_log ORDER BY id")
    want = [kind for _, _, kinds in ROWS for kind in kinds]
    assert [kind for _, _, kind, _, _ in logged] == want
    assert [i for i, *_ in logged] == list(range(1, len(want) + 1))
    assert {t for _, t, *_ in logged} == {"sig1"}
    journal = messages[0].journal_id
    rows = [(n, kinds) for n, (_, _, kinds) in enumerate(ROWS, 1) if kinds]
    row_origins = [o for *_, o, _ in logged if o.startswith("row:")]
    assert row_origins == [f"row:sig1:{journal}:{n}" for n, _ in rows]
    assert [o for *_, o, _ in logged if o.startswith("key:")] == ["key:sig1:cashier", "key:sig1:pit"]
    by_origin = {o: body for *_, o, body in logged}
    lid_open = by_origin[f"row:sig1:{journal}:8"]  # the row whole: input, source, time, what it caused
    assert (lid_open["source"], lid_open["input"]["device"], lid_open["at"]) == ("shoe", "shoe lid",
                                                                                1_700_000_007.0)
    assert [e["event"] for e in lid_open["events"]] == ["device", "tilt"]
    # The dealer events are recorded as every event is, numbered like the daemon's.
    dealers = query(postgres.dsn, "SELECT seq, payload FROM events WHERE event = 'dealer' ORDER BY seq")
    assert [p["dealer"] for _, p in dealers] == ["Ann", "Zoë", None]
    assert all(p["seq"] == s and p["table"] == "sig1" for s, p in dealers)


def test_verify_and_the_standalone_verifier_agree_on_an_intact_log_and_name_a_changed_row(
        tmp_path: Path, postgres: FloorDatabase, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    messages = floor_messages(tmp_path)
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        store.write_batch(conn, messages)
    n = len(query(postgres.dsn, "SELECT id FROM event_log"))
    assert cli_main(["floor", "verify", "--db", postgres.dsn]) == 0
    assert capsys.readouterr().out == f"intact: {n} rows checked\n"
    assert standalone(postgres.dsn, capsys) == (0, f"intact: {n} rows checked\n")
    with psycopg.connect(postgres.dsn) as conn:  # a superuser lifts the guard and rewrites history
        conn.execute("ALTER TABLE event_log DISABLE TRIGGER event_log_append_only")
        conn.execute("UPDATE event_log SET body = jsonb_set(body, '{input,amount}', '1000000') WHERE id = 2")
    said = ("BROKEN at row 2: its fields do not give its hash (the row was changed) (rows before it: 1 "
            "checked)\n")
    assert cli_main(["floor", "verify", "--db", postgres.dsn]) == 1
    assert capsys.readouterr().out == said
    assert standalone(postgres.dsn, capsys) == (1, said)
    assert cli_main(["floor", "verify", "--json", "--db", postgres.dsn]) == 1
    assert json.loads(capsys.readouterr().out) == {
        "rows": 1, "intact": False, "broken_id": 2,
        "reason": "its fields do not give its hash (the row was changed)"}


def test_both_verifiers_check_any_number_as_written_and_rows_from_before_the_body_text(
        postgres: FloorDatabase, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    """jsonb gives 1e+16 back as 10000000000000000, -0.0 as 0.0 and 1.5e+300 as 301 digits: each
    verifier hashes the stored text, not the body re-encoded. A row from before migration 0006 (no
    text) is checked from its body, as it was written."""
    bodies = [{"big": 1e16, "zero": -0.0, "huge": 1.5e300, "tiny": 5e-324},
              {"flag": True, "none": None, "list": [1, 1.0, "é"]},
              {"old": 1}]
    with psycopg.connect(postgres.dsn) as conn:
        migrate(conn)
        with conn.transaction(), conn.cursor() as cur:
            for i, body in enumerate(bodies):
                eventlog.append(cur, table_id="n1", kind="tilt", origin=f"numbers:{i}", body=body)
        conn.execute("ALTER TABLE event_log DISABLE TRIGGER event_log_append_only")
        conn.execute("UPDATE event_log SET body_text = NULL WHERE origin = 'numbers:2'")
        conn.commit()
    assert cli_main(["floor", "verify", "--db", postgres.dsn]) == 0
    assert capsys.readouterr().out == "intact: 3 rows checked\n"
    assert standalone(postgres.dsn, capsys) == (0, "intact: 3 rows checked\n")


def standalone(dsn: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The example run as a third party would (in this process: a second Python start costs seconds)."""
    spec = importlib.util.spec_from_file_location("verify_event_log", VERIFIER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    code = module.main(["--db", dsn])
    return code, capsys.readouterr().out


def test_the_standalone_verifier_imports_nothing_of_the_project() -> None:
    allowed = {"__future__", "argparse", "collections", "decimal", "hashlib", "json", "sys", "psycopg"}
    assert top_modules(VERIFIER) <= allowed


def test_verify_on_a_database_without_a_log_says_so(postgres: FloorDatabase,  # noqa: F811
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["floor", "verify", "--db", postgres.dsn]) == 1
    assert "no event log yet" in capsys.readouterr().err

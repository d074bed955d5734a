"""``croupier display``: what it takes from a table file, and its errors (no browser needed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_daemon_support import write_table

from controller.cli import main
from controller.daemon.config import TableFileError, load_table
from signage.display_cmd import parse_listen, settings_of


def test_settings_from_the_display_section_and_the_tables_currency(tmp_path: Path) -> None:
    path = write_table(
        tmp_path,
        description="Main pit, table 3",
        currency={"code": "EUR", "minor_units": 2},
        display={"language": "fr", "layout": "portrait"},
    )
    settings = settings_of(load_table(path))
    assert settings["title"] == "Main pit, table 3"  # the description when no title is given
    assert settings["language"] == "fr" and settings["layout"] == "portrait"
    assert settings["limits_text"] == {"min_bet": "EUR 1.00", "max_bet": "EUR 10,000.00"}
    assert settings["payouts"] == {"player": "1:1", "banker": "19:20", "tie": "9:1"}  # the defaults
    path = write_table(
        tmp_path,
        name="t2",
        currency={"code": "JPY", "minor_units": 0},
        display={"title": "Baccarat 8", "symbol": "¥"},
        options={"tie_pays": "8:1"},
    )
    settings = settings_of(load_table(path))
    assert settings["title"] == "Baccarat 8"
    assert settings["limits_text"] == {"min_bet": "¥100", "max_bet": "¥1,000,000"}
    assert settings["payouts"]["tie"] == "8:1"  # this table pays Tie 8:1, and the screen says so


def test_a_bad_display_key_names_the_file_and_key(tmp_path: Path) -> None:
    path = write_table(tmp_path, display={"layout": "sideways"})
    with pytest.raises(TableFileError, match="display.layout"):
        load_table(path)
    path = write_table(tmp_path, display={"colour": "red"})
    with pytest.raises(TableFileError, match="display.colour"):
        load_table(path)


def test_listen_and_command_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_listen("127.0.0.1:8080") == ("127.0.0.1", 8080)
    assert parse_listen("[::1]:0") == ("::1", 0)
    for bad in ("8080", "host:", "host:99999", "host:http"):
        with pytest.raises(ValueError, match="--listen"):
            parse_listen(bad)
    path = write_table(tmp_path)
    assert main(["display", str(path), "--listen", "nowhere"]) == 2
    assert "--listen: expected HOST:PORT" in capsys.readouterr().err
    assert main(["display", str(path), str(path)]) == 2
    assert "a table id appears twice" in capsys.readouterr().err
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump({"table": "x"}))
    assert main(["display", str(broken)]) == 2
    assert "broken.yaml" in capsys.readouterr().err


def test_croupier_loads_the_display_server_only_to_serve() -> None:
    """Every ``croupier`` command (the table daemon included) builds its parser from
    signage.display_cmd; aiohttp and its dependencies weigh about 10 MB of a daemon's memory."""
    probe = "import sys, controller.cli; print(sorted({m.split('.')[0] for m in sys.modules} & {'aiohttp'}))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1], timeout=60)
    assert out.stdout.strip() == "[]"

"""Every YAML file goes through controller.configfile.read_yaml: the file, the line, and no key given twice.

One reader means one behaviour: a scenario, a table file, a pin map, a shoe or
vision profile, the roads command's input and a pay table are refused the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_daemon_support import write_table
from test_scenario_format import BASE as SCENARIO

from controller.cli import main
from controller.configfile import ConfigFileError, read_yaml
from controller.daemon.config import TableFileError, load_table
from controller.scenario import ScenarioError, load_scenario


def test_bad_yaml_names_the_file_the_line_and_the_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("a: 1\nb: [2\nc: 3\n")
    with pytest.raises(ConfigFileError) as info:
        read_yaml(path, ConfigFileError)
    message = str(info.value)
    assert message.startswith(f"{path}: not valid YAML: line 3, column 2: ")
    assert "\n" not in message


def test_whether_a_file_is_yaml_is_said_by_the_errors_kind_not_its_words(tmp_path: Path) -> None:
    """The roads command tells "not YAML" (maybe a journal) from "cannot read" by the error's kind: it
    looked for the words "not valid YAML" at the start of the problem, so a reword changed its answer."""
    bad, binary = tmp_path / "bad.yaml", tmp_path / "bin.yaml"
    bad.write_text("a: [1\n")
    binary.write_bytes(b"\xff\xfe\x00SQLite")
    kinds = {}
    for path in (bad, binary, tmp_path / "nope.yaml"):
        with pytest.raises(TableFileError) as info:
            read_yaml(path, TableFileError)
        kinds[path.name] = info.value.not_yaml
    assert kinds == {"bad.yaml": True, "bin.yaml": False, "nope.yaml": False}


def test_a_key_given_twice_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text("a: 1\nnested:\n  x: 1\n  x: 2\n")
    expected = r"dup\.yaml: not valid YAML: line 4, column 3: key 'x' is given twice"
    with pytest.raises(ConfigFileError, match=expected):
        read_yaml(path, ConfigFileError)
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert read_yaml(empty, ConfigFileError) is None  # each kind of file says itself what empty means


def test_a_scenario_keeps_its_error_but_reads_like_every_other_file(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.replace("credits: {1: 10000}\n", "credits: {1: 10000}\ncredits: {1: 5}\n"))
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)  # PyYAML alone kept the last credits silently
    assert info.value.round == 0
    assert info.value.reason == f"{path}: not valid YAML: line 3, column 1: key 'credits' is given twice"
    with pytest.raises(ScenarioError, match=r"nope\.yaml: cannot read: No such file or directory"):
        load_scenario(tmp_path / "nope.yaml")


def test_a_table_file_with_a_key_given_twice_is_refused(tmp_path: Path) -> None:
    path = write_table(tmp_path)
    path.write_text(path.read_text() + "\ngame: baccarat\n")
    expected = r"not valid YAML: line \d+, column 1: key 'game' is given twice"
    with pytest.raises(TableFileError, match=expected):
        load_table(path)


def test_roads_names_the_file_and_the_line_of_bad_yaml(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("game: [baccarat\n")
    assert main(["roads", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: neither YAML (a scenario or table file) nor a journal (not valid YAML: line 2" in err


def test_a_pay_table_file_that_is_not_yaml_is_a_clear_error(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pay.yaml"
    path.write_text("options: {dealer_bonus_paytable: [\n")
    assert main(["math", "two_way_winner", "--bonus", "--table", str(path)]) == 2
    assert f"{path}: not valid YAML: line 2" in capsys.readouterr().err
    path.write_text(json.dumps({"options": {"dealer_bonus_paytable": {}}}))
    assert main(["math", "two_way_winner", "--bonus", "--table", str(path)]) == 0

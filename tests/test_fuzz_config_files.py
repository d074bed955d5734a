"""Fuzzing the files read at start (table files, shoe profiles, pin maps, deck profiles, scenario files, the
pit board's operators file): each shipped file, damaged at one value, one key or a few bytes, is read or
refused with its documented error naming the file (controller.configfile: ``<file>: key '<key>': <reason>``),
never another exception (docs/testing.md; the standard: "fuzzing for every parser of outside bytes")."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import pytest
import yaml
from hypothesis import example, given, note, settings
from hypothesis import strategies as st

from controller.configfile import ConfigFileError, read_yaml
from controller.daemon.config import TableFileError, load_table
from controller.panels.pinmaps import load_pin_map
from controller.scenario import ScenarioError, load_scenario
from drivers.gpio.pinmap import PinMapError
from drivers.shoe.profile import ProfileError as ShoeProfileError
from drivers.shoe.profile import load_profile as load_shoe_profile
from pitboard.operators import OperatorError
from pitboard.operators import read as read_operators
from vision.profile import ProfileError as DeckProfileError
from vision.profile import load_profile as load_deck_profile

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "firmware_configs"
FUZZ = settings(max_examples=60, deadline=None, derandomize=True)

#: Values put where a file had one: each type YAML can hold, and the ones a loader trips on.
values = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.sampled_from([0, -1, 2**63, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["", "tcp://127.0.0.1:99999", "tcp://[::1", "ipc://", "../../etc/passwd", "9:1", "AS",
                     "0x21", "1e999", "nan", "\x00", "\ud800"]),
    st.lists(st.integers(-3, 70), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def _paths(data: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value in ``data`` (mappings and lists), the root included."""
    yield at
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _paths(v, (*at, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _paths(v, (*at, i))


def _mutated(data: Any, path: tuple[Any, ...], how: str, value: Any, key: str) -> Any:
    """``data`` with the value at ``path`` replaced, removed, or given an extra key."""
    if not path:
        return value if how == "set" else data
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if how == "set":
        parent[last] = value
    elif how == "drop":
        del parent[last]
    elif isinstance(parent[last], dict):
        parent[last][key] = value
    return data


@st.composite
def damaged(draw: st.DrawFn, original: str) -> str:
    """The text of ``original`` damaged: one value changed, one key dropped or added, or bytes edited."""
    text = original
    if draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(text)))
        cut, put = draw(st.integers(0, 8)), draw(st.text(max_size=6))
        note(f"at character {at}: {text[at:at + cut]!r} replaced by {put!r}")
        return text[:at] + put + text[at + cut:]
    data = yaml.safe_load(text)
    path = draw(st.sampled_from(list(_paths(data))))
    how = draw(st.sampled_from(["set", "drop", "add"]))
    value, key = draw(values), draw(st.text(min_size=1, max_size=6))
    where = ".".join(map(str, path)) or "(top)"
    note(f"{how} at {where}: {value!r}" + (f" as key {key!r}" if how == "add" else ""))
    data = _mutated(data, path, how, value, key)
    try:
        return yaml.safe_dump(data, allow_unicode=False)
    except (yaml.YAMLError, ValueError):
        return json.dumps(data, ensure_ascii=False)


@pytest.fixture(scope="module")
def configs() -> Iterator[Path]:
    """A copy of firmware_configs' layout (tables/, shoes/, panels/, decks/) that damaged files are written
    into: a table's ``../shoes/sim_v1.yaml`` is found as in the repository."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for sub in ("shoes", "panels", "decks", "tables"):
            shutil.copytree(CONFIGS / sub, root / sub)
        yield root


def _check(read: Callable[[Path], object], path: Path, text: str, errors: type[Exception],
           named: bool = True) -> None:
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        read(path)
    except errors as exc:
        if named:
            assert str(exc).startswith(f"{path}: "), exc
        else:
            assert str(path) in str(exc), exc


def _shipped(folder: str) -> list[str]:
    return sorted(p.name for p in (CONFIGS / folder).glob("*.yaml"))


@FUZZ
@given(st.binary(max_size=300))
@example(b"a: 1\na: 2\n")
@example(b"\xff\xfe")
@example(b"[" * 2000)
@example(b"a: " + b"1" * 5000)  # past int()'s 4300 digits
@example(b"a: 0x" + b"f" * 5000)  # no digit limit in base 16: refused as too long a number
@example(b"a: 2001-02-30")  # a timestamp that is no date
@example(b"? [1]\n: 2\n")  # an unhashable key
@example(b"a: !!map [1]")
def test_any_bytes_are_yaml_data_or_a_config_file_error(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "any.yaml"
        path.write_bytes(data)
        try:
            read_yaml(path, ConfigFileError)
        except ConfigFileError as exc:
            assert str(exc).startswith(f"{path}: ")


#: Each kind of shipped file, its loader and the error that must name the file.
SHIPPED: Final = [("tables", load_table, TableFileError), ("shoes", load_shoe_profile, ShoeProfileError),
                  ("panels", load_pin_map, PinMapError)]


@pytest.mark.parametrize(("kind", "load", "error"), SHIPPED, ids=[kind for kind, _, _ in SHIPPED])
@settings(max_examples=110, deadline=None, derandomize=True)
@given(data=st.data())
def test_a_damaged_shipped_file_loads_or_names_the_file(configs: Path, kind: str, load: Callable[[Path], Any],
                                                        error: type[Exception], data: st.DataObject) -> None:
    """A table file, shoe profile or pin map as shipped, with a few bytes changed."""
    name = data.draw(st.sampled_from(_shipped(kind)))
    text = data.draw(damaged((CONFIGS / kind / name).read_text(encoding="utf-8")))
    _check(load, configs / kind / f"fuzz-{name}", text, error)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(data=st.data())
def test_a_damaged_deck_profile_loads_or_names_the_file(configs: Path, data: st.DataObject) -> None:
    text = data.draw(damaged((CONFIGS / "decks" / "sim_classic.yaml").read_text(encoding="utf-8")))
    _check(load_deck_profile, configs / "decks" / "sim_classic.yaml", text, DeckProfileError)


SCENARIOS = sorted(p.name for p in (ROOT / "tests" / "scenarios").glob("*.yaml"))


@settings(max_examples=120, deadline=None, derandomize=True)
@given(name=st.sampled_from(SCENARIOS), data=st.data())
def test_a_damaged_scenario_loads_or_names_the_file(name: str, data: st.DataObject) -> None:
    text = data.draw(damaged((ROOT / "tests" / "scenarios" / name).read_text(encoding="utf-8")))
    with tempfile.TemporaryDirectory() as tmp:
        _check(load_scenario, Path(tmp) / name, text, ScenarioError, named=False)


#: Damage the fuzzing above found, kept as fixed cases: (shipped file, path to the value, value put there).
FOUND: list[tuple[str, tuple[Any, ...], Any]] = [
    ("tables/baccarat_sim.yaml", ("panels", 3), ""),
    ("tables/swap_hand_sim.yaml", ("gpio", "control"), "tcp://127.0.0.1:5579 0"),
    ("tables/baccarat_sim.yaml", ("gpio", "control"), "tcp://127.0.0.1:99999"),
    ("tables/baccarat_sim.yaml", ("gpio", "control"), "tcp://[::1:5559"),
    ("decks/sim_classic.yaml", ("enrolled", "aspects"), None),
    ("decks/sim_classic.yaml", ("enrolled", "aspects", "rank:2"), ""),
]
LOADERS: dict[str, tuple[Callable[[Path], object], type[Exception]]] = {
    "tables": (load_table, TableFileError), "decks": (load_deck_profile, DeckProfileError),
}


@pytest.mark.parametrize(("name", "at", "value"), FOUND,
                         ids=[f"{n}:{'.'.join(map(str, a))}" for n, a, _ in FOUND])
def test_damage_found_by_fuzzing_is_refused_by_name(configs: Path, name: str, at: tuple[Any, ...],
                                                    value: Any) -> None:
    data = _mutated(yaml.safe_load((CONFIGS / name).read_text(encoding="utf-8")), at, "set", value, "")
    read, error = LOADERS[name.split("/")[0]]
    path = configs / name
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(error) as caught:
        read(path)
    assert str(caught.value).startswith(f"{path}: ")


operators_bodies = st.one_of(
    st.binary(max_size=120).map(lambda b: b.decode("latin-1")),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=6),
                 lambda inner: st.lists(inner, max_size=3)
                 | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                 max_leaves=12).map(lambda v: json.dumps({"operators": v})),
)


@FUZZ
@given(operators_bodies)
@example("[" * 100_000)
@example('{"operators": {"ann": {"sha256": "ab"}}}')
def test_an_operators_file_is_read_or_an_operator_error(body: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "operators.json"
        path.write_text(body, encoding="utf-8")
        path.chmod(0o600)
        try:
            known = read_operators(path)
        except OperatorError as exc:
            assert str(exc).startswith(f"{path}: ")
        else:
            assert all(isinstance(k, str) and isinstance(v, str) for k, v in known.items())


def test_a_nul_in_a_string_is_the_files_error(configs: Path) -> None:
    """Found by the damaged-table fuzz (2026-12-07): ``shoe.profile: "\\0"`` made resolving the path raise
    ValueError ("embedded null byte") out of load_table. No string of a file may hold a NUL."""
    path = configs / "tables" / "nul.yaml"
    text = (CONFIGS / "tables" / "baccarat_sim.yaml").read_text(encoding="utf-8")
    path.write_text(text.replace("description: ", 'description: "a \\0 here" #'), encoding="utf-8")
    with pytest.raises(TableFileError, match=r"nul\.yaml: not valid YAML: line 7, .*a NUL character"):
        load_table(path)

"""Whole numbers typed as text (controller.digits): ASCII digits only, at most so many, never an exception.

Why: ``str.isdigit()`` takes ``²`` and ``١``, which ``int()`` refuses in its own words or reads as another
digit, and ``int()`` raises past 4,300 digits. Before the one function, ``croupier vision calibrate
--camera ²`` ended in a traceback, and a folder named ``croupier-results-²-x`` in the shared spool
directory stopped every simulation run's clean-up."""

from __future__ import annotations

import shutil
import string

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from controller.cli import main
from controller.digits import whole_number
from controller.simulation.montecarlo import run_chunks
from controller.simulation.spool import ROOT


@given(st.text(max_size=30), st.integers(min_value=1, max_value=12))
@example("²", 3)
@example("١", 3)
@example("1_0", 3)
@example("+1", 3)
@example(" 1", 3)
@example("", 3)
@example("0007", 3)
@example("9" * 5000, 12)
def test_a_number_is_ascii_digits_within_the_bound_or_none(text: str, most: int) -> None:
    number = whole_number(text, most)
    plain = 0 < len(text) <= most and all(c in string.digits for c in text)
    assert (number is not None) == plain
    if plain:
        assert number == int(text)


def test_a_camera_named_by_a_digit_that_is_not_ascii_is_a_device_name_not_a_traceback(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vision", "calibrate", "--camera", "²", "--corners", "1,1 90,1 90,120 1,120"]) == 2
    assert "croupier vision calibrate: cannot open camera '²'" in capsys.readouterr().err


def _one(n: int) -> int:
    return n


@pytest.mark.parametrize("name", ["²", "١", "99999999999999999999", "0"])
def test_a_spool_folder_named_by_no_process_id_is_left_and_stops_no_run(name: str) -> None:
    """Anyone may make a folder in the shared spool directory: one not named by a process id is not ours
    to remove, and must not end the run that sweeps for orphans."""
    stranger = ROOT / f"croupier-results-{name}-x"
    stranger.mkdir()
    try:
        got: list[int] = []
        run_chunks([1, 2], _one, got.append, lambda n: 1, 2)
        assert sorted(got) == [1, 2] and stranger.is_dir()
    finally:
        shutil.rmtree(stranger, ignore_errors=True)


def test_the_typed_port_and_count_parsers_take_the_one_rule() -> None:
    from drivers.shoe.simctl import address
    from signage.display_cmd import parse_listen

    assert address("127.0.0.1:7001") == ("127.0.0.1", 7001)
    assert parse_listen("[::1]:8080") == ("::1", 8080)
    for bad in ("127.0.0.1:²", "127.0.0.1:65536", "127.0.0.1:" + "9" * 5000):
        with pytest.raises(ValueError, match="HOST:PORT"):
            address(bad)
        with pytest.raises(ValueError, match="HOST:PORT"):
            parse_listen(bad)

"""Shoe device profiles: the shipped ones load; a bad one names the file, the key and the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from drivers.shoe.profile import ProfileError, ShoeProfile, load_profile

pytestmark = pytest.mark.timeout(60)

SHOES = Path(__file__).resolve().parent.parent / "firmware_configs" / "shoes"

GOOD = """\
port: /dev/ttyUSB0
protocol: v1
baud: 115200
heartbeat_timeout: 3.0
reconnect: {initial: 0.5, max: 10}
"""


def test_shipped_profiles_load() -> None:
    names = sorted(p.name for p in SHOES.glob("*.yaml"))
    assert {"sim_v1.yaml", "sim_plain.yaml", "generic_usb_v1.yaml"} <= set(names)
    for path in SHOES.glob("*.yaml"):
        profile = load_profile(path)
        assert isinstance(profile, ShoeProfile)
        assert (profile.heartbeat_timeout is None) == (profile.protocol == "plain")


def test_good_profile_values(tmp_path: Path) -> None:
    path = tmp_path / "good.yaml"
    path.write_text(GOOD + "parity: E\nstopbits: 1.5\n")
    profile = load_profile(path)
    assert (profile.port, profile.baud, profile.bytesize, profile.parity, profile.stopbits) == (
        "/dev/ttyUSB0", 115200, 8, "E", 1.5)
    assert (profile.reconnect.initial, profile.reconnect.max) == (0.5, 10)


@pytest.mark.parametrize(("change", "key", "reason"), [
    ("baud: 115200", "baud", "greater than 0"),  # replaced by baud: 0 below
    ("protocol: v1", "protocol", "'v1' or 'plain'"),
    ("port: /dev/ttyUSB0", "port", "no handler for URL scheme 'bogus'"),
    ("heartbeat_timeout: 3.0", "heartbeat_timeout", "required for protocol v1"),
    ("reconnect: {initial: 0.5, max: 10}", "reconnect.max", "at least reconnect.initial"),
    ("reconnect: {initial: 0.5, max: 10}", "reconnect.maximum", "unknown key (known: initial, max)"),
    ("baud: 115200", "baud", "valid integer"),
])
def test_bad_value_names_file_key_reason(tmp_path: Path, change: str, key: str, reason: str) -> None:
    replacement = {
        ("baud", "greater than 0"): "baud: 0",
        ("protocol", "'v1' or 'plain'"): "protocol: v2",
        ("port", "no handler for URL scheme 'bogus'"): "port: bogus://x",
        ("heartbeat_timeout", "required for protocol v1"): "",
        ("reconnect.max", "at least reconnect.initial"): "reconnect: {initial: 5, max: 1}",
        ("reconnect.maximum", "unknown key (known: initial, max)"): "reconnect: {initial: 1, maximum: 2}",
        ("baud", "valid integer"): "baud: fast",
    }[(key, reason)]
    path = tmp_path / "shoe.yaml"
    path.write_text(GOOD.replace(change, replacement))
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    lines = [line for line in str(info.value).splitlines() if line.startswith(f"{path}: key '{key}': ")]
    assert len(lines) == 1 and reason in lines[0]
    assert key in [k for k, _ in info.value.problems]


@pytest.mark.parametrize(("extra", "key", "reason"), [
    ("speed: 9600\n", "speed", "unknown key (known: description, port, protocol, baud"),
    ("bytesize: 7\n", "bytesize", "protocol v1 needs bytesize 8"),
    ("stopbits: 3\n", "stopbits", "must be 1, 1.5 or 2"),
    ("parity: no\n", "parity", "got False"),
    ("line_end: crlf\n", "line_end", "v1 frames have no line ends"),
    ("mode: dealer\n", "mode", "'reader' or 'dealing_shuffler'"),
    ("mode: dealing_shuffler\ndispense_timeout: 0\n", "dispense_timeout", "greater than 0"),
])
def test_extra_and_invalid_keys(tmp_path: Path, extra: str, key: str, reason: str) -> None:
    path = tmp_path / "extra.yaml"
    path.write_text(GOOD + extra)
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    assert f"extra.yaml: key '{key}': " in str(info.value) and reason in str(info.value)


def test_plain_profile_must_not_set_heartbeat(tmp_path: Path) -> None:
    path = tmp_path / "plain.yaml"
    path.write_text(GOOD.replace("protocol: v1", "protocol: plain"))
    with pytest.raises(ProfileError, match="key 'heartbeat_timeout': plain readers send no heartbeats"):
        load_profile(path)
    plain = GOOD.replace("protocol: v1", "protocol: plain").replace("heartbeat_timeout: 3.0\n", "")
    path.write_text(plain)
    assert load_profile(path).protocol == "plain" and load_profile(path).line_end == "any"
    path.write_text(plain + "line_end: crlf\n")
    assert load_profile(path).line_end == "crlf"
    path.write_text(plain + "line_end: lfcr\n")
    with pytest.raises(ProfileError, match="key 'line_end': .*'any', 'lf', 'cr' or 'crlf'"):
        load_profile(path)
    path.write_text(plain + "mode: dealing_shuffler\n")
    with pytest.raises(ProfileError, match="key 'mode': a dealing shuffler needs protocol v1"):
        load_profile(path)


@pytest.mark.parametrize(("text", "reason"), [
    ("", "the file is empty"),
    ("- a\n- b\n", "top level must be a mapping"),
    ("port: [unclosed\n", "not valid YAML"),
    (GOOD + "baud: 9600\n", "line 6, column 1: key 'baud' is given twice"),
])
def test_file_level_problems(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    assert str(info.value).startswith(f"{path}: ")
    assert reason in str(info.value)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match=r"nowhere\.yaml: cannot read"):
        load_profile(tmp_path / "nowhere.yaml")


def test_every_problem_is_listed(tmp_path: Path) -> None:
    path = tmp_path / "many.yaml"
    path.write_text("port: /dev/x\nprotocol: v1\nbaud: -5\nheartbeat_timeout: 0\nreconnect: {initial: 1}\n")
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    keys = [key for key, _ in info.value.problems]
    assert keys == ["baud", "heartbeat_timeout", "reconnect.max"]

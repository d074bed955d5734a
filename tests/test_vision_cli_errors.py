"""``croupier vision enroll`` and ``test`` as a user meets them when something is wrong: a bad ``--out`` or
``--json`` said before the long work, by its option and path, never a traceback after it; a missing image
named before any frame is read; ``--json -`` a JSON document alone on standard output; the report's plain
text naming the reasons of unknown frames (a review, 2026-12-07)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from controller.cli import main
from controller.daemon.config import FIRMWARE_CONFIGS

DECK = str(FIRMWARE_CONFIGS / "decks" / "sim_classic.yaml")


@pytest.fixture
def held(tmp_path: Path) -> Path:
    """Eight drawn frames of the simulated deck's design, no frame without a card."""
    folder = tmp_path / "held"
    assert main(["vision", "scenes", str(folder), "--count", "8", "--seed", "5"]) == 0
    return folder


def test_a_bad_out_is_refused_before_any_photograph_is_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "afile").write_text("")
    (tmp_path / "adir.yaml").mkdir()
    afile = tmp_path / "afile"
    for out, why in ((tmp_path / "adir.yaml", "is a folder"), (afile / "x.yaml", f"{afile} is not a folder"),
                     (Path("/proc/x.yaml"), "cannot")):
        assert main(["vision", "enroll", "--images", str(tmp_path / "nowhere"), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"--out {out}: {why}" in err and "Traceback" not in err, err
    assert list((tmp_path / "adir.yaml").iterdir()) == []  # nothing left behind


def test_test_refuses_a_bad_json_path_and_a_set_with_nothing_to_test_before_reading(
        tmp_path: Path, held: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["vision", "test", str(held), "--deck", DECK, "--json", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert f"--json {tmp_path}: is a folder" in captured.err and "frames" not in captured.err
    # A --json in a folder not there yet: nothing made when the run is refused (a review, 2026-12-07).
    newdir = tmp_path / "newdir" / "r.json"
    assert main(["vision", "test", str(tmp_path / "nowhere"), "--deck", DECK, "--json", str(newdir)]) == 2
    assert f"{tmp_path / 'nowhere'}: not a folder" in capsys.readouterr().err
    assert not newdir.parent.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "labels.csv").write_text("file,card\n")
    assert main(["vision", "test", str(empty), "--deck", DECK]) == 2
    assert "no frames listed: nothing to test" in capsys.readouterr().err
    # Images named on the last lines and missing: all named at once, before the first frame is read.
    with (held / "labels.csv").open("a") as labels:
        labels.write("gone.jpg,QH\nlost.jpg,none\n")
    assert main(["vision", "test", str(held), "--deck", DECK]) == 2
    captured = capsys.readouterr()
    assert "no image in" in captured.err, captured.err
    assert "line 10: gone.jpg; line 11: lost.jpg" in captured.err, captured.err
    assert "frames" not in captured.err.split("no image")[0]  # no progress: no frame read
    assert not (tmp_path / "newdir").exists()


def test_json_to_standard_output_is_one_json_document_and_the_text_names_unknown_reasons(
        held: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["vision", "test", str(held), "--deck", DECK, "--json", "-"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["card_frames"] == 8 and report["negative_frames"] == 0
    assert "wrong reads" in captured.err and "no frames without a card" in captured.err
    assert "None" not in captured.err
    if report["unknown"]:
        assert "unknown reasons: " in captured.err and "  unknown: " in captured.err


@pytest.mark.parametrize("argv", [
    ["vision", "calibrate", "--image", "x.png", "--corners", "1,1 9,1 9,9", "--size-mm", "240"],
    ["vision", "scenes", "out", "--size", "0x480"],
    ["vision", "scenes", "out", "--count", "-3"],
])
def test_a_bad_size_or_count_exits_2_as_every_other_refusal(
        tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Before, a size not WxH exited 1, unlike the commands' other refusals (2), and a count below 0 was
    taken."""
    cv2.imwrite(str(tmp_path / "x.png"), np.zeros((48, 64, 3), np.uint8))
    argv = [str(tmp_path / a) if a in ("x.png", "out") else a for a in argv]
    assert main(argv) == 2
    assert "croupier vision" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_table_file_given_as_the_deck_is_named_as_one(
        held: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before, it was refused for its version, with "enrol the deck again" (a review, 2026-12-07)."""
    table = FIRMWARE_CONFIGS / "tables" / "baccarat_sim_camera.yaml"
    assert main(["vision", "test", str(held), "--deck", str(table)]) == 2
    err = capsys.readouterr().err
    assert "a table file, not a deck profile" in err and "enrol the deck again" not in err, err


def test_a_frame_that_cannot_be_decoded_is_named_and_the_rest_still_reported(
        held: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file in the set that is no image (a copy cut short, a stray text file under a .jpg name): the run
    reads the rest, reports them, names the file and its line, and exits 2. Before, the whole run ended
    at that frame with no report (a review, 2026-12-07)."""
    (held / "broken.jpg").write_bytes(b"not a jpeg")
    with (held / "labels.csv").open("a") as labels:
        labels.write("broken.jpg,QH\n")
    capsys.readouterr()
    assert main(["vision", "test", str(held), "--deck", DECK]) == 2
    captured = capsys.readouterr()
    assert "frames 8: 8 with a card" in captured.out  # the eight that could be read
    assert ("line 10: cannot read the image broken.jpg: not an image OpenCV can read (not counted)"
            in captured.err)


def test_a_set_of_frames_none_of_which_decodes_is_refused_without_a_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "a.jpg").write_bytes(b"not a jpeg")
    # A spreadsheet's "CSV UTF-8": a byte-order mark first, CRLF line ends.
    (folder / "labels.csv").write_text("\ufefffile,card\r\na.jpg,QH\r\n", encoding="utf-8")
    assert main(["vision", "test", str(folder), "--deck", DECK]) == 2
    captured = capsys.readouterr()
    assert "line 2: cannot read the image a.jpg" in captured.err and "no frame could be read" in captured.err
    assert "None" not in captured.out + captured.err and "wrong reads" not in captured.out


@pytest.mark.parametrize(("argv", "said"), [
    (["vision", "scenes", "out", "--size", "0x5"], "croupier vision scenes: --size '0x5': expected WxH"),
    (["vision", "calibrate", "--image", "x.png", "--corners", "1,1 9,1 9,9 1,9", "--size-mm", "nanxnan"],
     "croupier vision calibrate: --size-mm 'nanxnan': expected WxH"),
    (["vision", "calibrate", "--image", "x.png", "--corners", "1,1 9,1 9,9 1,9", "--size-mm", "infx100"],
     "croupier vision calibrate: --size-mm 'infx100': expected WxH"),
])
def test_a_bad_size_is_named_by_its_command_and_option(
        tmp_path: Path, argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Before, "croupier vision: '0x5': ...", and a size of NaN printed a plane of NaN (a review)."""
    cv2.imwrite(str(tmp_path / "x.png"), np.zeros((48, 64, 3), np.uint8))
    argv = [str(tmp_path / a) if a in ("x.png", "out") else a for a in argv]
    assert main(argv) == 2
    assert said in capsys.readouterr().err


def test_a_jpeg_cut_short_is_named_with_why_and_not_counted(
        held: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A JPEG copied only in part decodes without an error, its lower part grey, and libjpeg says only
    "Premature end of JPEG file", naming no file: it was read and counted as a frame the camera never gave.
    Now it is named, with why, and left out, as a file that is no image."""
    first = next(line.split(",")[0] for line in (held / "labels.csv").read_text().splitlines()[1:])
    whole = (held / first).read_bytes()
    (held / first).write_bytes(whole[: len(whole) // 2])
    assert cv2.imread(str(held / first)) is not None  # OpenCV alone reads it, half grey
    capsys.readouterr()
    assert main(["vision", "test", str(held), "--deck", DECK]) == 2
    captured = capsys.readouterr()
    assert "frames 7: 7 with a card" in captured.out
    assert f"line 2: cannot read the image {first}: a JPEG cut short" in captured.err


def test_calibrate_names_a_jpeg_cut_short(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok, data = cv2.imencode(".jpg", np.full((480, 640, 3), 90, np.uint8))
    assert ok
    (tmp_path / "frame.jpg").write_bytes(data.tobytes()[:-300])
    assert main(["vision", "calibrate", "--image", str(tmp_path / "frame.jpg"),
                 "--corners", "100,100 500,100 500,400 100,400"]) == 2
    assert f"{tmp_path / 'frame.jpg'}: a JPEG cut short" in capsys.readouterr().err


def test_the_camera_size_asked_by_default_is_the_table_files_and_a_bad_one_is_refused_before_the_camera(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A profile enrolled, or a window calibrated, at another size than the daemon's camera reads is
    off by the ratio: the default asked for is the table file's own. A bad size is named before any camera
    is opened (none is here)."""
    from controller.daemon.camera_config import CameraSpec
    from vision.cli import CAMERA_SIZE

    fields = CameraSpec.model_fields
    assert f"{fields['width'].default}x{fields['height'].default}" == CAMERA_SIZE
    for argv in (["vision", "calibrate", "--camera", "/dev/no-such-camera", "--corners", "1,1 9,1 9,9 1,9"],
                 ["vision", "enroll", "--camera", "/dev/no-such-camera", "--out", str(tmp_path / "d.yaml")]):
        assert main([*argv, "--camera-size", "0x480"]) == 2
        err = capsys.readouterr().err
        assert f"croupier vision {argv[1]}: --camera-size '0x480': expected WxH" in err, err
    assert not (tmp_path / "d-shots").exists() and not (tmp_path / "d.yaml").exists()


@pytest.mark.parametrize(("extra", "said"), [
    (["--count", "-3"], "--count and --negatives are numbers of frames, 0 or more"),
    (["--negatives", "-1"], "--count and --negatives are numbers of frames, 0 or more"),
    (["--design", "nosuch"], "no design 'nosuch'; designs: classic"),
])
def test_scenes_refuses_a_bad_count_or_design_before_writing(
        tmp_path: Path, extra: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vision", "scenes", str(tmp_path / "out"), *extra]) == 2
    assert f"croupier vision scenes: {said}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_vision_test_reads_through_a_table_files_scan_window_and_deck(
        tmp_path: Path, held: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--table``: each frame read as the table's camera reads it, through its scan window, with its deck
    (before, the window was never applied: a set's figures were the whole frame's)."""
    def table(corners: str) -> str:
        path = tmp_path / f"t{len(list(tmp_path.glob('t*.yaml')))}.yaml"
        camera = f"camera:\n  deck: {DECK}\n  replay: {held}\n  scan_window: {{corners: {corners}}}\n"
        path.write_text(f"table: t\ngame: baccarat\nstate_dir: {tmp_path / 'state'}\n{camera}")
        return str(path)

    def report(*argv: str) -> dict[str, Any]:
        assert main(["vision", "test", str(held), *argv, "--json", "-"]) == 0
        found: dict[str, Any] = json.loads(capsys.readouterr().out)
        return found

    capsys.readouterr()
    whole = report("--deck", DECK)
    assert whole["correct"] == 8
    full = report("--table", table("[[0, 0], [1, 0], [1, 1], [0, 1]]"))
    assert full["deck"] == DECK and full["correct"] == 8  # the table's deck, the whole frame
    half = report("--table", table("[[0, 0], [0.5, 0], [0.5, 1], [0, 1]]"))
    assert half["frames"] == 8 and half["correct"] < 8  # the cards out of the window's half: not read
    plain = tmp_path / "plain.yaml"
    plain.write_text(f"table: p\ngame: baccarat\nstate_dir: {tmp_path / 'state2'}\n")
    assert main(["vision", "test", str(held), "--table", str(plain)]) == 2
    said = capsys.readouterr().err
    assert f"croupier vision test: --table {plain}: the table file has no camera section" in said

"""Enrolment and the command line: a profile that checks itself, names cards to re-shoot; a JSON report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vision_support import ENROL_SEED, enrolment, profile

from controller.cards import DECK, parse_card
from controller.cli import main
from vision.dataset import DatasetError, labelled_frames, write_enrolment_set, write_test_set
from vision.enroll import EnrolError, enrol, labelled_images
from vision.profile import ProfileError, load_profile, save_profile
from vision.recognise import recognise
from vision.synth import DESIGNS, STUDIO, negative_scene, scene


def test_enrolment_measures_the_index_and_passes_its_self_check() -> None:
    result = enrolment("classic")
    assert result.ok and result.problems == [] and result.reshoot == set()
    assert result.profile is not None and result.profile.spec.index.corner == "tl"
    lefty = enrolment("lefty")
    assert lefty.ok and lefty.profile is not None and lefty.profile.spec.index.corner == "tr"


def test_a_mislabelled_photograph_is_named_for_a_reshoot() -> None:
    design = DESIGNS["classic"]
    shots = [(scene(card, design, ENROL_SEED * 1000 + i, cond=STUDIO), card, f"{card}.jpg")
             for i, card in enumerate(DECK)]
    qh = next(i for i, s in enumerate(shots) if s[1].code == "QH")
    shots[qh] = (shots[qh][0], parse_card("KH"), "QH.jpg")  # the QH photograph filed as KH
    result = enrol(shots, "bad")
    assert not result.ok
    assert "QH" in result.reshoot  # no photograph of QH is left
    assert any("QH" in p for p in result.problems)


def test_a_photograph_without_a_card_is_named() -> None:
    design = DESIGNS["classic"]
    shots = [(scene(card, design, ENROL_SEED * 1000 + i, cond=STUDIO), card, f"{card}.jpg")
             for i, card in enumerate(DECK)]
    shots[5] = (negative_scene("empty", design, 1), shots[5][1], "empty.jpg")
    result = enrol(shots, "bad")
    assert not result.ok and shots[5][1].code in result.reshoot
    assert any("no card found" in p for p in result.problems)


def test_profile_round_trip_and_errors_name_the_key(tmp_path: Path) -> None:
    deck = profile()
    path = tmp_path / "decks" / "house.yaml"
    path.parent.mkdir()
    save_profile(deck, path)
    again = load_profile(path)
    assert again.spec.index == deck.spec.index and set(again.ranks) == set("23456789TJQKA")
    frame = scene(parse_card("9S"), DESIGNS["classic"], 31337)
    assert recognise(frame, again).card is recognise(frame, deck).card is parse_card("9S")
    (next((tmp_path / "decks").glob("house.templates-*")) / "ranks" / "Q.png").unlink()
    with pytest.raises(ProfileError, match=r"ranks\.Q.*cannot read"):
        load_profile(path)
    text = path.read_text().replace("min_score: 0.8", "min_score: 2")
    path.write_text(text)
    with pytest.raises(ProfileError, match=r"accept\.min_score"):
        load_profile(path)
    path.write_text(text.replace("version: 4", "version: 3"))  # colour in the old units: enrol again
    with pytest.raises(ProfileError, match=r"key 'version'.*enrol the deck again"):
        load_profile(path)


def test_labels_name_the_line(tmp_path: Path) -> None:
    (tmp_path / "a.jpg").write_bytes(b"")
    (tmp_path / "labels.csv").write_text("file,card\na.jpg,QX\n")
    with pytest.raises(DatasetError, match="line 2"):
        list(labelled_frames(tmp_path))
    with pytest.raises(EnrolError, match="line 2"):
        labelled_images(tmp_path)
    (tmp_path / "labels.csv").write_text("file,card\nmissing.jpg,QH\n")
    with pytest.raises(EnrolError, match="no image"):
        labelled_images(tmp_path)


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=200))
def test_any_labels_text_is_rows_or_a_clear_error(text: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "labels.csv").write_text(text, encoding="utf-8")
        try:
            frames = list(labelled_frames(folder))
        except DatasetError as exc:
            assert "labels.csv" in str(exc)
        else:
            assert frames == []


def test_enrol_and_test_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    enrol_dir, held, out = tmp_path / "enrol", tmp_path / "held", tmp_path / "decks" / "house.yaml"
    assert main(["vision", "scenes", str(enrol_dir), "--enrol", "--seed", "3"]) == 0
    assert main(["vision", "enroll", "--images", str(enrol_dir), "--out", str(out)]) == 0
    folder = next((tmp_path / "decks").glob("house.templates-*"))
    assert out.is_file() and len(list((folder / "ranks").glob("*.png"))) == 13
    assert main(["vision", "scenes", str(held), "--count", "52", "--negatives", "10", "--seed", "77"]) == 0
    capsys.readouterr()
    assert main(["vision", "test", str(held), "--deck", str(out), "--json", str(tmp_path / "r.json")]) == 0
    printed = capsys.readouterr().out
    assert "wrong reads 0" in printed and "false cards 0" in printed and "latency" in printed
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["card_frames"] == 52 and report["negative_frames"] == 10
    assert report["wrong"] == 0 and report["false_cards"] == 0 and report["accuracy"] >= 0.9
    assert set(report["latency_ms"]) == {"wall_p50", "wall_p99", "cpu_p50", "cpu_p99"}
    # One face missing: the enrolment refuses and names it; nothing is written.
    rows = (enrol_dir / "labels.csv").read_text().splitlines()
    (enrol_dir / "labels.csv").write_text("\n".join(r for r in rows if not r.startswith("7D")) + "\n")
    bad = tmp_path / "decks" / "bad.yaml"
    assert main(["vision", "enroll", "--images", str(enrol_dir), "--out", str(bad)]) == 1
    assert "7D" in capsys.readouterr().err and not bad.exists()


def test_enrol_from_a_camera_card_by_card(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The camera path with prompts, fed by a replayed recording: each card, then an empty window."""
    recording = tmp_path / "recording"
    recording.mkdir()
    design = DESIGNS["classic"]
    n = 0
    for i, card in enumerate(DECK):
        shown = [scene(card, design, 500 + i, cond=STUDIO)] * 4 + [negative_scene("empty", design, i)] * 2
        for frame in shown:
            cv2.imwrite(str(recording / f"{n:05d}.png"), frame)
            n += 1
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("\n" * 52))
    out = tmp_path / "house.yaml"
    assert main(["vision", "enroll", "--camera", str(recording), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert said.count("Show ") == 52 and "Show 2C in the window" in said
    shots = tmp_path / "house-shots"
    assert len(list(shots.glob("*.jpg"))) == 52 and (shots / "labels.csv").is_file()
    assert load_profile(out).spec.index.corner == "tl"
    shutil.rmtree(recording)


def test_a_recording_that_ends_early_names_the_card_it_waited_for(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without prompts, a recording of 2C then 2D with no empty window between: 2D's frames follow 2C's, so
    they are passed over as 2C's, and the recording ends while 2D is awaited. Before, the refusal named no
    card (a review, 2026-12-07)."""
    recording = tmp_path / "recording"
    recording.mkdir()
    design = DESIGNS["classic"]
    for n, card in enumerate(["2C"] * 4 + ["2D"] * 4):
        cv2.imwrite(str(recording / f"{n:05d}.png"), scene(parse_card(card), design, 600, cond=STUDIO))
    out = tmp_path / "house.yaml"
    assert main(["vision", "enroll", "--camera", str(recording), "--no-prompt", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "the replayed frames ran out while waiting for 2D" in err and "no card after the one before" in err
    assert not out.exists()


def test_enrolment_sets_are_seeded(tmp_path: Path) -> None:
    assert write_enrolment_set(tmp_path / "a", DESIGNS["bold"], 9) == 52
    assert write_test_set(tmp_path / "b", DESIGNS["bold"], 9, 5, 5) == 10
    rows = (tmp_path / "b" / "labels.csv").read_text().splitlines()
    assert rows[0] == "file,card" and sum(r.endswith(",none") for r in rows) == 5

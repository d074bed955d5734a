"""docs/shoe-vectors.json: the codec reproduces every golden vector, and the file is up to date."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drivers.shoe.codec import EOF, ESC, SOF, Frame, FrameDecoder, FramingError, crc16_ccitt, encode_frame
from drivers.shoe.messages import encode_payload
from drivers.shoe.vectors import golden_vectors

pytestmark = pytest.mark.timeout(60)

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parent.parent / "docs" / "shoe-vectors.json").read_text(encoding="utf-8"))


def test_file_is_what_the_generator_writes() -> None:
    assert golden_vectors() == VECTORS, "regenerate: python -m drivers.shoe.vectors > docs/shoe-vectors.json"


def test_crc_check_value() -> None:
    crc = VECTORS["crc"]
    assert crc16_ccitt(crc["check_input_ascii"].encode()) == int(crc["check_value"], 16) == 0x29B1


@pytest.mark.parametrize("vec", VECTORS["frames"] + VECTORS["stuffing"], ids=lambda v: v["name"])
def test_codec_reproduces_every_good_vector(vec: dict[str, Any]) -> None:
    wire, body = bytes.fromhex(vec["wire"]), bytes.fromhex(vec["body"])
    assert crc16_ccitt(body[:-2]) == int(vec["crc"], 16) == int.from_bytes(body[-2:], "big")
    (frame,) = FrameDecoder().feed(wire)
    assert isinstance(frame, Frame) and frame.seq == vec["seq"]
    type_byte, payload = encode_payload(frame.message)
    assert (f"0x{type_byte:02X}", payload) == (vec["type"], bytes.fromhex(vec["payload"]))
    assert encode_frame(frame.seq, frame.message) == wire
    inner = wire[1:-1]  # every special byte of the body is escaped on the wire, and only those
    assert not {SOF, EOF} & set(inner)
    specials = sum(b in (SOF, EOF, ESC) for b in body)
    assert len(inner) == len(body) + specials


def test_stuffing_vectors_cover_each_special_byte_in_each_place() -> None:
    names = {v["name"] for v in VECTORS["stuffing"]}
    for what in ("7E (start marker)", "7F (end marker)", "7D (escape)"):
        for place in ("SEQ is", "payload holds", "CRC high byte is", "CRC low byte is"):
            assert f"{place} {what}" in names


@pytest.mark.parametrize("vec", VECTORS["refused"], ids=lambda v: v["name"])
def test_codec_refuses_every_bad_vector_for_the_reason_given(vec: dict[str, Any]) -> None:
    out = FrameDecoder().feed(bytes.fromhex(vec["wire"]))
    assert out and all(isinstance(x, FramingError) for x in out)
    assert vec["reason"] in out[0].reason

"""Golden vectors of protocol v1: frames and their exact bytes, for firmware tested without Python.

``python -m drivers.shoe.vectors > docs/shoe-vectors.json`` writes the file; a test checks that
the file in docs/ is what this produces *and* that the codec decodes every vector back (so the
file can be trusted as a reference, not as a copy of whatever the code does). It holds:

* the CRC check value (``123456789`` → ``0x29B1``) and the worked examples of the document;
* one frame of every message type, both directions;
* every stuffing case: each of ``7D 7E 7F`` as the SEQ, inside a payload, as the CRC's high
  byte and as its low byte (found by search, so each vector is a real frame; LEN is at most 96
  and so never needs it);
* frames a receiver must refuse, each with the reason.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from controller.cards import parse_card
from drivers.shoe.codec import EOF, ESC, MAX_BODY, SOF, crc16_ccitt, encode_frame, stuff
from drivers.shoe.messages import (
    TYPE_NAMES,
    Ack,
    CardMsg,
    Dispense,
    Fault,
    Heartbeat,
    Hello,
    Lid,
    Message,
    Nak,
    Reset,
    ShoeEmpty,
    ShuffleComplete,
    ShuffleStarted,
    StatusRequest,
    UnknownMessage,
    encode_payload,
)

SPECIALS = {SOF: "7E (start marker)", EOF: "7F (end marker)", ESC: "7D (escape)"}


def _hex(data: bytes) -> str:
    return data.hex(" ").upper()


def vector(name: str, seq: int, message: Message, note: str = "") -> dict[str, Any]:
    """One good frame: its fields, its unstuffed body, its CRC and its bytes on the wire."""
    type_byte, payload = encode_payload(message)
    head = bytes((seq, type_byte, len(payload))) + payload
    crc = crc16_ccitt(head)
    out: dict[str, Any] = {
        "name": name,
        "direction": "host_to_shoe" if type_byte >= 0x80 else "shoe_to_host",
        "seq": seq,
        "type": f"0x{type_byte:02X}",
        "type_name": TYPE_NAMES.get(type_byte, "vendor/unknown"),
        "payload": _hex(payload),
        "crc": f"0x{crc:04X}",
        "body": _hex(head + crc.to_bytes(2, "big")),
        "wire": _hex(encode_frame(seq, message)),
    }
    if note:
        out["note"] = note
    return out


def _stuffing_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for byte, what in SPECIALS.items():
        note = f"SEQ 0x{byte:02X} goes out as 7D {byte ^ 0x20:02X}"
        cases.append(vector(f"SEQ is {what}", byte, Ack(), note))
        # (LEN is at most 96, so it is never one of the three.)
        payload: Message = Fault(130, chr(byte)) if byte != EOF else Heartbeat(dealt=0x7F7F)
        cases.append(vector(f"payload holds {what}", 2, payload))
        for half, index in (("high", 0), ("low", 1)):
            for seq in range(256):  # find a real frame whose CRC has the byte there
                head = bytes((seq, 0x03, 2)) + b"AS"
                if crc16_ccitt(head).to_bytes(2, "big")[index] == byte:
                    cases.append(vector(f"CRC {half} byte is {what}", seq, CardMsg(parse_card("AS"))))
                    break
            else:  # pragma: no cover - the search space has such a frame for every case
                raise AssertionError(f"no CARD AS frame with CRC {half} byte 0x{byte:02X}")
    return cases


def _refused() -> list[dict[str, Any]]:
    good = bytes.fromhex(vector("", 5, CardMsg(parse_card("AS")))["body"])
    long_head = bytes((4, 0x09, MAX_BODY - 2)) + b"\x01" + b"j" * (MAX_BODY - 3)
    long_body = long_head + crc16_ccitt(long_head).to_bytes(2, "big")
    cases = [
        ("CRC wrong (last byte changed)", good[:-1] + bytes((good[-1] ^ 1,)), "CRC mismatch"),
        ("LEN wrong (says 3, payload has 2)",
         bytes((5, 3, 3)) + b"AS" + crc16_ccitt(bytes((5, 3, 3)) + b"AS").to_bytes(2, "big"),
         "length byte says 3"),
        ("body shorter than 5 bytes", b"\x05\x81\x00\x0f", "shorter than the minimum"),
        (f"body of {len(long_body)} bytes, over the {MAX_BODY}-byte limit", long_body,
         f"longer than {MAX_BODY}"),
    ]
    out = [{"name": name, "wire": _hex(bytes((SOF,)) + stuff(body) + bytes((EOF,))), "reason": reason}
           for name, body, reason in cases]
    out.append({"name": "invalid escape (7D 41)", "wire": "7E 05 7D 41 03 02 41 53 93 8C 7F",
                "reason": "invalid escape 7d 41"})
    return out


def golden_vectors() -> dict[str, Any]:
    """Everything in docs/shoe-vectors.json, as data."""
    every_type: list[tuple[str, int, Message]] = [
        ("HELLO at power-up (the document's example)", 0, Hello("SimShoe", "1.0.0", "SIM-0001")),
        ("HEARTBEAT, lid open and 300 cards read", 17, Heartbeat(lid_open=True, dealt=300)),
        ("HEARTBEAT, empty and faulted", 18, Heartbeat(empty=True, faulted=True, dealt=52)),
        ("CARD ace of spades (the worked example)", 5, CardMsg(parse_card("AS"))),
        ("CARD ten of hearts", 6, CardMsg(parse_card("TH"))),
        ("BURN nine of diamonds", 7, CardMsg(parse_card("9D"), burn=True)),
        ("SHOE_EMPTY", 8, ShoeEmpty()),
        ("LID open", 9, Lid(True)),
        ("LID closed", 10, Lid(False)),
        ("SHUFFLE_STARTED", 11, ShuffleStarted()),
        ("SHUFFLE_COMPLETE, 8 decks", 12, ShuffleComplete(8)),
        ("FAULT jam with text", 13, Fault(1, "card stuck")),
        ("FAULT vendor code 200, no text", 14, Fault(200)),
        ("vendor message 0x61 (ACKed and ignored by a host that does not know it)", 15,
         UnknownMessage(0x61, b"\x01\x02")),
        ("ACK of seq 5 (the worked example)", 5, Ack()),
        ("NAK: resend from seq 126 (the stuffing example)", 0x7E, Nak()),
        ("STATUS_REQUEST, first command of a session", 0, StatusRequest()),
        ("DISPENSE, second command of a session", 1, Dispense()),
        ("RESET", 2, Reset()),
    ]
    return {
        "about": "Golden vectors of Croupier shoe protocol v1 (docs/shoe-protocol.md). Hex bytes, "
                 "space separated. 'body' is SEQ TYPE LEN PAYLOAD CRC before stuffing; 'wire' is "
                 "the frame as sent. Regenerate: python -m drivers.shoe.vectors",
        "crc": {"algorithm": "CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final XOR",
                "check_input_ascii": "123456789", "check_value": f"0x{crc16_ccitt(b'123456789'):04X}"},
        "frames": [vector(name, seq, msg) for name, seq, msg in every_type],
        "stuffing": _stuffing_cases(),
        "refused": _refused(),
    }


def main() -> int:
    json.dump(golden_vectors(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Ways the simulated shoe can break protocol v1 on purpose, so the conformance kit's checks are seen
to fail (``croupier sim shoe --misbehave NAME``). Each names the check it must make fail.

A conformance kit that never fails proves nothing: each quirk below is one documented rule broken
the way real firmware gets it wrong, and tests/test_shoe_conformance.py runs the kit against each.
"""

from __future__ import annotations

from typing import Final

#: quirk -> (what the shoe does wrong, the conformance check that catches it)
QUIRKS: Final[dict[str, tuple[str, str]]] = {
    "hello_version_2": ("HELLO announces protocol version 2", "hello"),
    "hello_seq_1": ("HELLO (and the numbering after RESET) starts at SEQ 1", "hello"),
    "no_status": ("STATUS_REQUEST is ignored", "status_request"),
    "slow_heartbeat": ("an idle shoe beats every 2.2 s, not every 1 s", "heartbeat_cadence"),
    "fixed_resend": ("resends every 200 ms without doubling", "resend_timing"),
    "ignore_nak": ("NAK is ignored", "nak"),
    "accept_bad_crc": ("host frames with a bad CRC are taken as good", "damaged_host_frame"),
    "no_stuffing": ("7D, 7E and 7F are sent as they are, unstuffed", "stuffing"),
    "reset_forgets": ("RESET drops the frame not yet acknowledged", "reset"),
    "give_up": ("stops resending after 3 resends (a card read is lost)", "unplug"),
    "double_dispense": ("one DISPENSE deals two cards", "dispense"),
    "no_lid_flag": ("the HEARTBEAT lid flag is never set", "lid"),
    "fault_stays": ("RESET does not clear the faulted flag", "fault"),
}


def check_quirks(names: set[str]) -> None:
    """ValueError naming the unknown quirks, and the known ones."""
    unknown = names - set(QUIRKS)
    if unknown:
        raise ValueError(f"unknown misbehaviour {', '.join(sorted(unknown))}; known: {', '.join(QUIRKS)}")

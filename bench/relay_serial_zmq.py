"""The baseline for bench/daemon_latency.py: read shoe frames with pyserial, publish them with pyzmq.

Nothing else: no journal, no engine, no asyncio. It decodes protocol v1
frames with the same pure codec the daemon's reader uses and publishes each
card as a two-frame message, so the difference to the daemon is exactly
what the daemon adds (the reader thread, the hop into the loop, the journal
commit, the engine, the JSON event).

    python bench/relay_serial_zmq.py PORT PUB_ENDPOINT
"""

from __future__ import annotations

import json
import sys

import serial  # type: ignore[import-untyped]
import zmq

from drivers.shoe.codec import Frame, FrameDecoder
from drivers.shoe.messages import CardMsg


def main() -> int:
    port, endpoint = sys.argv[1], sys.argv[2]
    pub = zmq.Context.instance().socket(zmq.PUB)
    pub.setsockopt(zmq.LINGER, 0)
    pub.bind(endpoint)
    line = serial.serial_for_url(port, baudrate=115200, timeout=0.1)
    decoder = FrameDecoder()
    seq = 0
    print("ready", flush=True)
    while True:
        data = line.read(1)
        if not data:
            continue
        waiting = line.in_waiting
        if waiting:
            data += line.read(waiting)
        for item in decoder.feed(data):
            if isinstance(item, Frame) and isinstance(item.message, CardMsg):
                seq += 1
                msg = item.message
                payload = {"event": "card", "seq": seq, "card": msg.card.code, "burn": msg.burn}
                pub.send_multipart([b"relay.card", json.dumps(payload).encode()])


if __name__ == "__main__":
    raise SystemExit(main())

"""Signage display under abuse: its RSS with 1,000 half-open connections and 20,000 SSE attempts.

    .venv/bin/python bench/display_limits.py [--half-open 1000] [--attempts 20000]

Runs ``croupier display firmware_configs/tables/baccarat_sim.yaml --listen
127.0.0.1:0 --pub ipc://... --snapshot ipc://...`` (no daemon behind it: the
screen says "no live feed", the web server is the same) and measures its RSS
(``/proc/PID/status`` VmRSS) at each step: at rest; with ``--half-open``
connections that send half a request and stop (they must all be closed by the
header timeout, signage/limits.py); after them; with the stream limit's worth
of SSE streams open and ``--attempts`` more attempts (pipelined 1,000 to a
connection, each answered 503); and after every stream closed. Not a test:
tests/test_display_limits.py asserts the bounds themselves.
"""

from __future__ import annotations

import argparse
import os
import select
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from signage.limits import WebLimits  # noqa: E402

REQUEST = b"GET /feed/baccarat_sim HTTP/1.1\r\nHost: display\r\n\r\n"


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def open_count(socks: list[socket.socket], timeout: float) -> int:
    """How many of ``socks`` the server has not closed, waiting up to ``timeout`` for it to close them."""
    pending = list(socks)
    give_up = time.monotonic() + timeout
    while pending and time.monotonic() < give_up:
        poller = select.poll()
        by_fd = {s.fileno(): s for s in pending}
        for fd in by_fd:
            poller.register(fd, select.POLLIN)
        done = set()
        for fd, _ in poller.poll(200):
            try:
                if by_fd[fd].recv(65536) == b"":
                    done.add(fd)
            except ConnectionResetError:
                done.add(fd)
        pending = [s for s in pending if s.fileno() not in done]
    return len(pending)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half-open", type=int, default=1000)
    parser.add_argument("--attempts", type=int, default=20_000)
    args = parser.parse_args()
    limits = WebLimits()
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "controller.cli", "display",
                   str(ROOT / "firmware_configs/tables/baccarat_sim.yaml"), "--listen", "127.0.0.1:0",
                   "--pub", f"ipc://{tmp}/pub", "--snapshot", f"ipc://{tmp}/snap"]
        print("display:", " ".join(command[1:]))
        display = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            assert display.stdout is not None
            line = display.stdout.readline()
            port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
            time.sleep(1.0)
            pid = display.pid
            print(f"at rest: {rss_mib(pid):.1f} MiB")
            half = [socket.create_connection(("127.0.0.1", port)) for _ in range(args.half_open)]
            for sock in half:
                sock.sendall(b"GET /feed/baccarat_sim HTTP/1.1\r\nHost: display\r\nX-Slow: ")
            time.sleep(0.5)
            print(f"{args.half_open} half-open connections: {rss_mib(pid):.1f} MiB")
            still = open_count(half, limits.header_timeout + 10)
            print(f"after the header timeout ({limits.header_timeout:g} s): {still} still open, "
                  f"{rss_mib(pid):.1f} MiB")
            for sock in half:
                sock.close()
            streams = [socket.create_connection(("127.0.0.1", port)) for _ in range(limits.max_streams)]
            for sock in streams:
                sock.sendall(REQUEST)
            time.sleep(1.0)
            print(f"{limits.max_streams} SSE streams (the limit): {rss_mib(pid):.1f} MiB")
            refused, peak = 0, 0.0
            while refused < args.attempts:
                burst = min(1000, args.attempts - refused)
                sock = socket.create_connection(("127.0.0.1", port))
                sock.sendall(REQUEST * burst)
                answers = b""
                while answers.count(b" 503 ") < burst:
                    chunk = sock.recv(1 << 20)
                    if not chunk:
                        break
                    answers += chunk
                sock.close()
                refused += answers.count(b" 503 ")
                peak = max(peak, rss_mib(pid))
            print(f"{args.attempts} more SSE attempts: {refused} answered 503; peak {peak:.1f} MiB, "
                  f"now {rss_mib(pid):.1f} MiB")
            for sock in streams:
                sock.close()
            time.sleep(1.0)
            print(f"every stream closed: {rss_mib(pid):.1f} MiB")
        finally:
            display.terminate()
            display.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

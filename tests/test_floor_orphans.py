"""Nothing the floor's tests start outlives them: a run cut short (SIGKILL) leaves no server or recorder.

A parent process starts what a floor test starts (nats-server, PostgreSQL, a recorder through
floor_support.Proc) and is SIGKILLed, as pytest is when a run is interrupted or times out: its
fixtures' clean-up never runs. Each child must end on its own within seconds (the kernel's death
signal, and the recorder's ``--exit-with-parent`` watch), instead of reconnecting for ever.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[1]

#: The parent: what a floor test's fixtures and Procs start, then its children's pids and folders.
PARENT = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    sys.path.insert(0, "tests")
    from floor_support import Proc, query
    from controller.floor.local import NatsServer, Postgres
    nats, pg = NatsServer().start(), Postgres().start()
    rec = Proc(Path(sys.argv[1]), "floor", "record", "--nats", nats.url, "--db", pg.dsn).start()
    deadline = time.monotonic() + 60
    while not query(pg.dsn, "SELECT 1 FROM schema_version") and time.monotonic() < deadline:
        time.sleep(0.1)  # the recorder is connected to both and has made its tables
    postmaster = int((pg.data / "postmaster.pid").read_text().split()[0])
    print(json.dumps({"nats-server": nats.proc.pid, "postgres": postmaster, "recorder": rec.proc.pid,
                      "folders": [str(nats.folder), str(pg.folder)]}), flush=True)
    time.sleep(600)
""")


def running(pid: int) -> bool:
    """The process exists and is not a zombie (an orphan's zombie waits for init to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_servers_and_recorders_end_with_a_test_run_killed_outright(tmp_path: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(tmp_path / "rec.log")], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    children: dict[str, int] = {}
    folders: list[str] = []
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline()
        if not line:
            pytest.fail(f"the parent did not start its servers: {parent.communicate(timeout=10)[1].decode()}")
        started = json.loads(line)
        folders = started.pop("folders")
        children = {name: int(pid) for name, pid in started.items()}
        assert all(running(pid) for pid in children.values()), children
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 30
        while any(running(pid) for pid in children.values()) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = sorted(name for name, pid in children.items() if running(pid))
        assert left == [], f"still running after their parent was killed: {left}\n" + (
            (tmp_path / "rec.log").read_text(errors="replace")[-2000:])
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)
        for pid in children.values():  # only what this test started, and only when it failed
            if running(pid):
                os.kill(pid, signal.SIGKILL)
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)

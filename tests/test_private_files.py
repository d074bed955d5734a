"""Every file the daemon creates is private from its first byte, and a crash anywhere in a first start
leaves a table that starts (docs/security.md, "Files"; docs/daemon.md, "A new table's first start").

The crashes are real: ``croupier run`` in a subprocess, killed by its own SIGKILL at a fault point
(controller.daemon.faults) inside each write of the first start; the restart is the real daemon.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_daemon_support import write_table

from controller.cli import main
from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import load_table
from controller.daemon.keys import KeyFolder
from controller.daemon.private import write_atomic
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon

pytestmark = pytest.mark.timeout(180)
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(params=[0o022, 0o277], ids=["umask022", "umask277"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _modes(root: Path) -> dict[str, str]:
    """Every path under ``root`` (and root) -> its permission bits, octal."""
    found = {".": oct(stat.S_IMODE(root.stat().st_mode))}
    for path in root.rglob("*"):
        found[str(path.relative_to(root))] = oct(stat.S_IMODE(path.stat().st_mode))
    return found


def _starts_and_answers(table: Path) -> dict[str, str]:
    """Start the table's daemon, ping it with a key made now; the modes under its state dir meanwhile."""
    config = load_table(table)
    with DaemonThread(Daemon(config, use_shoe=False)):
        client = CommandClient(config.spec.zeromq.command, timeout=10,
                               key=local_key(config, "operator", "olive"))
        try:
            assert client.call("ping")["ok"]
        finally:
            client.close()
        return _modes(config.state_dir)


def test_every_file_and_folder_of_a_first_start_is_0600_or_0700_whatever_the_umask(
        tmp_path: Path, umask: int) -> None:
    table = write_table(tmp_path)
    modes = _starts_and_answers(table)  # the daemon's first start, then a client key made here
    assert {"journal.sqlite3", "journal.sqlite3-wal", "journal.sqlite3-shm", "journal.marker", "daemon.lock",
            "keys/server.key", "keys/server.key_secret", "keys/authorized/olive.key",
            "keys/clients/olive.key_secret"} <= set(modes), modes
    for name, mode in modes.items():
        is_dir = (tmp_path / "t1-state" / name).is_dir()
        assert mode == ("0o700" if is_dir else "0o600"), (name, mode)


#: Each write of a first start, each step: the journal marker, the server's secret and its public file
#: (controller.daemon.private.write_atomic), and the journal built aside (a new table journals nothing
#: at its first start: the journal's own commits are killed in test_shoe_exactly_once and friends).
FIRST_START_POINTS = [
    *(f"{step}:{n}" for n in (1, 2, 3)
      for step in ("file_created", "file_written", "file_synced", "file_renamed")),
    "journal_created:1",
]


def test_a_kill_at_every_write_of_a_first_start_leaves_a_table_that_starts(tmp_path: Path) -> None:
    for n, point in enumerate(FIRST_START_POINTS):
        (tmp_path / f"t{n}").mkdir()
        table = write_table(tmp_path / f"t{n}")
        done = subprocess.run(
            [sys.executable, "-m", "controller.cli", "run", str(table), "--no-shoe", "--log-level", "ERROR"],
            cwd=ROOT, env={**os.environ, "CROUPIER_FAULT": point}, capture_output=True, timeout=60,
            check=False)
        assert done.returncode == -signal.SIGKILL, (point, done.returncode, done.stderr[-2000:])
        _starts_and_answers(table)


def test_keys_server_replaces_an_empty_or_corrupt_secret_loudly(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = KeyFolder(tmp_path / "keys")
    assert main(["keys", "server", "--keys", str(folder.root)]) == 0
    assert capsys.readouterr().out.startswith("made ")
    public = folder.server_pair()[0]
    for broken in ("", "curve\n    public-key = \"short\"\n"):
        folder.server_secret_file.write_text(broken, encoding="utf-8")
        assert main(["keys", "server", "--keys", str(folder.root)]) == 0
        out, err = capsys.readouterr()
        assert out.startswith("replaced ") and "THE SERVER KEY WAS REPLACED" in err
        assert "every client needs the new public key" in err
        new_public = folder.server_pair()[0]
        assert new_public != public and folder.server_public_file.read_text().count(new_public.decode()) == 1
        public = new_public
    assert main(["keys", "server", "--keys", str(folder.root)]) == 0
    assert capsys.readouterr().out.startswith("kept ")
    folder.server_secret_file.unlink()
    assert main(["keys", "server", "--keys", str(folder.root)]) == 0
    assert capsys.readouterr().out.startswith("made ")


@pytest.mark.parametrize("writes", [1, 2], ids=["after the secret", "after the public file"])
def test_a_replacement_of_the_server_key_cut_short_is_completed_and_said_loudly(
        tmp_path: Path, writes: int) -> None:
    """``keys server`` over a corrupt secret, killed after its first or second write (a review, 2026-12-05:
    the next run found a good secret, rewrote only server.key, left clients/server.key stale for good
    and said "kept"): the next run mends every copy and says the key was replaced."""
    folder = KeyFolder(tmp_path / "keys")
    folder.ensure_server()
    folder.new_client("admin", "operator")
    folder.server_secret_file.write_text("corrupt\n", encoding="utf-8")
    command = [sys.executable, "-m", "controller.cli", "keys", "server", "--keys", str(folder.root)]
    killed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "CROUPIER_FAULT": f"file_renamed:{writes}:kill"})
    assert killed.returncode == -signal.SIGKILL
    public = folder.server_pair()[0]  # the new secret is in place
    again = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout.startswith("replaced "), again
    assert "THE SERVER KEY WAS REPLACED: its replacement was cut short" in again.stderr
    for copy in (folder.server_public_file, folder.clients / "server.key"):
        assert public.decode() in copy.read_text(encoding="utf-8"), copy
    assert subprocess.run(command, cwd=ROOT, capture_output=True, text=True).stdout.startswith("kept ")


def test_an_atomic_write_never_follows_a_link_at_its_temporary_name(tmp_path: Path) -> None:
    """In a shared folder another user could put a link where the temporary file goes, to make us truncate
    a file of ours (a review, 2026-12-05): the link is removed, never followed; the linked file is
    untouched and the target written whole."""
    victim = tmp_path / "journal-copy.txt"
    victim.write_text("precious", encoding="utf-8")
    target = tmp_path / "export.jsonl"
    (tmp_path / ".export.jsonl.partial").symlink_to(victim)
    write_atomic(target, "rows\n")
    assert victim.read_text(encoding="utf-8") == "precious" and target.read_text(encoding="utf-8") == "rows\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="another user's file needs root to make (CI runs as root)")
def test_an_atomic_write_never_writes_into_a_temporary_file_another_user_made(tmp_path: Path) -> None:
    """Another user makes the temporary name first in a shared folder and holds it open: the secret was
    written into that user's file, readable through the descriptor (a review, 2026-12-07). It is made
    anew: ours, and the other user's descriptor sees nothing of it."""
    share = tmp_path / "share"
    share.mkdir()
    share.chmod(0o1777)
    partial = share / ".alice.key_secret.partial"
    fd = os.open(partial, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        os.fchown(fd, 65534, 65534)  # nobody's
        write_atomic(share / "alice.key_secret", "secret-key = x\n")
        os.lseek(fd, 0, os.SEEK_SET)
        assert os.read(fd, 100) == b""
    finally:
        os.close(fd)
    made = (share / "alice.key_secret").stat()
    assert made.st_uid == os.geteuid() and stat.S_IMODE(made.st_mode) == 0o600

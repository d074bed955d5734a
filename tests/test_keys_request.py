"""Keys handed over without a secret travelling: ``croupier keys request`` on the operator's machine,
``croupier keys authorize`` on the table's (docs/security.md, docs/install.md).

The real command line, real key files and a real daemon on ipc:// sockets in tmp_path; the
operator's folder and the table's key folder are two folders that share only the public files.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from test_daemon_support import config_for

from controller.cli import main
from controller.daemon.config import TableConfig
from controller.daemon.keys import KeyFolder, load_pair
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon

pytestmark = pytest.mark.timeout(60)


def request(out: Path, name: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["keys", "request", name, "--out", str(out)]) == 0
    return capsys.readouterr().out


def authorize(config: TableConfig, public: Path, name: str, role: str,
              capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["keys", "authorize", str(public), "--name", name, "--role", role,
                 "--table", str(config.path)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_requested_key_once_authorised_commands_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_for(tmp_path)
    operator = tmp_path / "laptop" / "croupier-keys"
    printed = request(operator, "alice", capsys)
    secret, public = operator / "alice.key_secret", operator / "alice.key"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and stat.S_IMODE(operator.stat().st_mode) == 0o700
    key, own_secret = load_pair(secret)
    assert own_secret is not None and key.decode() in printed and str(public) in printed
    assert load_pair(public) == (key, None)  # the file handed over holds no secret
    assert request(operator, "alice", capsys).replace("kept", "made") == printed  # asked again: the same key

    code, out, err = authorize(config, public, "alice", "operator", capsys)
    assert code == 0, err
    folder = KeyFolder(config.key_folder())
    assert "alice" in out and str(folder.server_public_file) in out
    assert not (folder.clients / "alice.key_secret").exists()  # no secret was made or kept on the table
    shutil.copy(folder.server_public_file, operator / "server.key")  # the public key the admin hands back
    with DaemonThread(Daemon(config, use_shoe=False)):
        assert main(["ctl", "--table", str(config.path), "--key", str(secret), "credit-in", "1", "5"]) == 0
        assert main(["ctl", "--table", str(config.path), "--key", str(secret), "status"]) == 0
    assert "credit" in capsys.readouterr().out


def test_authorizing_again_answers_the_same_and_a_name_is_one_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_for(tmp_path)
    request(tmp_path / "a", "alice", capsys)
    request(tmp_path / "b", "alice", capsys)  # another machine, another pair, the same name
    first = authorize(config, tmp_path / "a/alice.key", "alice", "operator", capsys)
    assert first[0] == 0
    assert authorize(config, tmp_path / "a/alice.key", "alice", "operator", capsys) == first  # a resend
    authorised = KeyFolder(config.key_folder()).authorized / "alice.key"
    kept = authorised.read_bytes()
    for public, name, role, why in (
        (tmp_path / "b/alice.key", "alice", "operator", "another key or role"),
        (tmp_path / "a/alice.key", "alice", "observer", "another key or role"),
        (tmp_path / "a/alice.key", "alice2", "operator", "already authorised as 'alice'"),
    ):
        code, out, err = authorize(config, public, name, role, capsys)
        assert code == 2 and out == "", (name, role, out)
        assert why in err and "authorized/alice" in err, err
    assert authorised.read_bytes() == kept
    assert sorted(p.name for p in authorised.parent.iterdir()) == ["alice.key"]


def test_a_file_that_is_no_public_key_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_for(tmp_path)
    request(tmp_path / "op", "alice", capsys)
    empty, garbage, short = tmp_path / "empty.key", tmp_path / "garbage.key", tmp_path / "short.key"
    empty.write_text("")
    garbage.write_bytes(b"\xff\xfe not a certificate\n")
    short.write_text('metadata\ncurve\n    public-key = "abc"\n')
    for bad, why in ((tmp_path / "missing.key", "no such file"), (empty, "No public key"),
                     (garbage, "No public key"), (short, "40 z85"),
                     (tmp_path / "op/alice.key_secret", "holds a secret key")):
        code, out, err = authorize(config, bad, "alice", "operator", capsys)
        assert code == 2 and out == "", bad
        assert err.startswith(f"croupier keys: {bad}: ") and why in err, err
    authorized = KeyFolder(config.key_folder()).authorized
    assert not authorized.exists() or not any(authorized.iterdir())


def test_an_authorised_key_is_readable_by_the_daemons_group(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An installed table's folder is root's with the daemon's group (deploy/install.sh): a key
    authorised there by root must be readable by that group, or the daemon could never load it."""
    config = config_for(tmp_path)
    folder = KeyFolder(config.key_folder())
    folder.ensure_server()
    group = 4242 if os.geteuid() == 0 else os.getegid()
    os.chown(folder.authorized, -1, group)
    os.chmod(folder.authorized, 0o750)
    request(tmp_path / "op", "alice", capsys)
    assert authorize(config, tmp_path / "op/alice.key", "alice", "operator", capsys)[0] == 0
    made = (folder.authorized / "alice.key").stat()
    assert stat.S_IMODE(made.st_mode) == 0o640 and made.st_gid == group
    request(tmp_path / "op", "olga", capsys)
    os.chmod(folder.authorized, 0o700)  # a folder of the tests' or the demo's: stays the user's alone
    assert authorize(config, tmp_path / "op/olga.key", "olga", "observer", capsys)[0] == 0
    assert stat.S_IMODE((folder.authorized / "olga.key").stat().st_mode) == 0o600


def test_a_key_folder_that_cannot_be_made_is_named_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where the key folder should go")
    assert main(["keys", "request", "ana", "--out", str(blocker / "keys")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("croupier keys: ") and str(blocker) in err and "Traceback" not in err, err

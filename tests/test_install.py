"""deploy/install.sh run into a temporary root: what it lays down, and that systemd accepts the units.

The real script, the real systemd-sysusers and systemd-analyze of this machine; only the root is
a temporary folder (``--root``), so nothing of the machine is touched. The venv is made for real;
``--no-deps`` keeps the test from downloading every dependency again (the first-run keys are made
with this checkout's croupier, ``CROUPIER_INSTALL_TOOL``).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_daemon_support import free_port_base, write_table

from controller.cli import main
from controller.daemon.client import CommandClient
from controller.daemon.config import load_table
from controller.daemon.keys import client_credentials, read_role
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(300)

#: Every file the install lays down outside /opt/croupier (docs/install.md lists the same).
LAID_DOWN = [
    "usr/lib/sysusers.d/croupier.conf",
    "etc/systemd/system/croupier@.service",
    "etc/systemd/system/croupier-display@.service",
    "etc/systemd/system/croupier-uplink@.service",
    "etc/udev/rules.d/70-croupier.rules",
    "etc/croupier/tables/baccarat_1.yaml",
    "etc/croupier/keys/baccarat_1/server.key",
    "etc/croupier/keys/baccarat_1/server.key_secret",
    "etc/croupier/keys/baccarat_1/authorized/admin.key",
    "etc/croupier/keys/baccarat_1/clients/admin.key_secret",
    "etc/croupier/keys/baccarat_1/clients/server.key",
]


def exposure(unit: str, root: Path) -> float:
    out = subprocess.run(["systemd-analyze", "security", "--offline=true", f"--root={root}", unit],
                         capture_output=True, text=True, check=False).stdout
    m = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", out)
    assert m, out[-2000:]
    return float(m.group(1))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("install")
    root = work / "root"
    root.mkdir()
    table = write_table(work, name="baccarat_1", shoe="shoes/sim_v1.yaml")
    raw = yaml.safe_load(table.read_text())
    raw["state_dir"] = "/var/lib/croupier/baccarat_1"
    raw["shoe"] = {"profile": "/opt/croupier/src/firmware_configs/shoes/sim_v1.yaml"}
    table.write_text(yaml.safe_dump(raw))
    env = {**os.environ, "CROUPIER_INSTALL_TOOL": str(Path(sys.executable).parent / "croupier")}
    done = subprocess.run(
        ["bash", str(ROOT / "deploy" / "install.sh"), "--root", str(root), "--python", "python3.11",
         "--pip-args", "--no-deps", "--table", str(table)],
        env=env, capture_output=True, text=True, check=False, timeout=280)
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def test_it_lays_down_the_documented_files(installed: Path) -> None:
    for path in LAID_DOWN:
        assert (installed / path).is_file(), path
    assert os.access(installed / "opt/croupier/venv/bin/croupier", os.X_OK)
    assert os.readlink(installed / "usr/local/bin/croupier") == "/opt/croupier/venv/bin/croupier"
    assert "/usr/local/bin/croupier" in (ROOT / "docs" / "install.md").read_text()
    assert (installed / "opt/croupier/src/pyproject.toml").is_file()
    assert not (installed / "opt/croupier/src/.venv").exists()
    for unit in ("croupier@.service", "croupier-display@.service"):
        shipped = (ROOT / "systemd" / unit).read_bytes()
        assert (installed / "etc/systemd/system" / unit).read_bytes() == shipped
    install_doc = (ROOT / "docs" / "install.md").read_text()
    for path in LAID_DOWN:
        assert "/" + path.replace("baccarat_1", "NAME") in install_doc, path


def test_a_shipped_table_copied_to_etc_finds_its_maps_and_profile_through_the_links(installed: Path) -> None:
    etc = installed / "etc/croupier"
    for folder in ("panels", "shoes", "decks"):  # the installed code has no firmware_configs of its own
        assert os.readlink(etc / folder) == f"/opt/croupier/src/firmware_configs/{folder}"
    for real in (ROOT / "firmware_configs/tables").glob("*[67]seat.yaml"):
        raw = yaml.safe_load(real.read_text())
        named = [raw["shoe"]["profile"], *(p if isinstance(p, str) else p["map"] for p in raw["panels"])]
        for name in named:  # ../panels/x.yaml from /etc/croupier/tables: /etc/croupier/panels/x.yaml
            folder, file = Path(name).parts[-2:]
            assert name == f"../{folder}/{file}" and os.path.islink(etc / folder), (real, name)
            assert (installed / "opt/croupier/src/firmware_configs" / folder / file).is_file(), (real, name)


def test_users_groups_and_key_permissions(installed: Path) -> None:
    passwd = (installed / "etc/passwd").read_text()
    lines = (installed / "etc/group").read_text().splitlines()
    group = {line.split(":")[0]: line.split(":") for line in lines}
    assert re.search(r"^croupier:x:\d+:\d+:", passwd, re.M) and "croupier-display:" in passwd
    for device_group in ("dialout", "gpio", "video"):
        assert "croupier" in group[device_group][3].split(","), device_group
    gid = int(group["croupier"][2])
    keys = installed / "etc/croupier/keys/baccarat_1"
    for daemon_reads in ("server.key_secret", "server.key", "authorized/admin.key"):  # as user croupier
        made = (keys / daemon_reads).stat()
        assert stat.S_IMODE(made.st_mode) == 0o640 and (made.st_uid, made.st_gid) == (0, gid), daemon_reads
    clients = (keys / "clients").stat()
    assert stat.S_IMODE(clients.st_mode) == 0o700 and clients.st_uid == 0
    assert stat.S_IMODE((keys / "clients/admin.key_secret").stat().st_mode) == 0o600
    assert read_role(keys / "authorized/admin.key") == "operator"


def test_a_key_authorised_after_the_install_is_readable_by_the_daemon(
    installed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/install.md's way in for an operator: `keys request` on their machine, `keys authorize` here
    as root; the daemon, user croupier, reads authorized/ through its group."""
    keys = installed / "etc/croupier/keys/baccarat_1"
    assert main(["keys", "request", "ann", "--out", str(tmp_path / "ann")]) == 0
    assert main(["keys", "authorize", str(tmp_path / "ann/ann.key"), "--name", "ann", "--role", "observer",
                 "--keys", str(keys)]) == 0, capsys.readouterr().err
    made = (keys / "authorized/ann.key").stat()
    assert stat.S_IMODE(made.st_mode) == 0o640 and made.st_gid == (keys / "authorized").stat().st_gid


def test_the_first_run_keys_command_the_table(installed: Path, tmp_path: Path) -> None:
    config = load_table(write_table(tmp_path, name="baccarat_1"))
    keys = installed / "etc/croupier/keys/baccarat_1"
    with DaemonThread(Daemon(config, use_shoe=False, keys_dir=keys)):
        admin = client_credentials(keys / "clients/admin.key_secret")
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=admin)
        assert client.call("credit_in", seat=1, amount=100)["ok"]
        client.close()


def test_systemd_accepts_the_units_and_they_are_hardened(installed: Path) -> None:
    # The distribution's own targets and slices, as on the Pi, so verify can resolve the dependencies.
    units = installed / "usr/lib/systemd/system"
    units.mkdir(parents=True, exist_ok=True)
    for pattern in ("*.target", "*.slice"):
        for unit in Path("/usr/lib/systemd/system").glob(pattern):
            shutil.copy(unit, units / unit.name, follow_symlinks=True)
    for unit in ("croupier@baccarat_1.service", "croupier-display@baccarat_1.service",
                 "croupier-uplink@baccarat_1.service"):
        verify = subprocess.run(["systemd-analyze", "verify", f"--root={installed}", unit],
                                capture_output=True, text=True, check=False)
        assert verify.returncode == 0 and not verify.stderr.strip(), verify.stderr
        assert exposure(unit, installed) <= 1.5, unit
    daemon = (installed / "etc/systemd/system/croupier@.service").read_text()
    for line in ("Type=notify", "WatchdogSec=", "RestartPreventExitStatus=2 3", "Restart=on-failure",
                 "SupplementaryGroups=dialout gpio video", "ProtectSystem=strict",
                 "StateDirectory=croupier/%i",
                 "SystemCallFilter=~@privileged @resources", "ProtectProc=invisible",
                 "WorkingDirectory=/run/croupier/%i", "Environment=LG_WD=/run/croupier/%i",
                 "StateDirectoryMode=0700",
                 "RemoveIPC=yes", "PrivateMounts=yes", "IPAddressDeny=any", "DeviceAllow=char-ttyUSB rw",
                 "DeviceAllow=char-gpiochip rw", "DeviceAllow=char-video4linux rw"):
        assert line in daemon, line
    assert "\nProcSubset=" not in daemon  # it hides /proc/cpuinfo: gpiozero cannot find the Pi's header


def test_udev_rules_name_the_devices_by_vendor_product_serial_with_their_groups() -> None:
    rules = [line for line in (ROOT / "deploy/70-croupier.rules").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    names = {}
    for rule in rules:
        keys = dict(re.findall(r'([A-Z]+(?:\{\w+\})?)\s*\+?==?\s*"([^"]*)"', rule))
        for needed in ("SUBSYSTEM", "ATTRS{idVendor}", "ATTRS{idProduct}", "ATTRS{serial}", "SYMLINK",
                       "GROUP"):
            assert needed in keys, (needed, rule)
        assert re.fullmatch(r"[0-9a-f]{4}", keys["ATTRS{idVendor}"]) and keys["MODE"] == "0660"
        names[keys["SYMLINK"]] = (keys["SUBSYSTEM"], keys["GROUP"])
    assert names["croupier-shoe"] == ("tty", "dialout")
    assert names["croupier-camera"] == ("video4linux", "video")


def test_two_tables_displays_on_one_pi_each_serve_on_their_own_port(tmp_path: Path) -> None:
    """The display unit takes its address from its instance (CROUPIER_DISPLAY_LISTEN, 8080 unless a
    drop-in says otherwise), not a port written into the unit that every instance would share."""
    unit = (ROOT / "systemd/croupier-display@.service").read_text()
    start = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    assert start.endswith("croupier display /etc/croupier/tables/%i.yaml"), start
    assert "Environment=CROUPIER_DISPLAY_LISTEN=127.0.0.1:8080" in unit.splitlines()
    base = free_port_base(2)
    displays = []
    try:
        for i, name in enumerate(("baccarat_1", "baccarat_2")):
            table = write_table(tmp_path, name=name)
            env = {**os.environ, "CROUPIER_DISPLAY_LISTEN": f"127.0.0.1:{base + i}"}
            displays.append(subprocess.Popen([sys.executable, "-m", "controller.cli", "display", str(table)],
                                             env=env, stdout=subprocess.PIPE, text=True))
        for i, proc in enumerate(displays):
            assert proc.stdout is not None
            assert proc.stdout.readline().startswith(f"display: http://127.0.0.1:{base + i}/ ")
    finally:
        for proc in displays:
            proc.terminate()
            proc.communicate(timeout=30)


def test_the_shipped_real_shoe_profiles_and_install_md_name_the_udev_device() -> None:
    """A real shoe is found by the name the shipped udev rules give it, whichever USB socket it is in."""
    real = [p for p in (ROOT / "firmware_configs/shoes").glob("*.yaml") if not p.name.startswith("sim_")]
    assert real
    for profile in real:
        assert yaml.safe_load(profile.read_text())["port"] == "/dev/croupier-shoe", profile.name
    install = (ROOT / "docs/install.md").read_text()
    named = re.findall(r"(?:firmware_configs|\.\.)/shoes/(\w+\.yaml)", install)
    assert named and all((ROOT / "firmware_configs/shoes" / name).is_file() for name in named), named
    assert 'SYMLINK+="croupier-shoe"' in (ROOT / "deploy/70-croupier.rules").read_text()


def test_a_second_run_leaves_the_uplinks_password_to_its_owner(tmp_path: Path) -> None:
    """The re-run after a git pull (docs/install.md) chowned the whole key folder to root, so the uplink,
    user croupier, could no longer read its nats.password (0600, its own) and restarted for ever (a
    review, 2026-12-07)."""
    root = tmp_path / "root"
    root.mkdir()
    table = write_table(tmp_path, name="baccarat_2", shoe="shoes/sim_v1.yaml")
    env = {**os.environ, "CROUPIER_INSTALL_TOOL": str(Path(sys.executable).parent / "croupier")}
    args = ["bash", str(ROOT / "deploy" / "install.sh"), "--root", str(root), "--python", "python3.11",
            "--pip-args", "--no-deps", "--table", str(table)]
    assert subprocess.run(args, env=env, capture_output=True, text=True, timeout=280).returncode == 0
    password = root / "etc/croupier/keys/baccarat_2/nats.password"
    password.write_text("secret\n")
    password.chmod(0o600)
    os.chown(password, 4321, 4321)  # the croupier user's, as the admin leaves it
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (password.stat().st_uid, stat.S_IMODE(password.stat().st_mode)) == (4321, 0o600)

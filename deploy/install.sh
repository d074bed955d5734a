#!/bin/bash
# Install Croupier on a Raspberry Pi (Raspberry Pi OS 64-bit, Python 3.11), as root:
#
#   sudo deploy/install.sh --table firmware_configs/tables/my_table.yaml
#
# Lays down (docs/install.md lists every file and why):
#   /opt/croupier/src                       this checkout (code, docs, device profiles, pin maps)
#   /opt/croupier/venv                      a virtual environment with croupier[pi] installed
#   /usr/local/bin/croupier                 a link to its croupier command
#   /usr/lib/sysusers.d/croupier.conf       users croupier (groups dialout, gpio, video) and croupier-display
#   /etc/systemd/system/croupier@.service   the table daemon, one instance per table file
#   /etc/systemd/system/croupier-display@.service
#   /etc/systemd/system/croupier-uplink@.service  the floor uplink (docs/floor.md), enabled by hand
#   /etc/udev/rules.d/70-croupier.rules     /dev/croupier-shoe, /dev/croupier-camera (edit the serials)
#   /etc/croupier/tables/NAME.yaml          each --table FILE (the unit instance is NAME)
#   /etc/croupier/{panels,shoes,decks}      links to the checkout's pin maps, shoe profiles and decks
#   /etc/croupier/keys/NAME/                first run: the table's server key and an operator key "admin"
#
# --root DIR installs into DIR instead of / (a test, an image being built): nothing on this machine
# is touched then, and no service is reloaded. Safe to run again: it never overwrites a table file,
# a key or an edited udev rules file (the new rules go beside it as .dist).
set -euo pipefail

ROOT=/
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=python3.11
PIP_ARGS=""
TABLES=()

usage() {
    sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    echo "options: [--root DIR] [--python PY] [--pip-args ARGS] [--table FILE]..."
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
        --root) ROOT=$2; shift 2 ;;
        --python) PYTHON=$2; shift 2 ;;
        --pip-args) PIP_ARGS=$2; shift 2 ;;
        --table) TABLES+=("$2"); shift 2 ;;
        -h|--help) usage ;;
        *) echo "install.sh: unknown option $1" >&2; usage ;;
    esac
done

ROOT=$(cd "$ROOT" && pwd)
R=${ROOT%/}
OPT=$R/opt/croupier
say() { echo "install.sh: $*"; }

command -v systemd-sysusers >/dev/null || { echo "install.sh: needs systemd-sysusers (systemd)" >&2; exit 1; }
"$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11), sys.version' \
    || { echo "install.sh: needs Python 3.11 or newer as $PYTHON (--python PY)" >&2; exit 1; }

# 1. Users and groups, declared once for systemd-sysusers (which also runs at every boot).
install -D -m 0644 "$SRC/deploy/croupier.sysusers" "$R/usr/lib/sysusers.d/croupier.conf"
install -d -m 0755 "$R/etc"  # an empty root (an image being built) has no /etc yet
systemd-sysusers --root="$ROOT" "$R/usr/lib/sysusers.d/croupier.conf"
GID=$(awk -F: '$1 == "croupier" { print $3 }' "$R/etc/group")
[ -n "$GID" ] || { echo "install.sh: group croupier was not created" >&2; exit 1; }

# 2. The code and its virtual environment (the pi extra picks RPi.GPIO or lgpio by Pi model).
mkdir -p "$OPT/src"
tar -C "$SRC" --exclude=./.venv --exclude=./.git --exclude='__pycache__' --exclude='*.egg-info' \
    -cf - . | tar -C "$OPT/src" -xf -
[ -x "$OPT/venv/bin/python" ] || "$PYTHON" -m venv "$OPT/venv"
# shellcheck disable=SC2086  # PIP_ARGS is a list of options
"$OPT/venv/bin/python" -m pip install --quiet $PIP_ARGS "$OPT/src[pi]"
install -d -m 0755 "$R/usr/local/bin"
ln -sfn /opt/croupier/venv/bin/croupier "$R/usr/local/bin/croupier"  # `croupier` on every PATH
say "installed croupier into $OPT/venv"

# 3. Units and udev rules.
install -D -m 0644 "$SRC/systemd/croupier@.service" "$R/etc/systemd/system/croupier@.service"
install -D -m 0644 "$SRC/systemd/croupier-display@.service" "$R/etc/systemd/system/croupier-display@.service"
install -D -m 0644 "$SRC/systemd/croupier-uplink@.service" "$R/etc/systemd/system/croupier-uplink@.service"
RULES=$R/etc/udev/rules.d/70-croupier.rules
if [ -e "$RULES" ] && ! cmp -s "$RULES" "$SRC/deploy/70-croupier.rules"; then
    install -m 0644 "$SRC/deploy/70-croupier.rules" "$RULES.dist"
    say "kept your $RULES; the shipped one is beside it as .dist"
else
    install -D -m 0644 "$SRC/deploy/70-croupier.rules" "$RULES"
fi

# 4. Tables and their keys. Keys: root-owned, the daemon's group may read the server pair and the
# authorised public keys (keys authorized later by `croupier keys authorize` take the folder's group
# and read bit themselves); client secrets (clients/) are root's alone.
install -d -m 0755 "$R/etc/croupier" "$R/etc/croupier/tables"
# A shipped table file names its pin maps, shoe profile and decks relative to itself (../panels/...):
# beside /etc/croupier/tables they are links to this checkout's, so a copy installed here resolves
# them as it does in the checkout (the installed code has no firmware_configs of its own). Kept if there.
for folder in panels shoes decks; do
    [ -e "$R/etc/croupier/$folder" ] || [ -L "$R/etc/croupier/$folder" ] \
        || ln -s "/opt/croupier/src/firmware_configs/$folder" "$R/etc/croupier/$folder"
done
install -d -m 0750 "$R/etc/croupier/keys"
chown "0:$GID" "$R/etc/croupier/keys"
for table in "${TABLES[@]}"; do
    target=$R/etc/croupier/tables/$(basename "$table")
    if [ -e "$target" ]; then say "kept $target"; else install -m 0644 "$table" "$target"; fi
done
CROUPIER=${CROUPIER_INSTALL_TOOL:-$OPT/venv/bin/croupier}
for table in "$R"/etc/croupier/tables/*.yaml; do
    [ -e "$table" ] || continue
    name=$(basename "$table" .yaml)
    keys=$R/etc/croupier/keys/$name
    if [ ! -e "$keys/server.key_secret" ]; then
        "$CROUPIER" keys server --keys "$keys" >/dev/null
        "$CROUPIER" keys new admin --role operator --keys "$keys" >/dev/null
        say "first run of $name: server key and operator key $keys/clients/admin.key_secret"
    fi
    # Only what this script lays down: a file the admin put there (the uplink's nats.password, 0600 owner
    # croupier) keeps its owner, or the re-run after a git pull locked the uplink out of it.
    chown "0:$GID" "$keys" "$keys/authorized" "$keys/server.key_secret" "$keys/server.key"
    find "$keys/authorized" -maxdepth 1 -name '*.key' -exec chown "0:$GID" {} +
    chmod 0750 "$keys" "$keys/authorized"
    chmod 0640 "$keys/server.key_secret" "$keys/server.key"
    find "$keys/authorized" -maxdepth 1 -name '*.key' -exec chmod 0640 {} +
    chown -R 0:0 "$keys/clients"
    chmod 0700 "$keys/clients"
done

if [ "$ROOT" = / ]; then
    systemctl daemon-reload
    udevadm control --reload && udevadm trigger --subsystem-match=tty --subsystem-match=video4linux
    say "now: systemctl enable --now croupier@NAME (and croupier-display@NAME) for each table"
fi
say "done: $ROOT"

"""CurveZMQ keys of a table: the server's pair, the authorised client keys and their roles.

A table's key folder (``security.keys`` in the table file, default
``<state_dir>/keys``) holds::

    server.key, server.key_secret   the daemon's pair (made on first need)
    authorized/NAME.key             public keys allowed to connect, each with its role
    clients/NAME.key_secret         client pairs made here (hand them to the operator)
    clients/server.key              the server's public key, next to them

An operator can also make a pair on their own machine (:func:`request_pair`, ``croupier keys
request``) and hand over only its public file, which the table's admin authorises
(:meth:`KeyFolder.authorize`, ``croupier keys authorize``): no secret travels.

Files are pyzmq's certificate format (``zmq.auth.create_certificates``); the
role is the certificate's ``role`` metadata, so one file says who a key is and
what it may do. Only public keys in ``authorized/`` are ever trusted: copying
a client's secret is what grants access, so every file is written 0600 and every
folder made 0700 from its first byte, atomically (controller.daemon.private).
"""

from __future__ import annotations

import logging
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import zmq
import zmq.auth
from zmq.utils import z85

from controller.daemon import private

log = logging.getLogger("croupier.auth")

Role = Literal["observer", "cashier", "operator"]
ROLES: Final[tuple[Role, ...]] = ("observer", "cashier", "operator")

#: A key's name: its file name and the name journaled with its commands.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_ROLE_LINE = re.compile(rb"^\s+role\s*=\s*\"?([a-z]+)\"?\s*$")

SERVER = "server"
AUTHORIZED = "authorized"
CLIENTS = "clients"


class KeyFileError(ValueError):
    """A key that cannot be used or made; the message names the file and why."""


@dataclass(frozen=True, slots=True)
class KeyInfo:
    """An authorised client key: its name (who), its role (what it may do), its public key (z85)."""

    name: str
    role: Role
    public: bytes


@dataclass(frozen=True, slots=True)
class ClientCredentials:
    """What a client needs for CURVE: its own pair and the server's public key (all z85)."""

    public: bytes
    secret: bytes
    server_public: bytes
    path: Path

    def secure(self, sock: Any) -> Any:
        """Make ``sock`` a CURVE client of the table (before it connects); returns it."""
        sock.setsockopt(zmq.CURVE_SERVERKEY, self.server_public)
        sock.setsockopt(zmq.CURVE_PUBLICKEY, self.public)
        sock.setsockopt(zmq.CURVE_SECRETKEY, self.secret)
        return sock


def check_name(name: str) -> str:
    if not _NAME.match(name) or name == SERVER:
        raise KeyFileError(
            f"key name {name!r}: 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit "
            f"(and not {SERVER!r})"
        )
    return name


def read_role(path: Path) -> Role:
    """The ``role`` metadata of a certificate file; KeyFileError naming the file if missing or unknown."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read: {exc}") from None
    for line in lines:
        m = _ROLE_LINE.match(line)
        if m:
            role = m.group(1).decode()
            for known in ROLES:
                if role == known:
                    return known
            raise KeyFileError(f"{path}: role {role!r} is not one of {', '.join(ROLES)}")
    raise KeyFileError(f"{path}: no role (metadata 'role = operator|observer|cashier'); make keys with "
                    "`croupier keys new`")


def load_pair(path: Path) -> tuple[bytes, bytes | None]:
    """(public, secret or None) of a certificate file; KeyFileError naming the file if unusable.

    Read by ``zmq.auth.load_certificate`` (ZeroMQ's certificate format is pyzmq's to parse), then held
    to what a CURVE key is: it lets an IndexError out of a key line without ``=`` and takes any 40 bytes
    as a key, so a damaged file (NULs, characters outside z85) was trusted as a key until a socket
    refused it far from the file (a fuzz review, tests/test_fuzz_keys_journal.py). The error never
    quotes a key: it may be a secret."""
    if not path.is_file():
        raise KeyFileError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    try:
        public, secret = zmq.auth.load_certificate(path)
    except IndexError:  # pyzmq splits a key line at its '=' and takes the second part
        raise KeyFileError(f"{path}: not a CURVE certificate: a key line without '=' "
                           '(write public-key = "KEY")') from None
    except (OSError, ValueError) as exc:
        raise KeyFileError(f"{path}: not a CURVE certificate: {exc}") from None
    for name, key in (("public-key", public), ("secret-key", secret)):
        if key is not None and not _is_z85_key(key):
            raise KeyFileError(f"{path}: the {name} is not a CURVE key: a CURVE key is 40 z85 characters "
                               "(ZeroMQ's RFC 32) that decode to 32 bytes")
    if secret is not None and zmq.curve_public(secret) != public:
        # A pair mixed from two files (a hand edit): the peer would know this key by a public key whose
        # secret nobody holds, and the handshake fail far from the file (a review, 2026-12-07).
        raise KeyFileError(f"{path}: the secret-key is not the public-key's: a pair mixed from two keys")
    return public, secret


def _is_z85_key(key: bytes) -> bool:
    """Whether ``key`` is a CURVE key in z85: 40 characters of its alphabet, each five a 32-bit number
    (pyzmq's decoder raises KeyError for a character outside it, struct.error past 32 bits)."""
    if len(key) != 40:
        return False
    try:
        return len(z85.decode(key)) == 32
    except (KeyError, ValueError, struct.error):
        return False


def replaced_advice(folder: KeyFolder) -> str:
    """What to do once the server's pair was replaced, for the loud message that says so."""
    return (f"A new pair is in {folder.root}: every client needs the new public key "
            f"{folder.server_public_file} (give it to each client as its server.key; the copy in clients/ "
            "is updated), and the daemon must be restarted to use it.")


#: What :meth:`KeyFolder.ensure_server` found: a pair made, kept, or replaced (a replacement completed).
ServerKey = Literal["made", "kept", "replaced"]


def _copy_atomic(source: Path, target: Path) -> None:
    private.write_atomic(target, source.read_text(encoding="utf-8"))


def _cert(public: bytes, secret: bytes | None, metadata: dict[str, str]) -> str:
    """A certificate in ZeroMQ's format (as pyzmq writes it), with its metadata; a secret one if
    ``secret`` is given (written by :func:`private.write_atomic`: 0600, whole or absent)."""
    kind = "Secret" if secret is not None else "Public"
    lines = [f"#   ZeroMQ CURVE {kind} Certificate (croupier keys)", "", "metadata"]
    lines += [f"    {k} = {v}" for k, v in metadata.items()]
    lines += ["curve", f'    public-key = "{public.decode()}"']
    if secret is not None:
        lines.append(f'    secret-key = "{secret.decode()}"')
    return "\n".join([*lines, ""])


class KeyFolder:
    """One table's key folder (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def server_public_file(self) -> Path:
        return self.root / f"{SERVER}.key"

    @property
    def server_secret_file(self) -> Path:
        return self.root / f"{SERVER}.key_secret"

    @property
    def authorized(self) -> Path:
        return self.root / AUTHORIZED

    @property
    def clients(self) -> Path:
        return self.root / CLIENTS

    def ensure_server(self) -> ServerKey:
        """Make the server's pair if there is no secret (``made``); put back a missing or stale public
        file, and a stale copy in ``clients/``, from the secret. A stale one is a replacement cut short
        (:meth:`replace_server_pair` killed between its writes): ``replaced``, for the caller to say
        loudly (every client needs the new key); a missing public file, a first start cut short.

        An unusable secret (empty, corrupt) raises KeyFileError: replacing it locks out every
        client, so only a person does that (:meth:`replace_server_pair`, ``croupier keys server``).
        """
        private.make_dir(self.root)
        private.make_dir(self.authorized)
        if not self.server_secret_file.exists():
            self.replace_server_pair()
            return "made"
        public, _ = self.server_pair()
        outcome: ServerKey = "kept"
        copy = self.clients / f"{SERVER}.key"
        for target in [self.server_public_file] + ([copy] if copy.exists() else []):
            try:
                current: bytes | None = load_pair(target)[0]
            except KeyFileError:
                current = None
            if current == public:
                continue
            private.write_atomic(target, _cert(public, None, {}))
            if current is not None or target == copy:  # a copy exists only once a pair was handed out
                outcome = "replaced"
        return outcome

    def server_secret_problem(self) -> str | None:
        """What makes the server's secret file unusable (None: usable, or there is none yet)."""
        if not self.server_secret_file.exists():
            return None
        try:
            self.server_pair()
        except KeyFileError as exc:
            return str(exc)
        return None

    def replace_server_pair(self) -> None:
        """A new server pair: the secret first, then the public file and its copy beside the clients
        made here. Each write is atomic (a crash leaves the old file or the new one)."""
        private.make_dir(self.root)
        public, secret = zmq.curve_keypair()
        private.write_atomic(self.server_secret_file, _cert(public, secret, {}))
        private.write_atomic(self.server_public_file, _cert(public, None, {}))
        copy = self.clients / f"{SERVER}.key"
        if copy.exists():
            _copy_atomic(self.server_public_file, copy)

    def server_pair(self) -> tuple[bytes, bytes]:
        """The server's (public, secret); KeyFileError when the folder has no usable server key."""
        if not self.server_secret_file.exists():
            raise KeyFileError(f"{self.server_secret_file}: no server key (run `croupier keys server`)")
        try:
            public, secret = load_pair(self.server_secret_file)
        except KeyFileError as exc:
            raise KeyFileError(f"{exc} (`croupier keys server` makes a new pair; every client then "
                               "needs the new server.key)") from None
        if secret is None:
            raise KeyFileError(f"{self.server_secret_file}: has no secret-key (`croupier keys server` "
                               "makes a new pair; every client then needs the new server.key)")
        return public, secret

    def new_client(self, name: str, role: Role, out: Path | None = None) -> Path:
        """Make a client pair with ``role``, authorise its public key; return the secret file.

        The secret goes to ``out`` (default ``clients/``) with a copy of the
        server's public key beside it, so that folder is everything a client needs.
        """
        target = self._admissible(name, role)
        if target.exists():
            raise KeyFileError(f"{target}: a key named {name!r} is already authorised (remove it first)")
        out = out or self.clients
        private.make_dir(out)
        public, secret = zmq.curve_keypair()
        secret_file = out / f"{name}.key_secret"
        private.write_atomic(secret_file, _cert(public, secret, {"role": role}))
        private.write_atomic(out / f"{name}.key", _cert(public, None, {"role": role}))
        _copy_atomic(self.server_public_file, out / f"{SERVER}.key")
        self.authorize(name, role, public)  # last: authorised once complete
        return secret_file

    def authorize(self, name: str, role: Role, public: bytes) -> bool:
        """Admit the client key ``public`` as ``name`` with ``role`` (``croupier keys authorize``, and
        :meth:`new_client`'s last step); False when exactly that is already authorised (a resend).

        A name is one key and a key one name: another key or role under a taken name, or this key
        under another name, is refused naming the file (the daemon would otherwise trust one of
        the two silently). The file takes the folder's group and group read bit, so an installed
        table's daemon (another user than root, who runs this) can read it (deploy/install.sh).
        """
        target = self._admissible(name, role)
        if target.exists():
            if load_pair(target)[0] == public and read_role(target) == role:
                return False
            raise KeyFileError(f"{target}: a key named {name!r} is already authorised, another key or "
                               f"role (`croupier keys list`; remove that file first to replace it)")
        known = self.load_authorized().get(public)
        if known is not None:
            raise KeyFileError(f"{self.authorized / (known.name + '.key')}: this public key is already "
                               f"authorised as {known.name!r} ({known.role}); one key, one name")
        folder = self.authorized.stat()
        shared = folder.st_mode & 0o040 != 0
        mode, group = (0o640, folder.st_gid) if shared else (private.FILE_MODE, -1)
        private.write_atomic(target, _cert(public, None, {"role": role}), mode=mode, group=group)
        return True

    def _admissible(self, name: str, role: Role) -> Path:
        """The file a key named ``name`` is authorised in, once the name and role are checked and the
        folder has its server pair."""
        check_name(name)
        if role not in ROLES:
            raise KeyFileError(f"role {role!r} is not one of {', '.join(ROLES)}")
        self.ensure_server()
        return self.authorized / f"{name}.key"

    def load_authorized(self, unusable: list[str] | None = None) -> dict[bytes, KeyInfo]:
        """Every authorised key by its z85 public key; KeyFileError names the first bad file, unless
        ``unusable`` is given: then each bad file is named there and left out, the rest loaded."""
        keys: dict[bytes, KeyInfo] = {}
        if not self.authorized.is_dir():
            return keys
        for path in sorted(self.authorized.glob("*.key")):
            try:
                public, _ = load_pair(path)
                info = KeyInfo(check_name(path.stem), read_role(path), public)
            except KeyFileError as exc:
                if unusable is None:
                    raise
                unusable.append(str(exc))
                continue
            keys[public] = info
        return keys


def client_credentials(key_file: Path, server_key: Path | None = None) -> ClientCredentials:
    """A client's pair from ``key_file`` (a ``.key_secret``) and the server's public key.

    The server key is ``server_key`` if given, else ``server.key`` beside the client's file.
    """
    public, secret = load_pair(key_file)
    if secret is None:
        raise KeyFileError(f"{key_file}: has no secret-key (use the .key_secret file)")
    server_file = server_key or key_file.parent / f"{SERVER}.key"
    if not server_file.exists():
        raise KeyFileError(f"{server_file}: no server public key (give --server-key or put server.key beside "
                        f"{key_file.name})")
    server_public, _ = load_pair(server_file)
    return ClientCredentials(public, secret, server_public, key_file)


def request_pair(out: Path, name: str) -> tuple[Path, bytes, bool]:
    """An operator's own pair in ``out`` (``NAME.key_secret``, 0600, and ``NAME.key`` to hand over):
    (the public file, the public key, whether it was made now). A pair already there is kept and
    its public file written again, so asking twice gives the same key (a new one would strand the
    first if it was authorised meanwhile)."""
    check_name(name)
    private.make_dir(out)
    secret_file, public_file = out / f"{name}.key_secret", out / f"{name}.key"
    made = not secret_file.exists()
    if made:
        public, secret = zmq.curve_keypair()
        private.write_atomic(secret_file, _cert(public, secret, {}))
    else:
        public, kept = load_pair(secret_file)
        if kept is None:
            raise KeyFileError(f"{secret_file}: has no secret-key (move it away to make a new pair)")
    private.write_atomic(public_file, _cert(public, None, {}))
    return public_file, public, made


def local_client(folder: KeyFolder, name: str, role: Role) -> ClientCredentials:
    """A client key of this machine's table, made on first use (the demo, tests, tools on the Pi).

    Reuses ``clients/NAME.key_secret`` when it is there and still authorised
    with ``role``; otherwise makes and authorises it.
    """
    secret = folder.clients / f"{check_name(name)}.key_secret"
    authorised = folder.authorized / f"{name}.key"
    if not (secret.exists() and authorised.exists() and read_role(authorised) == role):
        if authorised.exists():
            authorised.unlink()
        secret = folder.new_client(name, role)
    return client_credentials(secret, folder.server_public_file)

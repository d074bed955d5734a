"""Who may talk to a table: CurveZMQ on its sockets (the "ironhouse" pattern) and the roles.

Every client proves a key in the table's ``authorized/`` folder during the
CURVE handshake; pyzmq's ZAP authenticator (a thread of its own, so a flood
of handshakes never runs on the table's loop) asks :class:`KeyRegistry`.
A client with no key or an unknown key never completes the handshake: it
gets nothing, and the daemon's loop never sees a byte from it.

After the handshake each message carries the client's public key as its
``User-Id``; the daemon maps it to the key's name (journaled with every
command it applies) and role (what it may ask, :func:`permitted`).
"""

from __future__ import annotations

import ipaddress
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlsplit

import zmq
from zmq.auth.thread import ThreadAuthenticator

from controller.daemon.commands import INPUT_COMMANDS, QUERIES
from controller.daemon.key_registry import KeyRegistry
from controller.daemon.keys import KeyFolder, KeyInfo, Role, replaced_advice

log = logging.getLogger("croupier.auth")

#: What only reads the table. Listed by name, not "every query": a new command (``shoe reset`` is one)
#: is the operator's until someone decides otherwise.
READ_ONLY: Final = frozenset({"status", "meters", "recall", "snapshot", "ping"})

#: What each role may send: observers read; cashiers also move credits; operators run the table.
ROLE_COMMANDS: Final[dict[Role, frozenset[str]]] = {
    "observer": READ_ONLY,
    "cashier": READ_ONLY | {"credit_in", "credit_out"},
    "operator": frozenset(QUERIES) | frozenset(INPUT_COMMANDS),
}

#: The ZAP domain of a table's sockets.
DOMAIN = "croupier"


def permitted(role: Role, cmd: str) -> bool:
    return cmd in ROLE_COMMANDS[role]


def is_loopback(endpoint: str) -> bool:
    """True when ``endpoint`` can only be reached from this machine (ipc, inproc, tcp on loopback)."""
    if endpoint.startswith(("ipc://", "inproc://")):
        return True
    host = urlsplit(endpoint).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # '*', an interface name or a host name: reachable from elsewhere


class RateLimitedLog:
    """Warnings about refusals, at most ``burst`` per subject per ``window`` seconds.

    A flood of forbidden requests must not turn into a flood of log lines (journald would drop
    them, a plain log file would fill the disk): past the burst, refusals are counted and the
    count is logged once the window ends, so every refusal is still accounted for.
    """

    def __init__(self, logger: logging.Logger, burst: int = 10, window: float = 60.0,
                 *, clock: Callable[[], float] = time.monotonic) -> None:
        self.log = logger
        self.burst = burst
        self.window = window
        self._clock = clock
        self._seen: dict[str, tuple[float, int, int]] = {}  # subject -> (window start, logged, held back)
        self._lock = threading.Lock()

    def warning(self, subject: str, msg: str, *args: Any) -> None:
        now = self._clock()
        with self._lock:
            start, logged, held = self._seen.get(subject, (now, 0, 0))
            if now - start >= self.window:
                if held:
                    self.log.warning("%d more refusal(s) of %s in the last %.0f s were not logged one by one",
                                     held, subject, now - start)
                start, logged, held = now, 0, 0
            if logged < self.burst:
                self.log.warning(msg, *args)
                logged += 1
            else:
                held += 1
            self._seen[subject] = (start, logged, held)


class _Provider:
    """The ZAP callback: a client key is allowed when it is authorised (re-reading the folder)."""

    def __init__(self, registry: KeyRegistry, refusals: RateLimitedLog) -> None:
        self.registry = registry
        self.refusals = refusals

    def callback(self, domain: str, key: bytes) -> bool:
        info = self.registry.lookup(key)
        if info is None:
            self.refusals.warning("unknown keys", "refused a CURVE client with an unknown key %s",
                             key.decode(errors="replace"))
        return info is not None


class CurveGuard:
    """The table's server key and ZAP authenticator; :meth:`secure` makes a socket a CURVE server."""

    def __init__(self, folder: KeyFolder, ctx: zmq.Context[Any]) -> None:
        self.folder = folder
        outcome = folder.ensure_server()
        if outcome == "made":
            log.info("made the table's server key pair in %s", folder.root)
        elif outcome == "replaced":
            log.warning("THE SERVER KEY WAS REPLACED: its replacement was cut short and is now complete. %s",
                        replaced_advice(folder))
        self.public, self.secret = folder.server_pair()
        self.registry = KeyRegistry(folder)
        #: Refusals of unknown keys (ZAP thread) and of commands outside a role (loop thread).
        self.refusals = RateLimitedLog(log)
        self._auth = ThreadAuthenticator(ctx, log=logging.getLogger("croupier.auth.zap"))

    def start(self) -> None:
        self._auth.start()
        provider = _Provider(self.registry, self.refusals)
        self._auth.configure_curve_callback(DOMAIN, credentials_provider=provider)
        if not len(self.registry):
            log.warning("no authorised keys in %s: nobody can command this table (make one: "
                        "croupier keys new NAME --role operator --table FILE)", self.folder.authorized)

    def stop(self) -> None:
        self._auth.stop()

    def secure(self, sock: Any) -> Any:
        """Make ``sock`` a CURVE server of this table (before it binds); returns it."""
        sock.setsockopt(zmq.CURVE_SERVER, 1)
        sock.setsockopt(zmq.CURVE_SECRETKEY, self.secret)
        sock.setsockopt(zmq.CURVE_PUBLICKEY, self.public)
        sock.setsockopt(zmq.ZAP_DOMAIN, DOMAIN.encode())
        return sock

    def caller(self, frame: zmq.Frame) -> KeyInfo | None:
        """The authorised key a received message came from (None: revoked since its handshake)."""
        try:
            user = frame.get("User-Id")
        except zmq.ZMQError:
            return None
        if not isinstance(user, str):
            return None
        return self.registry.lookup(user.encode())


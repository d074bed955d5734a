"""The simulated shoe's end of the line: a pty master, or a TCP listener on loopback.

Like pyserial's own tests, the simulator sits on the far side of a real pty,
so the reader under test goes through a real serial line discipline. These
links are driven by the simulator's single loop thread and never block it:
a write with nobody listening, or a full buffer, loses the bytes, exactly as
a UART does when nothing is plugged in.

An unplug is ``close()``; a replug is ``open()`` again. A pty gets a new
``/dev/pts/N`` each time, so a stable symlink (like socat's ``link=``) can be
kept pointing at the current one: that is what a profile's ``port`` names.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import os
import socket
import tty
from pathlib import Path


class LinkError(OSError):
    """The link cannot be set up (a path that is not ours, a port in use, a non-loopback host)."""


class PtyLink:
    """A pty; readers open ``url`` (the symlink if one was asked for, else the slave's path)."""

    def __init__(self, link: Path | str | None = None) -> None:
        self.link = Path(link) if link is not None else None
        self.path = ""
        self._master = -1
        self._slave = -1
        self._claim = -1

    def _take(self, link: Path) -> None:
        """Claim ``link`` for this simulator's lifetime (an flock on ``.NAME.lock`` beside it).

        Why: a second simulator pointing the same link at its own pty would
        silently take the reader away from the first one. The kernel drops an
        flock when its process dies (kill -9 too), so a dead simulator never
        blocks the next one. Kept across unplug/replug; let go by :meth:`release`.
        """
        lock = link.with_name(f".{link.name}.lock")
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise LinkError(
                f"{link} is held by another live simulator (pid {holder}): stop it, "
                "or give this one another path (--port)"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._claim = fd

    def release(self) -> None:
        """Let the link go (after :meth:`close`): another simulator may take it."""
        if self._claim >= 0:
            os.close(self._claim)
            self._claim = -1

    @property
    def url(self) -> str:
        return str(self.link) if self.link is not None else self.path

    @property
    def is_open(self) -> bool:
        return self._master >= 0

    def open(self) -> str:
        if self.link is not None and self.link.exists() and not self.link.is_symlink():
            raise LinkError(f"{self.link} exists and is not a symlink: refusing to replace it")
        if self.link is not None and self._claim < 0:
            self._take(self.link)
        master, slave = os.openpty()
        # Raw before any reader opens it: no echo of our frames back to us, no CR/LF rewriting.
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self.path = os.ttyname(slave)
        if self.link is not None:
            tmp = self.link.with_name(f".{self.link.name}.{os.getpid()}.tmp")
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            os.symlink(self.path, tmp)
            os.replace(tmp, self.link)  # atomic: a reader never sees the link missing
        return self.url

    def filenos(self) -> list[int]:
        return [self._master] if self._master >= 0 else []

    def read(self, fd: int) -> bytes:
        try:
            return os.read(self._master, 4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError:  # EIO: no reader has the slave open (we keep one, but be safe)
            return b""

    def write(self, data: bytes) -> None:
        if self._master < 0:
            return
        with contextlib.suppress(BlockingIOError, InterruptedError):
            while data:
                written = os.write(self._master, data)
                data = data[written:]

    def close(self) -> None:
        # We hold the slave open too; closing both is what the reader sees as an unplug (EIO/HUP).
        for fd in (self._master, self._slave):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = -1
        if self.link is not None and self.link.is_symlink():
            with contextlib.suppress(OSError):
                if os.readlink(self.link) == self.path:
                    self.link.unlink()


class SocketLink:
    """A TCP listener on loopback; readers open ``socket://HOST:PORT``. One client at a time.

    A new connection replaces the old one: a reader that reconnected after a
    heartbeat timeout must not be locked out by its own half-dead socket.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        try:
            addr = ipaddress.ip_address(socket.gethostbyname(host))
        except (OSError, ValueError) as exc:
            raise LinkError(f"cannot resolve {host!r}: {exc}") from None
        if not addr.is_loopback:
            raise LinkError(f"the simulator listens on loopback only, not {host!r} ({addr})")
        self.host = host
        self.port = port
        self._listener: socket.socket | None = None
        self._client: socket.socket | None = None

    @property
    def url(self) -> str:
        return f"socket://{self.host}:{self.port}"

    @property
    def is_open(self) -> bool:
        return self._listener is not None

    def open(self) -> str:
        try:
            self._listener = socket.create_server((self.host, self.port))
        except OSError as exc:
            raise LinkError(f"cannot listen on {self.host}:{self.port}: {exc}") from None
        self._listener.setblocking(False)
        self.port = self._listener.getsockname()[1]  # keep the same port across a replug
        return self.url

    @property
    def has_client(self) -> bool:
        return self._client is not None

    def filenos(self) -> list[int]:
        return [s.fileno() for s in (self._listener, self._client) if s is not None]

    def read(self, fd: int) -> bytes:
        if self._listener is not None and fd == self._listener.fileno():
            with contextlib.suppress(BlockingIOError):
                client, _ = self._listener.accept()
                self._drop_client()
                client.setblocking(False)
                client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._client = client
            return b""
        if self._client is None:
            return b""
        try:
            data = self._client.recv(4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError:
            data = b""
        if not data:
            self._drop_client()
        return data

    def write(self, data: bytes) -> None:
        if self._client is None:
            return
        try:
            self._client.sendall(data)
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self._drop_client()

    def _drop_client(self) -> None:
        if self._client is not None:
            with contextlib.suppress(OSError):
                self._client.close()
            self._client = None

    def release(self) -> None:
        """Nothing to let go: the listening port itself is the claim."""

    def close(self) -> None:
        self._drop_client()
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.close()
            self._listener = None


Link = PtyLink | SocketLink

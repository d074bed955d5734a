"""Throwaway nats-server and PostgreSQL processes in a private folder on free loopback ports.

The floor's tests (and a one-machine trial) start their own servers rather than use whatever the
machine happens to run: each in a folder of its own, on a port picked free on 127.0.0.1, stopped
(and killed if it will not stop) by its owner. Each server is our direct child and exits with us,
even when we are SIGKILLed (a test run cut short leaves no server behind): the kernel signals it
when the thread that started it ends (``die_with_parent``), so PostgreSQL runs in the foreground
(``postgres``, not ``pg_ctl start``, which would hand it to init). PostgreSQL refuses to run as root,
so when we are root it runs as the ``postgres`` system user the Debian package creates (``initdb``
through ``runuser -u postgres --``) in a folder owned by that user. Every wait here is bounded.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from controller.daemon.private import open_log, write_atomic
from controller.orphans import die_with_parent

NATS_SERVER: Final = "nats-server"
PG_BIN: Final = Path("/usr/lib/postgresql/15/bin")
#: What to install when a server is missing (Debian package names).
PACKAGES: Final = "nats-server postgresql"


class ServerMissing(RuntimeError):
    """A server binary this needs is not installed: the message names the Debian packages."""


def _ephemeral_start() -> int:
    """Where the kernel's ephemeral ports begin (Linux: 32768 unless configured otherwise)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port_base(count: int = 1) -> int:
    """The first of ``count`` consecutive ports free on 127.0.0.1 now, below the kernel's ephemeral range.
    The server given one binds it later (a child process that starts, a killed server started again on
    its port), and until then any outgoing connection on the machine may be given a free ephemeral port
    as its own: one the OS picked for us here (bind to port 0) was one of those. Below the range,
    connections never get it."""
    rng = random.Random()
    top = max(_ephemeral_start(), 11000)  # a machine whose ephemeral ports start low: a thousand still
    for _ in range(200):
        base = rng.randrange(10000, top - count)
        socks: list[socket.socket] = []
        try:
            for port in range(base, base + count):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {count} free consecutive ports on 127.0.0.1 below the ephemeral range")


def free_port() -> int:
    """One port free on 127.0.0.1 now, below the kernel's ephemeral range (:func:`free_port_base`)."""
    return free_port_base(1)


def wait_port(port: int, timeout: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Until something accepts on 127.0.0.1:``port``; TimeoutError after ``timeout`` s or if ``proc`` ends."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise TimeoutError(f"the server exited with {proc.returncode} before it listened on {port}")
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout} s")


def _exit_with_us(sig: signal.Signals) -> Callable[[], None]:
    """A ``preexec_fn``: the child gets ``sig`` (its clean stop) when the thread that started it ends."""

    def arm() -> None:
        die_with_parent(sig)

    return arm


def _private_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))  # 0700 from its first byte


#: Ports tried at a server's first start when another program took the one picked (:meth:`NatsServer.start`).
_PORT_TRIES: Final = 3


class _PortTaken(Exception):
    """The server could not bind its port: another program took it after it was picked."""


class NatsServer:
    """One ``nats-server -js`` with file storage in ``folder``; :meth:`kill` (SIGKILL) and :meth:`start`
    again keep its folder and port, as a crashed and restarted server would."""

    def __init__(self, folder: Path | None = None, config: str = "") -> None:
        if shutil.which(NATS_SERVER) is None:
            raise ServerMissing(f"{NATS_SERVER} is not installed (Debian packages: {PACKAGES})")
        self.folder = folder or _private_dir("croupier-nats-")
        self.port = free_port()
        self.config = config
        self.proc: subprocess.Popen[bytes] | None = None
        self._started = False  # once started, its port is its clients' and stays

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout: float = 20.0) -> NatsServer:
        """Start it and wait until it is ready: its own log says so, not merely something accepting on its
        port. The port was only free when picked; another program (another test's server, a daemon's
        socket) may bind it before this server does, which then exits ("address already in use") while
        a bare port check connects to that other program, and every client of this floor would talk to
        it, or to nothing once it is gone. At a first start a port taken so is given up for another free
        one (so :attr:`url` is final only once this returns); a restart keeps its port or fails."""
        for attempt in range(_PORT_TRIES):
            try:
                return self._start_once(timeout)
            except _PortTaken as exc:
                if self._started or attempt == _PORT_TRIES - 1:
                    raise TimeoutError(str(exc)) from None
                self.port = free_port()
        raise AssertionError("unreachable")

    def _start_once(self, timeout: float) -> NatsServer:
        conf = self.folder / "nats.conf"
        write_atomic(
            conf, f'listen: "127.0.0.1:{self.port}"\n'
            f'jetstream {{ store_dir: "{self.folder / "js"}" }}\n' + self.config)
        path = self.folder / "nats.log"
        log = open_log(path)  # the child holds it
        begun = log.tell()  # this start's lines: the log keeps the earlier starts' too
        try:
            self.proc = subprocess.Popen([NATS_SERVER, "-c", str(conf)], stdout=log, stderr=log,
                                         preexec_fn=_exit_with_us(signal.SIGTERM))
        finally:
            log.close()
        proc, deadline = self.proc, time.monotonic() + timeout
        while True:
            exited = proc.poll() is not None  # then its last words are in the log read below
            with open(path, "rb") as f:
                f.seek(begun)
                said = f.read().decode(errors="replace")
            if exited:
                self.proc = None
                if f"listen tcp 127.0.0.1:{self.port}: bind: address already in use" in said:
                    raise _PortTaken(f"nats-server: 127.0.0.1:{self.port} was taken by another program")
                last = (said.strip().splitlines() or [""])[-1]
                raise TimeoutError(f"nats-server exited with {proc.returncode} before it was ready: {last}")
            if "Server is ready" in said:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"nats-server not ready after {timeout} s: see {path}")
            time.sleep(0.05)
        wait_port(self.port, max(deadline - time.monotonic(), 1.0), proc)
        self._started = True
        return self

    def kill(self) -> None:
        """SIGKILL: no clean shutdown, as a power cut of the floor server's process."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.proc = None

    def remove(self) -> None:
        """Stop it and delete its folder."""
        try:
            self.stop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def log(self) -> str:
        path = self.folder / "nats.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def nats_cluster(size: int = 3) -> list[NatsServer]:
    """``size`` servers (not started) routed into one JetStream cluster ``croupier`` on loopback: each
    its own name, folder and store, all routes listed in each (the engine's own clustering)."""
    routes = [free_port() for _ in range(size)]
    listed = ", ".join(f'"nats-route://127.0.0.1:{p}"' for p in routes)
    return [NatsServer(config=f'server_name: "n{n + 1}"\ncluster {{ name: "croupier", '
                              f'listen: "127.0.0.1:{route}", routes: [{listed}] }}\n')
            for n, route in enumerate(routes)]


class Postgres:
    """One PostgreSQL 15 cluster made by ``initdb`` in a private folder, trust auth on loopback only."""

    def __init__(self) -> None:
        if not (PG_BIN / "initdb").exists():
            raise ServerMissing(f"{PG_BIN / 'initdb'} is not installed (Debian packages: {PACKAGES})")
        self.as_postgres = os.geteuid() == 0
        self.folder = _private_dir("croupier-pg-")
        if self.as_postgres:
            shutil.chown(self.folder, "postgres", "postgres")
        self.data = self.folder / "data"
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self._started = False  # once started, its port is its clients' and stays
        self._make_data()

    def _make_data(self) -> None:
        """A new cluster in ``self.data``: its superuser ``croupier``, trusted on loopback (the
        default pg_hba.conf also trusts replication connections from there)."""
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "croupier", "--no-sync",
                  "-E", "UTF8", "--locale", "C", timeout=120)

    @property
    def dsn(self) -> str:
        return f"postgresql://croupier@127.0.0.1:{self.port}/postgres"

    def _run(self, tool: str, *args: str, timeout: float) -> None:
        command = [str(PG_BIN / tool), *args]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr.decode(errors='replace')}")

    def start(self, timeout: float = 60.0) -> Postgres:
        """``postgres`` in the foreground as our child (as the ``postgres`` user when we are root), until
        it says it is ready; a fast shutdown (SIGINT) when the thread that started it ends. At a first
        start a port another program took since it was picked is given up for another free one (see
        :meth:`NatsServer.start`); a restart keeps its port or fails."""
        for attempt in range(_PORT_TRIES):
            begun = (self.folder / "pg.log").stat().st_size if (self.folder / "pg.log").exists() else 0
            try:
                return self._start_once(timeout)
            except TimeoutError:
                with open(self.folder / "pg.log", "rb") as f:
                    f.seek(begun)
                    said = f.read().decode(errors="replace")
                if self._started or attempt == _PORT_TRIES - 1 or "Address already in use" not in said:
                    raise
                self.port = free_port()
        raise AssertionError("unreachable")

    def _start_once(self, timeout: float) -> Postgres:
        command = [str(PG_BIN / "postgres"), "-D", str(self.data), "-p", str(self.port),
                   "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.folder}"]
        user = "postgres" if self.as_postgres else None
        log = open_log(self.folder / "pg.log")  # the child holds it
        try:  # the user is changed before preexec_fn runs: the death signal survives it
            self.proc = subprocess.Popen(command, stdout=log, stderr=log, user=user, group=user,
                                         extra_groups=[] if user else None,
                                         preexec_fn=_exit_with_us(signal.SIGINT))
        finally:
            log.close()
        self._wait_ready(self.proc, timeout)
        self._started = True
        return self

    def _wait_ready(self, proc: subprocess.Popen[bytes], timeout: float) -> None:
        """Until the postmaster's lock file says it is ready (as ``pg_ctl -w`` waits); TimeoutError if it
        ends first or takes longer than ``timeout`` s."""
        pid_file = self.data / "postmaster.pid"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise TimeoutError(f"postgres exited with {proc.returncode}: see {self.folder / 'pg.log'}")
            try:
                lines = pid_file.read_text(encoding="utf-8").splitlines()
            except OSError:
                lines = []
            if len(lines) >= 8 and lines[0] == str(proc.pid) and lines[7].strip() == "ready":
                return
            time.sleep(0.05)
        raise TimeoutError(f"postgres not ready after {timeout} s: see {self.folder / 'pg.log'}")

    #: ``pg_ctl stop -m MODE``'s signals: smart waits for the sessions, fast ends them, immediate is a crash.
    STOP_SIGNALS: Final = {"smart": signal.SIGTERM, "fast": signal.SIGINT, "immediate": signal.SIGQUIT}

    def stop(self, mode: str = "fast") -> None:
        """Stop it as ``pg_ctl stop -m MODE`` does; ``immediate`` is a crash (recovery from the WAL at the
        next start). SIGKILL if it has not ended within 60 s."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(self.STOP_SIGNALS[mode])
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)

    def remove(self) -> None:
        """Stop it at once (whatever state it is in) and delete its folder."""
        try:
            self.stop("immediate")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


class Replica(Postgres):
    """A hot-standby replica of ``primary``, streaming its WAL: made by ``pg_basebackup -R`` (which
    writes ``standby.signal`` and ``primary_conninfo``), read-only, its rows those of the primary's."""

    def __init__(self, primary: Postgres) -> None:
        self.primary = primary
        super().__init__()

    def _make_data(self) -> None:
        self._run("pg_basebackup", "-h", "127.0.0.1", "-p", str(self.primary.port), "-U", "croupier",
                  "-D", str(self.data), "-R", "-X", "stream", "-c", "fast", "--no-sync", timeout=120)

"""``croupier scenario FILE --through-daemon``: a scenario played through the whole shell.

The daemon runs in-process on its own loop and thread, with its real
journal (a temporary state dir), its real ZeroMQ sockets (ipc:// endpoints
in the temporary dir) and the real :class:`drivers.shoe.ShoeReader` reading
a :class:`drivers.shoe.sim.SimulatedShoe` over a real pty. Cards go through
the simulated shoe; ``~XX`` burns are the dealer's ``burn`` command then the
card; bets, decisions and the rest go through the command socket; events are
read back from a SUB socket (snapshot first). A mirror table, fed the same
inputs, chooses each next input (:func:`controller.scenario.round_inputs`)
and says what the daemon must publish, so every event is checked, and the
printed lines (``table`` and ``seq`` removed) are byte-identical to the
engine-only run.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from controller import inputs as I
from controller.daemon.client import CommandClient, Subscriber
from controller.daemon.config import LimitsSpec, TableConfig, TableFile, ZmqSpec
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from controller.scenario import Scenario, ScenarioError, round_inputs
from drivers.shoe import ShoeProfile
from drivers.shoe.sim import SimulatedShoe

#: Seconds to wait for the events of one input before calling the run failed.
EVENT_TIMEOUT = 15.0


def command_for(inp: I.Input) -> dict[str, Any]:
    """The operator command that carries ``inp`` (cards excepted: the shoe deals those)."""
    match inp:
        case I.OpenBetting():
            return {"cmd": "open"}
        case I.CloseBetting():
            return {"cmd": "close"}
        case I.NewShoe():
            return {"cmd": "new_shoe"}
        case I.DeclareBurn():
            return {"cmd": "burn", "by": "dealer"}
        case I.PlaceWager(seat=seat, spot=spot, amount=amount):
            return {"cmd": "bet", "seat": seat, "spot": spot, "amount": amount, "by": "dealer"}
        case I.CancelWager(seat=seat, spot=spot):
            return {"cmd": "cancel", "seat": seat, "spot": spot, "by": "dealer"}
        case I.Decision(seat=seat, action=action, amount=amount):
            return {"cmd": "decide", "seat": seat, "action": action, "amount": amount}
        case I.CreditIn(seat=seat, amount=amount):
            return {"cmd": "credit_in", "seat": seat, "amount": amount}
        case I.SetDesignatedPlayer(seat=seat):
            return {"cmd": "set_dp", "seat": seat}
    return {"cmd": "input", "input": inp.to_dict()}


def scenario_config(scenario: Scenario, source: str, work: Path, profile: ShoeProfile) -> TableConfig:
    """A table config equal to the scenario's table, with endpoints and state in ``work``."""
    limits = scenario.limits
    spec = TableFile(
        table="scenario",
        game=scenario.spec.game,
        options=dict(scenario.spec.options),
        seats=limits.seats,
        limits=LimitsSpec(unit=limits.unit, min_bet=limits.min_bet, max_bet=limits.max_bet),
        zeromq=ZmqSpec(
            pub=f"ipc://{work}/pub", snapshot=f"ipc://{work}/snapshot", command=f"ipc://{work}/command"
        ),
        state_dir=str(work / "state"),
    )
    return TableConfig(Path(source), spec, scenario.game.options, limits, profile, None, work / "state")


class ThroughDaemon:
    """The harness: a daemon on a thread, a simulated shoe on a pty, a command client, a subscriber."""

    def __init__(self, scenario: Scenario, source: str, work: Path) -> None:
        self.scenario = scenario
        self.shoe = SimulatedShoe("v1", seed=0)
        port = self.shoe.open_pty(work / "shoe")
        profile = ShoeProfile.model_validate(
            {
                "port": port,
                "protocol": "v1",
                "baud": 115200,
                "heartbeat_timeout": 3.0,
                "reconnect": {"initial": 0.05, "max": 0.5},
            }
        )
        self.config = scenario_config(scenario, source, work, profile)
        self.daemon = Daemon(self.config)
        self.thread = DaemonThread(self.daemon)
        spec = self.config.spec.zeromq
        self.client = CommandClient(spec.command, timeout=EVENT_TIMEOUT)
        self.sub: Subscriber | None = None
        self._events: Iterator[tuple[str, dict[str, Any]]] | None = None

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + EVENT_TIMEOUT
        while not (self.client.call("status").get("shoe_device") or {}).get("connected"):
            if time.monotonic() > deadline:
                raise ScenarioError(0, "the daemon's shoe reader did not connect to the simulated shoe")
            time.sleep(0.02)
        spec = self.config.spec.zeromq
        self.sub = Subscriber(spec.pub, spec.snapshot, self.config.table_id)
        self._events = self.sub.events(timeout=EVENT_TIMEOUT)
        kind, _ = next(self._events)
        assert kind == "snapshot"

    def close(self) -> None:
        self.client.close()
        if self.sub is not None:
            self.sub.close()
        try:
            self.thread.stop()
        finally:
            self.shoe.close()

    def send(self, inp: I.Input) -> None:
        if isinstance(inp, I.CardSeen):
            self.shoe.deal(inp.card, burn=inp.burn)
            return
        reply = self.client.call(**command_for(inp))
        if not reply.get("ok") and not reply.get("refused"):
            raise ScenarioError(0, f"the daemon rejected {inp.to_dict()}: {reply.get('error')}")

    def receive(self, count: int) -> list[dict[str, Any]]:
        assert self._events is not None
        out = []
        for _ in range(count):
            try:
                kind, payload = next(self._events)
            except StopIteration:
                raise ScenarioError(0, f"no event from the daemon within {EVENT_TIMEOUT} s") from None
            if kind != "event":
                raise ScenarioError(0, f"subscriber had to re-sync (gap in seq) at seq {payload['seq']}")
            out.append(payload)
        return out


def strip(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k not in ("table", "seq")}


def run_through_daemon(scenario: Scenario, source: str, out: TextIO, settled_only: bool) -> None:
    """Play every round through a daemon, writing the engine-only run's lines; ScenarioError on failure."""
    logging.getLogger("croupier").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="croupier-scenario-") as tmp:
        harness = ThroughDaemon(scenario, source, Path(tmp))
        harness.start()
        try:
            _play(harness, scenario, out, settled_only)
        finally:
            harness.close()


def _play(h: ThroughDaemon, scenario: Scenario, out: TextIO, settled_only: bool) -> None:
    mirror = scenario.new_table()
    for seat, amount in sorted(scenario.spec.credits.items()):
        h.send(I.CreditIn(seat, amount))
        h.receive(1)  # the engine-only run seats these silently: not printed
    for n, spec in enumerate(scenario.spec.rounds, start=1):
        for inp in round_inputs(mirror, spec, n, first=n == 1):
            expected = [e.to_dict() for e in mirror.apply(inp)]
            h.send(inp)
            got = [strip(p) for p in h.receive(len(expected))]
            for want, have in zip(expected, got, strict=True):
                if json.dumps(want) != json.dumps(have):
                    raise ScenarioError(
                        n, f"the daemon published {json.dumps(have)}, the engine {json.dumps(want)}"
                    )
                if not settled_only or have["event"] == "round_settled":
                    out.write(json.dumps(have) + "\n")
                if have["event"] == "refused":
                    raise ScenarioError(n, have["reason"])
                if have["event"] == "tilt":
                    raise ScenarioError(n, f"tilt ({have['reason']}): {have['detail']}")
        out.flush()

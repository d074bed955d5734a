"""Who does the conformance kit's hands-on steps: a person at the terminal, or the simulator.

A step is a short phrase in the simulator's command language (``lid open``, ``fault jam``,
``empty``), which a person reads as an instruction and the simulator's control socket runs as is.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from drivers.shoe.simctl import address, send


def person(step: str) -> bool:
    """Ask the person at the terminal to do ``step`` to the device; the check then waits for it."""
    print(f"OPERATOR: {step} on the device now (the check waits 30 s for its report)",
          file=sys.stderr, flush=True)
    return True


def sim_control(where: str) -> Callable[[str], bool]:
    """Steps sent to the simulator's control socket (``croupier sim shoe`` prints its port)."""
    try:  # said now, not at the first step
        address(where)
    except ValueError:
        raise ValueError(f"--sim-control wants HOST:PORT, not {where!r}") from None

    def run(step: str) -> bool:
        try:
            answer = send(where, step)
        except OSError as exc:  # the check is then skipped, saying the operator could not
            print(f"--sim-control {where}: {exc}", file=sys.stderr, flush=True)
            return False
        return answer.startswith("ok")

    return run

"""How an exact par sheet reaches the user: stored figures or computed now, printed.

``--output FILE`` is the command line's (controller.cli_parser writes what the tool printed, atomically
and private): the games write no file (they only read their stored sheets)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

S = TypeVar("S")


def deliver(found: S | None, compute: Callable[[], S], render: Callable[[S, str], str], stored_name: str,
            workers: int) -> int:
    """Print the stored sheet ``found`` (or, when it is None, one computed now), saying which it is. The
    source line is part of the sheet so a reader knows which they have."""
    if found is None:
        found = compute()
        source = f"Computed now ({workers} worker(s))."
    else:
        source = f"Stored figures ({stored_name}); `--recompute` computes them again."
    print(render(found, source), end="")
    return 0

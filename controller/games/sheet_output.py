"""How an exact par sheet reaches the user: stored figures or computed now, printed or written to a file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

S = TypeVar("S")


def deliver(found: S | None, compute: Callable[[], S], render: Callable[[S, str], str], stored_name: str,
            workers: int, output: str | None) -> int:
    """Render the stored sheet ``found`` (or, when it is None, one computed now), saying which it is, to
    ``output`` or the terminal. The source line is part of the sheet so a reader knows which they have."""
    if found is None:
        found = compute()
        source = f"Computed now ({workers} worker(s))."
    else:
        source = f"Stored figures ({stored_name}); `--recompute` computes them again."
    text = render(found, source)
    if output:
        Path(output).write_text(text)
    else:
        print(text, end="")
    return 0

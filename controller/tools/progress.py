"""A long command's progress on standard error: overwritten in place on a terminal, every 10 % otherwise.

One helper for every long command (``croupier vision``'s photographs and frames, ``croupier journal
export``'s replay), for work counted in many small steps: called at every step, it writes at most
every 1 % on a terminal and every 10 % to a file or a pipe (a log keeps a few lines, not one per step).
"""

from __future__ import annotations

import sys


def progress(what: str, done: int, total: int) -> None:
    """Say that ``done`` of ``total`` ``what`` are done (the last call, ``done == total``, ends the line)."""
    step = max(1, total // 100)
    if done != total and done % step:  # first: most steps write nothing, and cost nothing more
        return
    if not sys.stderr.isatty():
        if done == total or done % (10 * step) == 0:
            print(f"  {done:,}/{total:,} {what}", file=sys.stderr, flush=True)
        return
    print(f"\r  {done:,}/{total:,} {what}", end="\n" if done == total else "", file=sys.stderr, flush=True)

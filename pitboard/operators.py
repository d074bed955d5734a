"""Who may act on the pit board: operators and their tokens, in a private file, the tokens stored hashed.

Why tokens and a file, not accounts: acknowledging an alert is the board's one write, and the floor
already keeps its secrets as files (docs/security.md). ``croupier floor operator add NAME`` makes a
random 256-bit token, prints it once and stores only its SHA-256: a token that random needs no slow
hash, and the file (0600, replaced atomically) gives nobody who reads it a usable token. The board
reads the file at each action, so an operator added or removed counts at once, without a restart.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from pathlib import Path
from typing import Final

from controller.daemon.private import write_atomic

NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,63}$")


class OperatorError(ValueError):
    """An operators file or name that cannot be used (the sentence says which and why)."""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def read(path: Path) -> dict[str, str]:
    """Operator name -> SHA-256 of their token; an empty file set if it does not exist yet."""
    if not path.exists():
        return {}
    if path.stat().st_mode & 0o077:
        raise OperatorError(f"{path}: readable by others (chmod 600 it): tokens are kept private")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {str(name): str(entry["sha256"]) for name, entry in data["operators"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise OperatorError(f"{path}: not an operators file ({exc!r})") from None
    except RecursionError:  # JSON nested past Python's stack: it escaped, no file named (a 500 unlogged)
        raise OperatorError(f"{path}: not an operators file (JSON nested too deep)") from None


def add(path: Path, name: str) -> str:
    """Give ``name`` a new token (replacing any they had) and return it: it is shown only this once."""
    if not NAME.match(name):
        raise OperatorError(f"operator name {name!r}: letters, digits, space . _ @ -, at most 64")
    known = read(path)
    token = secrets.token_urlsafe(32)
    known[name] = _digest(token)
    body = {"operators": {n: {"sha256": h} for n, h in sorted(known.items())}}
    write_atomic(path, json.dumps(body, indent=1) + "\n")
    return token


def who(path: Path, token: str) -> str | None:
    """The operator whose token this is, or None (compared in constant time, each entry)."""
    digest = _digest(token)
    found = None
    for name, known in read(path).items():
        if hmac.compare_digest(known, digest):
            found = name
    return found

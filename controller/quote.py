"""A bad value as an error message shows it: one way for every refusal of outside text.

Why: a value a person or a peer sent may be of any length (a 5,000-digit paste, a 20 KB field), and an
error that echoed it whole was a second problem; one that echoed only part of it must say so. The
command and snapshot sockets, typed amounts, the fault-injection variable and option values all show a
bad value this way; kept in the core so that money and the tools alike can use it.
"""

from __future__ import annotations

from typing import Any, Final

#: The characters of a bad value's ``repr`` an error shows.
QUOTE_LIMIT: Final = 40


def quote(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """A bad value for an error message: its ``repr``, cut to ``limit`` characters and said so."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = len(value) if isinstance(value, str | bytes) else len(text)
    return f"{text[:limit]}... ({size} characters)"

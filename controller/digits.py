"""Whole numbers that people and other programs type: ASCII digits only, and only so many of them.

Why one function: ``str.isdigit()`` takes ``²`` and ``١``, which ``int()`` then refuses in its own words
(``croupier vision calibrate --camera ²`` ended in a traceback) or reads as another digit, and ``int()``
raises its own ValueError past 4,300 digits. Each option, command word and file name read as a number
had its own copy of the check, with one of these holes or another; they now take this one.
"""

from __future__ import annotations


def whole_number(text: str, most_digits: int) -> int | None:
    """``text`` as a number when it is 1 to ``most_digits`` ASCII digits (no sign, space or ``_``); else
    None, for the caller to refuse in words that name its option, field or command."""
    if not (0 < len(text) <= most_digits and text.isascii() and text.isdigit()):
        return None
    return int(text)

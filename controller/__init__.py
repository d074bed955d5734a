"""Croupier's table core: cards, money, the table state machine and the games.

Nothing in this package reads a clock, a socket, a file or a random number:
the same inputs always give the same events (see docs/architecture.md).
"""

__version__ = "0.1.0"

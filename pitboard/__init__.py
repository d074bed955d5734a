"""The pit board: every table of the floor on one page, live (``croupier floor serve``, docs/floor.md)."""

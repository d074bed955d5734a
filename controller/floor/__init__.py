"""The floor: every table's journal carried off the Pi on NATS JetStream and recorded once into PostgreSQL.

Nothing in the table daemon or the rules engine imports this package (docs/floor.md,
docs/architecture.md); it reads a journal only through controller.daemon.journal's read API.
"""

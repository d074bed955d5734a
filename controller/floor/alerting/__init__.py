"""The pit's alert service (``croupier floor alerts``): pure rules (rules, shoes) apart from the NATS and
PostgreSQL loop (service, history), so that every rule is tested without I/O (docs/floor.md, "Alerts")."""

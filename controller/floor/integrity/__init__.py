"""Game-integrity analytics from the floor history: pure functions of the data their callers pass in.

Nothing here reads a clock, a socket, a file or a random generator, so each rule gives the same
verdict on the same history wherever it runs (the board, an alert process, a test, a report).
The rules and their thresholds are in docs/floor.md, "Integrity alerts (rules)".
"""

"""Command-line tools over the core: scenarios, exact par sheets, simulations, the demo.

Randomness lives here and in the device simulators, never in the engine,
and every random tool takes a seed.
"""

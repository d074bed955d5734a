"""Helpers shared by the games' simulations: the seeded shuffled shoe and the Monte Carlo runner.

Randomness lives here and in the device simulators, never in the engine, and every
random tool takes a seed.
"""

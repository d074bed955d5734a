"""The thin command-line front ends of ``croupier``: ctl, watch, demo, run, scenario.

Game-specific logic (par sheets, simulations, strategies) lives in each game's package
under :mod:`controller.games`; the front ends only parse arguments and print.
"""

"""What the table's panels mean: presses and chips to inputs, the table's state to lamps (drivers: pins).

* :mod:`controller.panels.pinmaps` - pin maps checked against the games' words and spots.
* :mod:`controller.panels.view` - the table state the lamps show, and the panel words' inputs.
* :mod:`controller.panels.logic` - pure: bets, decisions, faults and lamp states of one pin map.
* :mod:`controller.panels.link` - one GPIO panel driver joined to its logic: pin events in, inputs out.
* :mod:`controller.panels.cli` - ``croupier sim panel``: a simulated panel with a table behind it.

The daemon's side (one link per pin map, the journal, the lamps topic) is
:mod:`controller.daemon.panels`.
"""

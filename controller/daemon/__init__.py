"""The table daemon: the shell around the pure core.

One asyncio loop owns a :class:`~controller.table.Table`. Devices (the shoe,
read on the loop itself; the GPIO panels and the camera, from their threads)
and operator commands hand it inputs; each input
is committed to the journal (:mod:`controller.daemon.journal`) before it is
applied, and its events are numbered and published over ZeroMQ only after
that commit (:mod:`controller.daemon.service`, :mod:`controller.daemon.server`).
A restart replays the journal through a fresh table, so the state, the event
numbers and the round history come back exactly as they were.
"""

"""Card shoes and dealing shufflers on a serial line: protocol v1, the plain-line profile, a simulator.

The daemon needs only :class:`ShoeReader`, a :class:`ShoeProfile` from
:func:`load_profile`, and the :data:`ShoeEvent` values it reports; the codec,
the transport and the simulator are separate modules so each can be tested
on its own (docs/shoe-protocol.md, docs/shoe-simulator.md).
"""

from drivers.shoe.events import ShoeCard, ShoeEvent, ShoeStatus
from drivers.shoe.profile import ProfileError, ShoeProfile, load_profile
from drivers.shoe.transport import FrameId, ShoeError, ShoeReader

__all__ = [
    "FrameId", "ProfileError", "ShoeCard", "ShoeError", "ShoeEvent", "ShoeProfile", "ShoeReader",
    "ShoeStatus", "load_profile",
]

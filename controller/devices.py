"""The names of the devices the daemon journals as ``device`` inputs, and the words the floor reads.

The daemon writes these (controller/daemon: the shoe's statuses, a dealing shuffler's feed, the
journal check) and the floor judges them from the recorded rows (controller/floor: significant
events, the shoe count), so both take them from here: a renamed device cannot silently stop the
floor's checks. docs/events.md lists them for third parties.
"""

from __future__ import annotations

from typing import Final

#: The shoe's statuses that halt play.
SHOE_HELLO: Final = "shoe hello"
SHOE_LID: Final = "shoe lid"
SHOE_FAULT: Final = "shoe fault"
#: A dealing shuffler whose card did not come, or that said it is empty.
SHOE_FEED: Final = "shoe feed"
#: How the shoe-feed device's detail begins when the shuffler answered a DISPENSE with SHOE_EMPTY.
SHOE_EMPTY: Final = "shoe empty"
#: The device a failed whole-journal check takes offline.
JOURNAL_DEVICE: Final = "journal"

"""What the detector's refusal of a frame was about, so that what follows never hangs on its wording.

Why: the search by indices (:mod:`vision.by_index`) may run only after some refusals (a bright region
reaching or filling the window) and must never run after others (two objects, an odd outline: two
overlapping cards make one); enrolment advises a re-shoot by the refusal's cause. Those decisions were
once made by looking for phrases in the refusal's message, so rewording a message silently changed
them. The detector now sets one of these at every place it refuses (:class:`vision.detect.Detection`'s
``refusal``); the message stays for people.
"""

from __future__ import annotations

from enum import Enum


class Refusal(Enum):
    """Why the detector found no card in the frame."""

    #: The frame is too narrow to hold a card at the working width.
    NARROW = "narrow"
    #: Nothing card-sized, or no contrast, in the window (the detection's status is ``empty``).
    EMPTY = "empty"
    #: A bright region reaches the window's edge and holds no whole card: a card cut by the window, or
    #: its paper joined to a sheet, a vignette, a glare or a neighbour at the edge.
    CUT = "cut"
    #: The bright area fills the window: glare, a card too close, a card on paper as bright as its own.
    FILLS = "fills"
    #: Two or more separate objects in the window (one card at a time).
    SEPARATE = "separate"
    #: An outline in the window that is not one card's: corners other than 4, a notch, sides that leave
    #: the bright region (a card under a hand, two overlapping cards).
    SHAPE = "shape"
    #: A four-sided outline whose sides are not a card's proportions at any turn the camera allows.
    PROPORTIONS = "proportions"
    #: A card recovered from its sides lies under another card, whose edge crosses its face.
    COVERED = "covered"
    #: The brightest patch's outline is no edge in the frame: a glare, not a card.
    GLARE = "glare"

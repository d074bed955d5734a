"""The rules version: one number that changes whenever replaying a journal could come out differently.

A journal holds inputs, not outcomes, so a change to the rules engine (a payout, a drawing rule,
what a tilt holds, what is refused) would replay an old journal into other settlements and
credits than the ones the table paid. Every journal records the number it was written under
(its header's ``rules``), and the daemon refuses to replay one of another number
(controller.daemon.journal): archive it and start a new state dir.

Bump it in the same change as any engine change that alters what some input sequence does
(events, settlements, refusals), and say so in docs/daemon.md ("Rules versions"). Journals
written before the number existed have none: they are read as version 1, today's rules.
"""

from __future__ import annotations

from typing import Final

#: 1: the rules as of the first journals that record it (held cards of a tilt included).
#: 2: a ``limits`` input is refused while a round is in play (it waits for the round's end), and one
#: that would drop or rescale money held (a seat holding money left out, new decimals under money) is
#: refused by the engine itself: a version-1 journal holding such a row would replay it otherwise.
#: 3: a tilt resolved while a device is offline mid-deal (a lid opened during an impossible-card tilt)
#: raises a ``device_offline`` tilt instead of resuming play: a version-2 journal dealt the next card.
#: 4: a wager that places a derived one (Swap-Hand's Odds-Win with its main) publishes each
#: ``wager_placed`` with the seat's credits after it; version 3 gave both the credits after the two.
#: 5: 2WayWinner's betting does not close on wagers while a card has been seen since the last new shoe (its
#: one deck is shuffled before every round): a version-4 journal closed and dealt on from the last deck.
RULES_VERSION: Final = 5
#: What a journal without a ``rules`` entry in its header was written under.
UNRECORDED: Final = 1

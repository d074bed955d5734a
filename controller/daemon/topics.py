"""The PUB socket's side topics, in one place for the daemon's contract and every reader.

Why a list and not only the missing ``seq``: a reader that files a message by
its topic cannot mistake a side topic for a numbered event even if one ever
carried a field named ``seq`` (the schema forbids it; docs/zeromq.md).
"""

from __future__ import annotations

from typing import Final

#: The side topics of the PUB socket (no ``seq``): schema definition -> topic (``<table>.<topic>``).
SIDE_TOPICS: Final = {"Lamps": "lamps", "Heartbeat": "heartbeat", "ShoeStatusMessage": "shoe_status",
                      "JournalFaultMessage": "journal_fault"}


def is_side_topic(topic: bytes | str) -> bool:
    """True for ``<table>.lamps`` and the other side topics (the part after the first dot)."""
    text = topic.decode("utf-8", "replace") if isinstance(topic, bytes) else topic
    return text.partition(".")[2] in SIDE_TOPICS.values()

"""The floor's stream and the durable consumers that read it: made once, and moved on from an earlier floor.

Rows go on one subject per journal (``croupier.<table>.rows.<journal_id>``, :mod:`controller.floor.wire`),
so the stream itself says where each journal's uplink stands. A floor made before 2026-12-07 had one
subject per table (``croupier.<table>.rows``); its stream keeps that subject and its rows, and takes the
new ones beside it. A durable consumer reads every subject of the stream (no filter: the stream holds
rows only), so the rows of both layouts reach the recorders and the alert service; one made on an earlier
floor, filtered to the old subject, would see no new row: it is made again where it stood (its
acknowledged floor), and what it had delivered but not acknowledged comes again (a recorder writes it as
a no-op, the alert service judges nothing twice).
"""

from __future__ import annotations

import logging

import nats.js.errors
from nats.js import JetStreamContext, api

from controller.floor.wire import STREAM, SUBJECTS

log = logging.getLogger("croupier.floor")


async def ensure_stream(js: JetStreamContext, replicas: int = 1, duplicate_window: float = 120.0) -> None:
    """Create the stream if it is missing (file storage, a duplicate window that outlasts a resend); add
    the per-journal subjects to an earlier floor's (needs the floor's user: a table's may not)."""
    try:
        info = await js.stream_info(STREAM)
    except nats.js.errors.NotFoundError:
        await js.add_stream(api.StreamConfig(
            name=STREAM, subjects=[SUBJECTS], storage=api.StorageType.FILE, num_replicas=replicas,
            duplicate_window=duplicate_window, retention=api.RetentionPolicy.LIMITS))
        log.info("created stream %s (%s, file storage, %d replica(s))", STREAM, SUBJECTS, replicas)
        return
    subjects = list(info.config.subjects or [])
    if SUBJECTS not in subjects:
        info.config.subjects = [*subjects, SUBJECTS]
        await js.update_stream(info.config)
        log.warning("stream %s: subjects %s added (one per journal) beside %s, whose rows stay", STREAM,
                    SUBJECTS, ", ".join(subjects))


async def rows_consumer(js: JetStreamContext, durable: str, config: api.ConsumerConfig) -> None:
    """The durable consumer ``durable`` of every row, made with ``config`` (its filter cleared) if missing;
    one an earlier floor filtered to its single subject is made again after its acknowledged floor."""
    config.filter_subject = None
    config.durable_name = config.name = durable
    try:
        info = await js.consumer_info(STREAM, durable)
    except nats.js.errors.NotFoundError:
        await js.add_consumer(STREAM, config)
        return
    if not info.config.filter_subject:
        return
    floor = int(info.ack_floor.stream_seq or 0) if info.ack_floor is not None else 0
    config.deliver_policy, config.opt_start_seq = api.DeliverPolicy.BY_START_SEQUENCE, floor + 1
    await js.delete_consumer(STREAM, durable)
    await js.add_consumer(STREAM, config)
    log.warning("consumer %s: made again for every subject of the stream after row message %d (it read %s "
                "only)", durable, floor, info.config.filter_subject)

"""A recorder's batches pulled from its JetStream consumer, gathered by one callback instead of a wait each.

nats-py's ``PullSubscription.fetch`` waits for each message of a batch with a task, a timer and a
uuid of its own: on a small floor server that cost more than writing the message into PostgreSQL
(docs/floor.md, "How fast"). This sends the same pull requests to the same durable consumer (the
JetStream API ``$JS.API.CONSUMER.MSG.NEXT``) and lets one subscription callback append what comes
to a list. Nothing about delivery changes: every message is still the consumer's, acknowledged by
the recorder only after its commit; one that came for a request given up (a timeout) stays in the
list for the next batch, and one never handed out (the recorder ended) is delivered again after
``ack_wait``, as any unacknowledged message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging

from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js import api

log = logging.getLogger("croupier.floor")

#: Statuses that end a pull request: no messages now (404), the request expired (408), and the
#: consumer's own refusals (409: too many waiting requests, consumer deleted, leader changed ...).
_ENDED = ("404", "408", "409")


class Puller:
    """Pull requests on ``durable`` of ``stream``; :meth:`fetch` gives the next batch."""

    def __init__(self, nc: NATS, stream: str, durable: str) -> None:
        self.nc = nc
        self.api = f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{durable}"
        self.inbox = nc.new_inbox()
        #: Messages delivered and not handed out yet, in the order they came.
        self.ready: list[Msg] = []
        self._sub: Subscription | None = None
        self._want = 0
        self._ended: asyncio.Future[None] | None = None

    async def start(self) -> None:
        self._sub = await self.nc.subscribe(self.inbox, cb=self._delivered)

    async def close(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):  # the connection may be gone: nothing to undo then
                await self._sub.unsubscribe()

    async def _delivered(self, msg: Msg) -> None:
        status = (msg.headers or {}).get(api.Header.STATUS)
        if status is None:
            self.ready.append(msg)
            if len(self.ready) >= self._want:
                self._end()
        elif status in _ENDED:
            if status == "409":
                log.warning("pull request refused: %s", (msg.headers or {}).get(api.Header.DESCRIPTION))
            self._end()

    def _end(self) -> None:
        if self._ended is not None and not self._ended.done():
            self._ended.set_result(None)

    async def _request(self, request: dict[str, object], want: int, timeout: float) -> None:
        """Send ``request``; return when ``want`` messages are ready, the request ended, or ``timeout``."""
        self._want = want
        self._ended = asyncio.get_running_loop().create_future()
        await self.nc.publish(self.api, json.dumps(request).encode(), reply=self.inbox)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._ended, timeout)

    async def fetch(self, batch: int, timeout: float) -> list[Msg]:
        """Up to ``batch`` messages: those the consumer has now, else the first to come within ``timeout``
        seconds (an empty list if none came)."""
        if len(self.ready) < batch:
            await self._request({"batch": batch - len(self.ready), "no_wait": True}, batch, timeout)
        if not self.ready:
            await self._request({"batch": batch, "expires": int(timeout * 1e9)}, 1, timeout)
        taken, self.ready = self.ready[:batch], self.ready[batch:]
        return taken

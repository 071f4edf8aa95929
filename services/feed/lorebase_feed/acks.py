"""JetStream publishes sent pipelined: each message goes out at once, in call order, on the one
NATS connection (so the stream stores them in that order), and its acknowledgement comes back on a
future that the relay awaits together with the others of its pass.

Not nats-py's `JetStreamContext.publish_async`: its reply handler raises (from
`APIError.from_error`) instead of failing the future when JetStream answers with an error, so a
message the stream refuses would wait out the whole timeout and be reported as unanswered. Here an
error answer fails its future with the `APIError` at once, and "no responders" (no stream takes the
subject) with `NoStreamResponseError`, as `JetStreamContext.publish` raises them.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import orjson
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js.errors import APIError, NoStreamResponseError

_NO_RESPONDERS = "503"


class PipelinedPublisher:
    """Sends JetStream messages without waiting; each `send` returns the future of its acknowledgement."""

    def __init__(self, nc: NATS) -> None:
        self.nc = nc
        self._inbox = ""  # the replies' subject prefix, subscribed on first use
        self._tokens = itertools.count()
        self._waiting: dict[str, asyncio.Future[None]] = {}

    async def send(self, subject: str, data: bytes, headers: dict[str, str]) -> asyncio.Future[None]:
        """Publish to JetStream now (after every earlier `send`); the future resolves on its
        acknowledgement, or fails with JetStream's error. Nothing times it out: the caller does."""
        if not self._inbox:
            inbox = self.nc.new_inbox() + "."
            await self.nc.subscribe(inbox + "*", cb=self._answered)
            self._inbox = inbox
        token = str(next(self._tokens))
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[token] = future
        future.add_done_callback(lambda _: self._waiting.pop(token, None))
        await self.nc.publish(subject, data, reply=self._inbox + token, headers=headers)
        return future

    async def _answered(self, msg: Msg) -> None:
        future = self._waiting.get(msg.subject[len(self._inbox) :])
        if future is None or future.done():
            return  # given up on (the pass failed or timed out)
        if msg.headers and msg.headers.get("Status") == _NO_RESPONDERS:
            future.set_exception(NoStreamResponseError())
            return
        try:
            answer = orjson.loads(msg.data)
        except orjson.JSONDecodeError:
            future.set_exception(APIError(description=f"JetStream answered {msg.data[:200]!r}"))
            return
        error = answer.get("error") if isinstance(answer, dict) else None
        if error:
            future.set_exception(
                APIError(
                    code=error.get("code"),
                    err_code=error.get("err_code"),
                    description=error.get("description"),
                )
            )
        else:
            future.set_result(None)


def failure_of(ack: asyncio.Future[Any]) -> Exception | None:
    """Why a copy was not acknowledged (None: it was): JetStream's error, or no answer in time."""
    if not ack.done() or ack.cancelled():  # cancelled: not answered within the relay's wait
        return TimeoutError("no acknowledgement from JetStream in time")
    error = ack.exception()
    return error if error is None or isinstance(error, Exception) else Exception(repr(error))


__all__ = ["PipelinedPublisher", "failure_of"]

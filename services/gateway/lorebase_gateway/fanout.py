"""The event streams of the gateway's clients (`GET …/branches/{b}/events`): one shared Feed stream
per branch, written to every client of that branch (docs/feed.md, "Shared branch streams").

Each client (a *follower*) has two parts:

- the branch's **shared stream**, one `Feed.Events` per (Domain, branch) in this gateway process,
  opened with a follower's credential and no Kind filter. Each of its events is framed once and
  queued to every follower whose Kinds it matches, so a commit costs Feed one message per gateway
  rather than one per client. When it ends (its credential lost access, max_connection_s, Feed
  restarted), it is opened again after the last sequence it delivered, with the credential of
  another follower, so the followers see no gap.
- the follower's **control stream**, `Feed.Events` with `until` = the shared stream's last sequence
  when the follower joined. Feed checks the follower's credential and grants (refusals answer as
  problem details), sends the events it missed after Last-Event-ID up to `until`, then
  `caught_up`. The shared stream has queued every later event for the follower. The control
  stream then ends after max_connection_s, or when re-authorization fails, and so does the
  follower's response.

A follower whose queue holds `QUEUE_LIMIT` frames (a client that stopped reading) is ended; it
reconnects with Last-Event-ID and catches up from PostgreSQL. Heartbeats are written by the
gateway after `agents.feed.heartbeat_s` without a frame. The followers of the process, and of each
principal, are capped (lorebase_gateway.stream_caps).

With tracing on, each frame of an event whose commit was traced is written to each client in a span
of that trace (`send SSE frame`, child of the feed's, whose `traceparent` came in the StreamItem).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from dataclasses import dataclass, field

import orjson
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from lorebase import tracing
from lorebase.clients import EventStream, FeedClient
from lorebase.problems import Problem
from lorebase.v1 import feed_pb2 as pb
from lorebase_gateway.stream_caps import StreamCaps

SERVER_SEND = "lorebase.server_send"  # the server's own send, kept in the scope by the app

logger = logging.getLogger("lorebase.gateway.events")

QUEUE_LIMIT = 256  # frames queued for one follower; beyond, it is ended and resumes
REOPEN_DELAY_S = 1.0  # between rounds of reopening a shared stream that Feed refused
STUCK_S = 5.0  # an ended follower whose client does not take its last bytes is cut off after this
# The reconnection time rides on the first event, never in a block of its own: a block with no data
# is no event for EventSource, but some clients (httpx-sse) yield it as an empty one.
RETRY = b"retry: 3000\n"
KEEP_ALIVE = b": keep-alive\n\n"  # a comment: no client sees an event
# Headers that keep proxies from buffering or caching the stream.
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def frame(item: pb.StreamItem) -> bytes:
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (item.sequence, item.event.encode(), item.data)


def parse_kinds(value: str) -> frozenset[str]:
    """`kinds=Supplier,Part` (Feed checks the names on the control stream)."""
    return frozenset(k.strip() for k in value.split(",") if k.strip())


def changed_kinds(data: bytes) -> frozenset[str]:
    """The Kinds a revision.committed event changed (its `kinds` member)."""
    try:
        changed = orjson.loads(data).get("kinds")
    except (orjson.JSONDecodeError, AttributeError):
        return frozenset()
    return frozenset(changed) if isinstance(changed, dict) else frozenset()


@dataclass(eq=False)
class Follower:
    """One client's event stream: its queue of frames from the shared stream and its control stream."""

    credential: str
    kinds: frozenset[str]
    joined_at: int  # the shared stream's last sequence when it joined: `until` of its control stream
    control: EventStream | None = None
    principal: str = ""  # named by the control stream when it opened
    start: int = 0  # frames at or below this are not written (the control stream covered them)
    frames: deque[tuple[int, bytes, str]] = field(default_factory=deque)  # sequence, frame, traceparent
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    last_write: float = field(default_factory=time.monotonic)

    def offer(self, sequence: int, data: bytes, traceparent: str = "") -> None:
        if self.ended.is_set():
            return
        if len(self.frames) >= QUEUE_LIMIT:
            logger.info("an event stream fell %d events behind; it ends and resumes", QUEUE_LIMIT)
            self.frames.clear()
            self.end()
            return
        self.frames.append((sequence, data, traceparent))
        self.wake.set()

    def end(self) -> None:
        self.ended.set()
        self.wake.set()
        if self.control is not None:
            self.control.end()

    async def write(self, send: Send, heartbeat_s: float) -> None:
        """Write the stream until it ends: missed events from the control stream, then the queue."""

        async def body(data: bytes) -> None:
            await send({"type": "http.response.body", "body": data, "more_body": True})
            self.last_write = time.monotonic()

        async def events(data: bytes, spans: list[tracing.Span | None]) -> None:
            """Write frames; `spans`: theirs (lorebase.tracing), ended once written."""
            try:
                await body(data)
            finally:
                for span in spans:
                    if span is not None:
                        span.end()

        assert self.control is not None
        # The first bytes at once, so that clients and proxies see the stream open: the reconnection
        # delay, alone in its block, as the seed's example stream opens (`retry: 3000`, a blank line,
        # then the events and keep-alives).
        await body(RETRY + b"\n")
        start = self.start
        async for item in self.control:  # the events missed after Last-Event-ID, up to joined_at
            if item.caught_up:
                start = max(start, item.sequence)
                break
            if not item.heartbeat:
                await events(frame(item), [self._frame_span(item.sequence, item.traceparent)])
                start = max(start, item.sequence)
        else:
            return  # ended before it caught up (max_connection_s, re-authorization, the gateway stopping)
        watch = asyncio.create_task(self._watch_control())
        try:
            while True:
                await self.wake.wait()
                self.wake.clear()
                if self.ended.is_set():
                    return
                chunks = []
                spans = []
                while self.frames:
                    sequence, data, traceparent = self.frames.popleft()
                    if sequence > start:
                        chunks.append(data)
                        if traceparent:
                            spans.append(self._frame_span(sequence, traceparent))
                if chunks:
                    await events(b"".join(chunks), spans)
                elif time.monotonic() - self.last_write >= heartbeat_s:
                    await body(KEEP_ALIVE)
        finally:
            watch.cancel()

    def _frame_span(self, sequence: int, traceparent: str) -> tracing.Span | None:
        """The span of one frame written to this client (None: its commit was not traced)."""
        return tracing.start(
            "send SSE frame",
            traceparent,
            kind=tracing.SpanKind.PRODUCER,
            attributes={"lorebase.sequence": sequence, "lorebase.principal": self.principal},
        )

    async def _watch_control(self) -> None:
        """The control stream sends nothing after caught_up: when it ends, so does the follower."""
        assert self.control is not None
        with contextlib.suppress(Problem):
            async for _ in self.control:
                pass
        self.end()


class BranchStream:
    """The shared stream of one branch and its followers."""

    def __init__(self, fanout: Fanout, domain: str, branch: str) -> None:
        self.fanout, self.domain, self.branch = fanout, domain, branch
        self.followers: set[Follower] = set()
        self.last = 0  # the last sequence the shared stream delivered (or the one it started after)
        self.joining = 0
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None

    async def join(self, credential: str, kinds: frozenset[str]) -> Follower:
        """A new follower, queued every event after `last`. Opens the shared stream with this
        follower's credential when there is none (its refusal is the follower's)."""
        self.joining += 1
        try:
            async with self._lock:
                if self._task is None or self._task.done():
                    # Followers still waiting (a stream that stopped): go on after their last event.
                    stream = self._open(credential, self.last if self.followers else None)
                    try:
                        start = await stream.first()
                    except BaseException:
                        stream.cancel()
                        raise
                    if not self.followers:
                        self.last = start
                    self._task = asyncio.create_task(self._run(stream))
            follower = Follower(credential, kinds, self.last)
            self.followers.add(follower)
            return follower
        finally:
            self.joining -= 1

    def leave(self, follower: Follower) -> None:
        follower.end()
        self.followers.discard(follower)
        self.fanout.caps.release(follower)
        if not self.followers and not self.joining:
            if self._task is not None:
                self._task.cancel()
                self._task = None
            self.fanout.forget(self)

    def _open(self, credential: str, after: int | None = None) -> EventStream:
        return self.fanout.feed.events(
            credential=credential,
            domain=self.domain,
            branch=self.branch,
            last_event_id="" if after is None else str(after),
        )

    def _deliver(self, item: pb.StreamItem) -> None:
        if item.sequence <= self.last:
            return
        self.last = item.sequence
        data = frame(item)
        changed: frozenset[str] | None = None
        for follower in self.followers:
            if follower.kinds:
                if changed is None:
                    changed = changed_kinds(item.data)
                if follower.kinds.isdisjoint(changed):
                    continue
            follower.offer(item.sequence, data, item.traceparent)

    async def _run(self, stream: EventStream) -> None:
        while True:
            try:
                async for item in stream:
                    if not item.heartbeat:
                        self._deliver(item)
            except Problem as problem:
                logger.info("the shared event stream of %s/%s ended: %s", self.domain, self.branch, problem)
            except Exception:
                logger.exception("the shared event stream of %s/%s failed", self.domain, self.branch)
                await asyncio.sleep(REOPEN_DELAY_S)
            finally:
                stream.cancel()
            reopened = await self._reopen()
            if reopened is None:
                return
            stream = reopened

    async def _reopen(self) -> EventStream | None:
        """The shared stream again, after `last`, with the first follower credential Feed accepts."""
        while self.followers and not self.fanout.draining:
            for follower in list(self.followers):
                if follower.ended.is_set():
                    continue
                stream = self._open(follower.credential, self.last)
                try:
                    await stream.first()
                    return stream
                except Problem as problem:
                    stream.cancel()
                    if problem.status >= 500:
                        break  # Feed is unavailable: wait
            await asyncio.sleep(REOPEN_DELAY_S)
        return None


class Fanout:
    """The shared branch streams of this gateway process."""

    feed: FeedClient

    def __init__(self, *, heartbeat_s: float = 15, caps: StreamCaps | None = None) -> None:
        self.heartbeat_s = heartbeat_s
        self.caps = caps or StreamCaps(per_principal=20, total=2000)
        self.draining = False
        self._branches: dict[tuple[str, str], BranchStream] = {}
        self._ticker: asyncio.Task[None] | None = None

    @property
    def followers(self) -> set[Follower]:
        return {f for shared in self._branches.values() for f in shared.followers}

    async def follow(
        self, *, credential: str, domain: str, branch: str, kinds: str, last_event_id: str
    ) -> Follower:
        """A follower of a branch whose control stream is open; raises the Problem of a refused one
        (and 429 past the caps)."""
        with self.caps.opening():
            follower = await self._follow(credential, domain, branch, kinds, last_event_id)
        if self._ticker is None:
            self._ticker = asyncio.create_task(self._heartbeats())
        return follower

    async def _follow(
        self, credential: str, domain: str, branch: str, kinds: str, last_event_id: str
    ) -> Follower:
        shared = self._branches.get((domain, branch))
        if shared is None:
            shared = self._branches[(domain, branch)] = BranchStream(self, domain, branch)
        try:
            follower = await shared.join(credential, parse_kinds(kinds))
        except BaseException:
            if not shared.followers and not shared.joining:
                self.forget(shared)
            raise
        follower.control = self.feed.events(
            credential=credential,
            domain=domain,
            branch=branch,
            kinds=kinds,
            last_event_id=last_event_id,
            until=follower.joined_at,
        )
        try:
            follower.start = max(follower.joined_at, await follower.control.first())
            follower.principal = follower.control.principal
            self.caps.hold(follower)
        except BaseException:
            shared.leave(follower)
            raise
        return follower

    def leave(self, follower: Follower) -> None:
        for shared in list(self._branches.values()):
            if follower in shared.followers:
                shared.leave(follower)
        self.caps.release(follower)

    def forget(self, shared: BranchStream) -> None:
        if self._branches.get((shared.domain, shared.branch)) is shared:
            del self._branches[(shared.domain, shared.branch)]

    def drain(self) -> None:
        """End every follower (their responses end cleanly; clients reconnect with Last-Event-ID)."""
        self.draining = True
        for follower in self.followers:
            follower.end()

    async def _heartbeats(self) -> None:
        """Wake the followers that have been silent for heartbeat_s (they write a keep-alive)."""
        tick = min(1.0, self.heartbeat_s / 4)
        while True:
            await asyncio.sleep(tick)
            due = time.monotonic() - self.heartbeat_s
            for shared in list(self._branches.values()):
                for follower in shared.followers:
                    if follower.last_write <= due:
                        follower.wake.set()

    async def close(self) -> None:
        self.drain()
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None


class EventStreamResponse(Response):
    """The SSE answer of one follower (no buffering; proxy-safe headers)."""

    def __init__(self, fanout: Fanout, follower: Follower) -> None:
        # Like StreamingResponse: no body, so no Content-Length.
        self.status_code = 200
        self.media_type = "text/event-stream"
        self.background = None
        self.init_headers(SSE_HEADERS)
        self.fanout, self.follower = fanout, follower

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        follower = self.follower
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        # The middlewares saw the start; the frames go to the server directly (lorebase_gateway.app).
        send = scope.get(SERVER_SEND, send)

        async def disconnected() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            follower.end()

        watcher = asyncio.create_task(disconnected())
        writer = asyncio.create_task(follower.write(send, self.fanout.heartbeat_s))
        ended = asyncio.create_task(follower.ended.wait())
        try:
            await asyncio.wait((writer, ended), return_when=asyncio.FIRST_COMPLETED)
            # Ended while writing (a client that stopped reading): a moment to finish, then cut off.
            done, _ = await asyncio.wait((writer,), timeout=STUCK_S)
            if not done:
                writer.cancel()
                return  # the server closes the connection of an unfinished response
            with contextlib.suppress(Problem, OSError):  # Feed failed, or the client went away
                writer.result()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            for task in (watcher, writer, ended):
                task.cancel()
            self.fanout.leave(follower)


__all__ = ["EventStreamResponse", "Fanout", "Follower"]

"""The Feed gRPC servicer: parse, ask Keeper whether the caller may read, call down, and turn
problems into statuses (lorebase.grpc_problems, like every servicer)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

import grpc
import orjson

from lorebase.clients import KeeperClient
from lorebase.config import Settings
from lorebase.grpc_problems import problem_rpc, problems_as_status
from lorebase.ids import utc_now
from lorebase.operators import Operators
from lorebase.problems import Problem
from lorebase.settings_model import Feed
from lorebase.settings_model import Webhooks as WebhookSettings
from lorebase.v1 import feed_pb2 as pb
from lorebase.v1 import feed_pb2_grpc
from lorebase.webhook_secrets import Sealer, SecretKeyError
from lorebase.webhook_targets import TargetPolicy
from lorebase_feed.access import authorize, parse_kinds
from lorebase_feed.changes import ChangesLimits, changes
from lorebase_feed.events import (
    EVENT,
    HEARTBEAT,
    READY,
    StreamLimits,
    check_not_ahead,
    control_stream,
    event_stream,
    parse_last_event_id,
)
from lorebase_feed.hub import Hub
from lorebase_feed.webhooks import Registry, Webhooks
from lorebase_store import Database, Txn
from lorebase_store.fence import Fence


def _credential(context: grpc.aio.ServicerContext) -> str:
    return str(dict(context.invocation_metadata() or ()).get("authorization", ""))


def stream_limits(feed: Feed) -> StreamLimits:
    """The event streams' limits of the `agents.feed` settings."""
    return StreamLimits(
        heartbeat_s=feed.heartbeat_s,
        max_connection_s=feed.max_connection_s,
        reauthorize_interval_s=feed.reauthorize_interval_s,
        poll_interval_s=feed.poll_interval_s,
    )


def changes_limits(feed: Feed) -> ChangesLimits:
    """The polling changes' limits of the `agents.feed` settings."""
    return ChangesLimits(page_size=feed.page_size, max_scan=feed.max_scan)


def webhook_registry(db: Database, keeper: KeeperClient, webhooks: WebhookSettings) -> Registry:
    """The webhook registry of the `webhooks` settings; with a key that cannot be used, creating a
    webhook answers why (the error) rather than the process refusing to start."""
    sealer: Sealer | None = None
    error: str | None = None
    try:
        sealer = Sealer.of(webhooks)
    except SecretKeyError as exc:
        error = str(exc)
    return Registry(db, keeper, sealer, error, TargetPolicy.of(webhooks), lookup_s=webhooks.timeout_s)


async def _publication_state(txn: Txn, fence: int) -> tuple[int, int, int, datetime | None]:
    through, pending = await txn.publication_state(fence)
    return through, pending, await txn.parked_events(), await txn.oldest_pending_at(fence)


class FeedServicer(feed_pb2_grpc.FeedServicer):
    def __init__(
        self, db: Database, *, stream: str, keeper: KeeperClient, hub: Hub, fence: Fence, settings: Settings
    ) -> None:
        self.db = db
        self.stream = stream
        self.keeper = keeper
        self.hub = hub
        self.fence = fence  # advanced by the relay
        model = settings.model
        self.stream_limits = stream_limits(model.agents.feed)
        self.changes_limits = changes_limits(model.agents.feed)
        self.webhooks = Webhooks(webhook_registry(db, keeper, model.webhooks))
        self.degraded_after_s = model.nats.relay.degraded_after_s
        self.operators = Operators(model.admin.key)

    async def _webhook_call(
        self, context: grpc.aio.ServicerContext, name: str, request: pb.WebhookRequest
    ) -> pb.WebhookReply:
        status, document = await getattr(self.webhooks, name)(_credential(context), request)
        return pb.WebhookReply(body=orjson.dumps(document), status=status)

    @problem_rpc("feed")
    async def CreateWebhook(
        self, request: pb.WebhookRequest, context: grpc.aio.ServicerContext
    ) -> pb.WebhookReply:
        return await self._webhook_call(context, "create", request)

    @problem_rpc("feed")
    async def ListWebhooks(
        self, request: pb.WebhookRequest, context: grpc.aio.ServicerContext
    ) -> pb.WebhookReply:
        return await self._webhook_call(context, "list", request)

    @problem_rpc("feed")
    async def DeleteWebhook(
        self, request: pb.WebhookRequest, context: grpc.aio.ServicerContext
    ) -> pb.WebhookReply:
        return await self._webhook_call(context, "delete", request)

    @problem_rpc("feed")
    async def UpdateWebhook(
        self, request: pb.WebhookRequest, context: grpc.aio.ServicerContext
    ) -> pb.WebhookReply:
        return await self._webhook_call(context, "update", request)

    @problem_rpc("feed")
    async def Status(self, request: pb.FeedStatusRequest, context: grpc.aio.ServicerContext) -> pb.FeedStatus:
        self.operators.require(dict(context.invocation_metadata() or ()))  # the operator's (admin key)
        fence = self.fence.safe
        through, pending, parked, oldest = await self.db.read("publication_state", _publication_state, fence)
        behind_s = max(0.0, (utc_now() - oldest).total_seconds()) if oldest is not None else 0.0
        degraded = ""
        if behind_s > self.degraded_after_s:
            degraded = (
                f"the relay has not published committed events for {behind_s:.0f} s "
                f"(nats.relay.degraded_after_s {self.degraded_after_s:g}); {pending} are waiting: is NATS up?"
            )
        return pb.FeedStatus(
            published_through=through,
            pending=pending,
            stream=self.stream,
            fence=fence,
            parked=parked,
            behind_s=behind_s,
            degraded=degraded,
        )

    @problem_rpc("feed")
    async def Changes(self, request: pb.ChangesRequest, context: grpc.aio.ServicerContext) -> pb.ChangesReply:
        access = await authorize(
            self.keeper, credential=_credential(context), endpoint="changes", request=request
        )
        document = await changes(
            self.db,
            access,
            since=request.since,
            kinds=parse_kinds(request.kinds, access),
            limit=request.limit,
            limits=self.changes_limits,
        )
        return pb.ChangesReply(body=orjson.dumps(document), revision=document["head"] or "")

    async def Events(
        self, request: pb.EventsRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.StreamItem]:
        async with problems_as_status(context, "feed", "Events"):
            credential = _credential(context)
            access = await authorize(self.keeper, credential=credential, endpoint="events", request=request)
            kinds = parse_kinds(request.kinds, access)
            last_event_id = parse_last_event_id(request.last_event_id)
            exists = await self.db.read(
                "feed_branch", lambda txn: txn.get_branch(access.domain_id, access.branch)
            )
            if exists is None:
                raise Problem(404, "not-found", f"unknown branch {access.branch!r}; GET /branches lists them")
            await check_not_ahead(self.db, access, last_event_id)

            async def reauthorize() -> Any:
                return await authorize(self.keeper, credential=credential, endpoint="events", request=request)

            opened_at = await self.fence.advance(self.db) if last_event_id is None else 0
            items = (
                control_stream(
                    self.db,
                    self.hub,
                    lambda: self.fence.safe,
                    access,
                    kinds=kinds,
                    last_event_id=last_event_id,
                    opened_at=opened_at,
                    until=request.until,
                    limits=self.stream_limits,
                    reauthorize=reauthorize,
                )
                if request.control
                else event_stream(
                    self.db,
                    self.hub,
                    lambda: self.fence.safe,
                    access,
                    kinds=kinds,
                    last_event_id=last_event_id,
                    opened_at=opened_at,
                    limits=self.stream_limits,
                    reauthorize=reauthorize,
                )
            )
            async for item in items:
                if item.kind == EVENT:
                    yield pb.StreamItem(
                        sequence=item.sequence, event="revision", data=item.data, traceparent=item.traceparent
                    )
                elif item.kind == HEARTBEAT:
                    yield pb.StreamItem(heartbeat=True)
                elif item.kind == READY:
                    yield pb.StreamItem(ready=True, sequence=item.sequence, principal=access.principal)
                else:
                    yield pb.StreamItem(caught_up=True, sequence=item.sequence)


__all__ = ["FeedServicer", "changes_limits", "stream_limits"]

"""Following changes: polling changes, the event stream (SSE) and webhooks."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from lorebase.contract import answers, examples
from lorebase.contract._base import DOMAIN, Body
from lorebase.contract.endpoint import Endpoint, Header, Path, Query, Request
from lorebase.contract.fields import BranchRef, DomainName, Name, RevisionRef, bounded
from lorebase.contract.policy import Delegation, Need, P, Scope, grant
from lorebase.contract.schemas import members

KindList = Annotated[str, Meta(max_length=4096, pattern=r"^[^\x00]*$", description="Kinds, comma-separated")]
Sequence = Annotated[
    str, Meta(max_length=19, pattern=r"^[0-9]*$", description="An event sequence (a signed 64-bit number)")
]
# The clearances a webhook may hold: the sensitivity tags (docs/security.md).
Clearances = Annotated[list[Literal["pii", "confidential", "restricted"]], Meta(max_length=3)]


class Changes(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    branch: Annotated[BranchRef, Path]
    since: Annotated[RevisionRef, Query] = ""
    kinds: Annotated[KindList, Query] = ""
    limit: Annotated[
        Annotated[
            int,
            Meta(ge=0, le=100, description="Page size, at most agents.feed.page_size (default 100); 0: that"),
        ],
        Query,
    ] = 0


class Events(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    branch: Annotated[BranchRef, Path]
    kinds: Annotated[KindList, Query] = ""
    last_event_id: Annotated[Sequence, Query] = ""
    last_event_header: Annotated[Sequence, Header("Last-Event-ID")] = ""


Patterns = Annotated[list[Annotated[str, bounded(255)]], Meta(max_length=100)]
Url = Annotated[
    str, bounded(2048, "An https:// URL (webhooks.allowed_schemes), not of a private address", min_length=1)
]


class NewWebhook(Body, frozen=True, kw_only=True):
    url: Url
    events: Patterns | None = None
    branches: Patterns | None = None
    clearances: Clearances | None = None


class CreateWebhook(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    body: NewWebhook


class ListWebhooks(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]


class WebhookCall(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    id: Annotated[Name, Path]


@members(any_of=("url", "events", "branches", "clearances"))
class WebhookChange(Body, frozen=True, kw_only=True):
    url: Url | None = None
    events: Patterns | None = None
    branches: Patterns | None = None
    clearances: Clearances | None = None


class UpdateWebhook(Request, frozen=True, kw_only=True):
    domain: Annotated[DomainName, Path]
    id: Annotated[Name, Path]
    body: WebhookChange


BRANCH = DOMAIN + "/branches/{branch:path}"

ENDPOINTS = [
    Endpoint(
        "changes",
        "GET",
        BRANCH + "/changes",
        "feed",
        "Changes",
        Changes,
        "The Revisions committed on a branch after `since`, oldest first (polling)",
        "feed",
        policy=grant(P.DATA_READ, scope=Scope.EVERY_KIND, ungranted=403),
        problems=(409,),
        response=answers.feed.ChangesPage,
        example=examples.CHANGES,
    ),
    Endpoint(
        "events",
        "GET",
        BRANCH + "/events",
        "feed",
        "Events",
        Events,
        "A Server-Sent Events stream of the Revisions committed on a branch",
        "feed",
        policy=grant(P.DATA_READ, scope=Scope.EVERY_KIND, ungranted=403),
        problems=(409, 503),
        media_types=("text/event-stream",),
        description="Resume with Last-Event-ID (or ?last_event_id=); one ahead of every event of the "
        "server, or one lost when the database was restored from a backup, answers 409 resync-required "
        "(reason ahead-of-stream or lost-in-restore). Keep-alive comments every "
        "agents.feed.heartbeat_s; the server ends the stream after agents.feed.max_connection_s.",
    ),
    Endpoint(
        "create_webhook",
        "POST",
        DOMAIN + "/webhooks",
        "feed",
        "CreateWebhook",
        CreateWebhook,
        "Register a webhook (its secret is shown once)",
        "feed",
        policy=grant(
            Need(P.DOMAIN_SETTINGS, "default"), scope=Scope.EVERY_KIND, delegates=Delegation.CLEARANCES
        ),
        success=201,
        problems=(409,),
        response=answers.feed.CreatedWebhook,
        request_example=examples.bodies.WEBHOOK,
    ),
    Endpoint(
        "list_webhooks",
        "GET",
        DOMAIN + "/webhooks",
        "feed",
        "ListWebhooks",
        ListWebhooks,
        "The Domain's webhooks (never their secrets)",
        "feed",
        policy=grant(Need(P.DOMAIN_SETTINGS, "default"), scope=Scope.EVERY_KIND),
        response=answers.feed.WebhookList,
    ),
    Endpoint(
        "delete_webhook",
        "DELETE",
        DOMAIN + "/webhooks/{id}",
        "feed",
        "DeleteWebhook",
        WebhookCall,
        "Remove a webhook and its pending deliveries",
        "feed",
        policy=grant(Need(P.DOMAIN_SETTINGS, "default"), scope=Scope.EVERY_KIND),
        response=answers.admin.Deleted,
    ),
    Endpoint(
        "update_webhook",
        "PATCH",
        DOMAIN + "/webhooks/{id}",
        "feed",
        "UpdateWebhook",
        UpdateWebhook,
        "Change a webhook: its URL, events, branches or clearances",
        "feed",
        policy=grant(
            Need(P.DOMAIN_SETTINGS, "default"), scope=Scope.EVERY_KIND, delegates=Delegation.CLEARANCES
        ),
        response=answers.feed.Webhook,
    ),
]

__all__ = ["ENDPOINTS"]

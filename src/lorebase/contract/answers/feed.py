"""What the change feed answers and sends: the `revision.committed` event document (polling pages,
the event stream, webhook deliveries), the `operation.<side effect>` event of webhooks, and the
webhook registry (feed's changes.py and webhooks.py; keeper writes the events in its commits)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, UnsetType

from lorebase.contract.documents import Answer, Count, Edit, Origin, RevisionId, Timestamp


class RevisionStats(Answer, kw_only=True):
    """How much a Revision changed."""

    partitions_changed: Annotated[Count, Meta(description="Kinds and Relations it changed")]
    changes: Annotated[Count, Meta(description="Records and Links it changed")]


class RevisionEvent(Answer, kw_only=True):
    """`revision.committed`: a Revision committed on a branch. `kinds` and `relations` count the
    Records and Links it changed per Kind and Relation; `keys` lists changed Record keys per Kind,
    at most agents.feed.changed_keys_max in all (`keys_truncated`)."""

    sequence: Annotated[int, Meta(ge=1, description="The event's position in the feed (the SSE id)")]
    type: Literal["revision.committed"]
    domain: str
    branch: str
    revision: RevisionId
    parents: list[RevisionId]
    generation: Count
    author: str
    message: str
    origin: Origin
    stats: RevisionStats
    created_at: Timestamp
    kinds: dict[str, int]
    relations: dict[str, int]
    schema_changed: bool
    keys: dict[str, list[str]]
    keys_truncated: bool


class ChangesPage(Answer, kw_only=True):
    """The `revision.committed` events of the first-parent Revisions after `since`, oldest first (the
    latest ones without `since`). `more`: the page was cut, ask again with `since=next_since`."""

    domain: str
    branch: str
    head: RevisionId | None
    events: list[RevisionEvent]
    next_since: RevisionId | None
    more: bool


class OperationEvent(Answer, kw_only=True):
    """`operation.<side effect>`: a committed execution of an Operation that declares the side effect
    (webhooks only). Sensitive parameters and values are `***` unless the webhook's clearances cover
    them. An agent task's events are written when its Proposal merges: `branch` is then the target,
    `source_branch` and `proposal` name the task branch and the Proposal."""

    sequence: Annotated[int, Meta(ge=1)]
    type: Annotated[str, Meta(pattern="^operation\\.", description="operation.<side effect>")]
    side_effect: str
    domain: str
    branch: str
    operation: str
    operation_id: str
    invocation_id: str
    principal: str
    revisions: list[RevisionId]
    head: RevisionId | None
    parameters: dict[str, Any]
    edit_count: Count
    edits: list[Edit]
    edits_truncated: bool
    source_branch: str | UnsetType = UNSET
    proposal: str | None | UnsetType = UNSET


class Webhook(Answer, kw_only=True):
    """A webhook: where deliveries go, which events and branches it takes, and its clearances."""

    id: str
    domain: str
    url: str
    events: list[str]
    branches: list[str]
    clearances: list[str]
    created_by: str
    created_at: Timestamp
    updated_at: Timestamp


class CreatedWebhook(Webhook, kw_only=True):
    """A webhook just registered, with its signing secret (shown only in this answer)."""

    secret: Annotated[str, Meta(description="Signs Lorebase-Signature: its SHA-256 is the HMAC key")]
    standard_webhooks_secret: Annotated[
        str,
        Meta(description="The same key as a Standard Webhooks secret, for verifiers of webhook-signature"),
    ]


class WebhookList(Answer, kw_only=True):
    """The Domain's webhooks, never with their secrets."""

    webhooks: list[Webhook]


__all__ = [
    "ChangesPage",
    "CreatedWebhook",
    "OperationEvent",
    "RevisionEvent",
    "Webhook",
    "WebhookList",
]

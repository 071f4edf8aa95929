"""What the administration endpoints answer: the gateway's health, principals and keys, Domains,
grants, and the agent trace's sessions (keeper's lorebase_keeper/admin and governance/trace.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from lorebase.contract.documents import Answer, RevisionId, Timestamp


class Features(msgspec.Struct, kw_only=True):
    """The capabilities a client may gate on (lorebase.features); more members come with later
    releases, so a client reads those it knows and ignores the others."""

    memory_feed: Annotated[list[int], Meta(description="POST /memory/changes contract versions served")]
    tags: Annotated[bool, Meta(description="tags, accepted wherever a Revision is (at, since, from, to)")]
    history_values: Annotated[
        str, Meta(description="what before and after of history with values=true hold: changed")
    ]
    proposal_merge_check: Annotated[
        bool, Meta(description="Proposals are tried on open and on each new head")
    ]
    dry_run_on_protected: Annotated[
        bool, Meta(description="a dry run on a protected branch runs and says the execution needs review")
    ]
    extraction_provenance: Annotated[
        bool, Meta(description="writes carry extraction evidence, and lineage, explain and history show it")
    ]


class GatewayHealth(Answer, kw_only=True):
    """Every service answers its health check; `degraded` names those that work less well than they
    should, with the reason (the feed when its relay has fallen behind). `version` is the release
    (0.9.0 and later serve both memory feed contracts, seed 002); `features` names the capabilities."""

    status: Literal["ok", "degraded"]
    version: str
    features: Features
    degraded: dict[str, str] | UnsetType = UNSET


class GatewayDown(Answer, kw_only=True):
    """A service did not answer its health check (`lorebase up` restarts it meanwhile)."""

    status: Literal["unavailable"]
    version: str
    features: Features
    services: Annotated[dict[str, bool], Meta(description="keeper, feed, scribe: whether each answered")]


class Principal(Answer, kw_only=True):
    """A principal (a user or a service) and the tenant of its memory namespaces."""

    id: str
    type: Literal["service", "user"]
    name: str
    tenant: str
    created_at: Timestamp


class NewKey(Answer, kw_only=True):
    """A key of a principal; `key` is shown only in this answer (keeper keeps its digest)."""

    id: str
    principal: str
    key: str
    created_at: Timestamp


class RevokedKey(Answer, kw_only=True):
    """A revoked key."""

    id: str
    principal: str
    revoked_at: Timestamp


class DomainEntry(Answer, kw_only=True):
    """A Domain and its default branch."""

    name: str
    default_branch: str


class DomainList(Answer, kw_only=True):
    """The Domains the caller holds a grant in (all of them for the admin)."""

    domains: list[DomainEntry]


class DomainView(DomainEntry, kw_only=True):
    """A Domain: its default branch and the description of its schema."""

    description: str


class CreatedDomain(DomainView, kw_only=True):
    """A Domain just created, its default branch protected and without a Revision yet."""

    created_at: Timestamp


class Grant(Answer, kw_only=True):
    """A role on branches of a Domain, optionally narrowed to Kinds (null: every Kind)."""

    id: str
    principal: str
    role: Literal["viewer", "editor", "reviewer", "admin"]
    branches: list[str]
    kinds: list[str] | None


class Deleted(Answer, kw_only=True):
    """What was deleted."""

    id: str
    deleted: Literal[True]


class SessionNote(Answer, tag_field="kind", tag="note", kw_only=True):
    """A note an agent attached to its session."""

    id: int
    at: Timestamp
    principal: str
    domain: str | UnsetType = UNSET
    text: str


class NewSessionNote(Answer, tag_field="kind", tag="note", kw_only=True):
    """The note just attached."""

    session: str
    id: int
    text: str
    at: Timestamp


class TouchedLink(Answer, kw_only=True):
    """A Link a step's answer named: its Relation and its ends (Kind/key)."""

    relation: str
    from_: Annotated[str, Meta(description="Kind/key")] = msgspec.field(name="from")
    to: Annotated[str, Meta(description="Kind/key")]


class StepProblem(Answer, kw_only=True):
    """The problem a refused call was answered (problem details' code, title and detail)."""

    code: str
    title: str
    detail: str


class ChangedRecord(Answer, kw_only=True):
    """A Record a write's Revision changed."""

    ref: Annotated[str, Meta(description="Kind/key")]
    change: Annotated[str, Meta(description="created, modified or deleted")]


class SessionStep(Answer, tag_field="kind", tag="step", kw_only=True):
    """A call made with the session's id: its request, status, latency, counts and what it touched."""

    id: int
    at: Timestamp
    principal: str
    domain: str | UnsetType = UNSET
    call: Annotated[str, Meta(description="The RPC the call made (GetRecord, Query...)")]
    status: int
    latency_ms: float
    counts: dict[str, int]
    request: dict[str, Any]
    touched: Annotated[list[str], Meta(description="The Records (Kind/key) the answer named")]
    touched_links: Annotated[
        list[TouchedLink], Meta(description="The Links the answer named (steps kept before it: none)")
    ] = []
    revision: RevisionId | UnsetType = UNSET
    revisions: Annotated[
        list[RevisionId], Meta(description="A write's step: the Revisions it made (and merged)")
    ] = []
    changed: Annotated[
        list[ChangedRecord],
        Meta(description="A write's step: the Records its Revisions changed (also in touched)"),
    ] = []
    proposal: Annotated[
        str | UnsetType, Meta(description="A write's step: the Proposal it opened or added to")
    ] = UNSET
    branch: Annotated[
        str | UnsetType,
        Meta(description="A write's step: the branch of its Revision (a task write's task branch)"),
    ] = UNSET
    bytes: Annotated[
        int | UnsetType, Meta(description="The size of the answer's body (steps kept before it: none)")
    ] = UNSET
    problem: Annotated[
        StepProblem | UnsetType, Meta(description="A refused call: the problem it was answered")
    ] = UNSET


class Session(Answer, kw_only=True):
    """An agent session: its entries in order, for a replay."""

    session: str
    entries: list[SessionNote | SessionStep]
    steps: int


class SessionSummary(Answer, kw_only=True):
    """One agent session in the list: whose, where, when, and how many steps, failures and notes."""

    session: str
    principal: str
    domains: Annotated[list[str], Meta(description="The Domains its entries name, sorted")]
    started_at: Timestamp
    last_at: Timestamp
    steps: int
    errors: Annotated[int, Meta(description="Steps answered with a status of 400 or above")]
    notes: int


class SessionList(Answer, kw_only=True):
    """Agent sessions, the latest active first; `next` is the `before` of the next page (null: none)."""

    sessions: list[SessionSummary]
    next: str | None


__all__ = [
    "ChangedRecord",
    "Deleted",
    "DomainList",
    "DomainView",
    "GatewayDown",
    "GatewayHealth",
    "Grant",
    "CreatedDomain",
    "NewKey",
    "NewSessionNote",
    "Principal",
    "RevokedKey",
    "Session",
    "SessionList",
    "SessionSummary",
    "StepProblem",
    "TouchedLink",
]

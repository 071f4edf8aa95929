"""Who may call an endpoint, on which branch, and which data it reaches: its policy, declared once
with the endpoint (lorebase.contract.endpoint) and enforced by keeper before any handler runs
(lorebase_keeper.access.policy), for the gateway and for a gRPC caller alike.

A policy says four things:

- **who** may call at all: anyone, any live credential (whose answer is about the caller itself),
  the admin principal, a principal holding a grant in the Domain, or a holder of memory
  capabilities;
- **needs**: the permissions a grant must give, each on a branch named by the request (a field such
  as `branch` or `body.source`, empty meaning the Domain's default branch) or by the stored thing the
  request names, its **target** (`proposal.target`, `tag`, `candidate`...);
- **scope**: which Kinds the call reads or changes. A Kind the caller may not read answers exactly
  like one that does not exist, so a hidden and an absent target are indistinguishable;
- an **owner** who may act without the first need (a branch's creator deletes it, a Proposal's
  author closes it, a Kind's steward dismisses its candidates, a session's principal notes it).

Roles are fixed sets of permissions (ROLES); the table in docs/security.md is tested against them
and against every declaration.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Permission(StrEnum):
    """What a grant's role allows on a branch (the seed's permissions)."""

    DATA_READ = "data.read"
    OPERATION_EXECUTE = "operation.execute"
    BRANCH_CREATE = "branch.create"
    PROPOSAL_CREATE = "proposal.create"
    TAG_CREATE = "tag.create"
    PROPOSAL_REVIEW = "proposal.review"
    PROPOSAL_MERGE = "proposal.merge"
    TAG_DELETE = "tag.delete"
    DOMAIN_SETTINGS = "domain.settings"
    OPERATION_EXECUTE_CUSTOM = "operation.execute_custom"
    PII_READ = "pii.read"
    CONFIDENTIAL_READ = "confidential.read"
    RESTRICTED_READ = "restricted.read"
    DATA_ERASE = "data.erase"
    SCHEMA_CHANGE = "schema.change"  # change sets on a branch (docs/schema.md, "Changing a schema")


P = Permission
VIEWER = frozenset({P.DATA_READ})
EDITOR = VIEWER | {P.OPERATION_EXECUTE, P.BRANCH_CREATE, P.PROPOSAL_CREATE, P.TAG_CREATE}
REVIEWER = EDITOR | {P.PROPOSAL_REVIEW}
ADMIN = frozenset(Permission)
ROLES: dict[str, frozenset[Permission]] = {
    "viewer": VIEWER,
    "editor": EDITOR,
    "reviewer": REVIEWER,
    "admin": ADMIN,
}
# The sensitivity tags of Attributes; reading a tagged value needs `<tag>.read`.
CLEARANCES = ("pii", "confidential", "restricted")


def clearance(tag: str) -> str:
    """The permission that reads values tagged `tag`."""
    return f"{tag}.read"


class Who(StrEnum):
    """Who may call an endpoint at all."""

    ANYONE = "anyone"  # no credential needed
    CALLER = "caller"  # any live credential; the answer is about the caller (its sessions, Domains)
    WEB_SESSION = "web_session"  # a live web session (the web app's cookie, or its token as Bearer)
    ADMIN = "admin"  # the admin principal
    GRANT = "grant"  # a grant in the Domain the request names, holding the needs
    MEMORY = "memory"  # memory capabilities on the scope the command or read names


class Scope(StrEnum):
    """Which Kinds of the Domain a call reads or changes, as the policy point checks them."""

    NONE = "none"  # no Record, Link or value: names and heads only
    READABLE = "readable"  # the Kinds it names or shows are read through the caller's readable view
    KIND = "kind"  # the Kind a request field names (`kind`): hidden answers as unknown
    EVERY_KIND = "every_kind"  # every Kind at once (changes, webhooks, schema-wide): no narrowed grant
    TARGET = "target"  # the Kinds of the stored thing the request names: hidden answers as absent


class Delegation(StrEnum):
    """What a call hands out, which must lie within what the caller holds itself."""

    GRANT = "grant"  # a role on branch patterns, maybe narrowed to Kinds (the body of a new grant)
    CLEARANCES = "clearances"  # sensitivity clearances (a webhook's `clearances`)


class Target(StrEnum):
    """The stored thing a request names, looked up by the policy point before the handler runs."""

    NONE = "none"
    BRANCH = "branch"  # the path's branch (its creator may delete it)
    TAG = "tag"  # the path's tag and the branch of its Revision
    REVISION = "revision"  # the Revision `body.revision` names and its branch (a new tag)
    PROPOSAL = "proposal"  # the path's Proposal: its source, target, author and Kinds
    CANDIDATE = "candidate"  # the path's reconciliation candidate: its branch, Kind and Records
    MERGE = "merge"  # a candidate about to be merged: its Kind and every Relation whose Links move
    OPERATION = "operation"  # the path's Operation: its permissions and the Kinds it edits
    ERASURE = "erasure"  # the Records or subject an erasure names: their Kinds
    GRANT = "grant"  # the grant a request withdraws (it must be one the caller could make)
    SCHEMA_CHANGE = "schema_change"  # the path's schema change job and its branch


@dataclass(frozen=True)
class Need:
    """A permission on a branch. `on` names the branch: `branch` is the request's branch (its
    `branch` parameter or body member), another request field is named by its path (`body.source`);
    an empty value is the Domain's default branch, and so is `default`. It may also be the branch of
    the target (`proposal.target`, `proposal.source`, `tag`, `revision`, `candidate`,
    `schema_change`). `when` limits it to requests where one of those fields is set (a branch
    created protected needs domain.settings too)."""

    permission: Permission
    on: str = "branch"
    when: tuple[str, ...] = ()


class Owner(StrEnum):
    """Who may act in place of the first need, and then needs `Policy.owner_needs` instead."""

    CREATOR = "creator"  # the principal that created the branch
    AUTHOR = "author"  # the author of the Proposal
    STEWARD = "steward"  # a steward of the candidate's Kind
    SESSION = "session"  # the principal whose session it is


@dataclass(frozen=True)
class Policy:
    """An endpoint's policy (see the module docstring)."""

    who: Who
    needs: tuple[Need, ...] = ()
    scope: Scope = Scope.NONE
    target: Target = Target.NONE
    kind: str = ""  # Scope.KIND: the request field naming the Kind (empty value: none named)
    owner: Owner | None = None
    owner_needs: tuple[Need, ...] = ()
    delegates: Delegation | None = None
    # The status of a caller without a grant in the Domain: 404, as for an unknown Domain; or 403
    # (the event stream's reconnection after a grant was withdrawn), then for a Domain that does not
    # exist too, so that a caller cannot tell the two apart.
    ungranted: int = 404
    capabilities: tuple[str, ...] = ()  # Who.MEMORY: memory_read, memory_write, memory_checkpoint

    def __post_init__(self) -> None:
        if self.who is Who.GRANT and self.scope is Scope.KIND and not self.kind:
            raise TypeError("Scope.KIND names the request field of the Kind (kind=...)")
        if self.scope is Scope.TARGET and self.target is Target.NONE:
            raise TypeError("Scope.TARGET needs a target")
        if self.owner is not None and not self.needs:
            raise TypeError("an owner acts in place of a need: declare the need")
        if self.who is not Who.GRANT and (self.needs or self.scope is not Scope.NONE or self.delegates):
            raise TypeError("needs and scopes are about grants in a Domain (Who.GRANT)")
        if self.who is Who.MEMORY and not self.capabilities:
            raise TypeError("a memory endpoint names its capabilities")

    def document(self) -> dict[str, object]:
        """The policy as data (`x-lorebase-policy` in /openapi.json): what a client can check."""
        document: dict[str, object] = {"who": self.who.value}
        if self.needs:
            document["needs"] = [_need_document(n) for n in self.needs]
        if self.scope is not Scope.NONE:
            document["scope"] = self.scope.value
        if self.target is not Target.NONE:
            document["target"] = self.target.value
        if self.kind:
            document["kind"] = self.kind
        if self.owner is not None:
            document["owner"] = self.owner.value
            document["owner_needs"] = [_need_document(n) for n in self.owner_needs]
        if self.delegates is not None:
            document["delegates"] = self.delegates.value
        if self.capabilities:
            document["capabilities"] = list(self.capabilities)
        return document

    def describe(self) -> str:
        """What the caller needs, in one sentence of the reference (docs/rest-reference.md)."""
        if self.who is Who.ANYONE:
            return "No credential."
        if self.who is Who.CALLER:
            return "Any live credential; the answer is about the caller."
        if self.who is Who.WEB_SESSION:
            return "A live web session: its cookie, or `Authorization: Bearer <token>` (an API key is 401)."
        if self.who is Who.ADMIN:
            return "The admin principal."
        if self.who is Who.MEMORY:
            return f"Memory capabilities on the scope: {', '.join(self.capabilities)}."
        needs = [_need(n) for n in self.needs] or ["a grant in the Domain"]
        text = "Needs " + ", ".join(needs)
        if self.owner is not None:
            instead = ", ".join(_need(n) for n in self.owner_needs) or "nothing more"
            text += f"; its {self.owner.value} needs {instead} instead"
        text += _SCOPES[self.scope]
        if self.delegates is not None:
            text += f" It hands out no more than the caller holds ({_DELEGATES[self.delegates]})."
        return text


def _need_document(need: Need) -> dict[str, object]:
    document: dict[str, object] = {"permission": need.permission.value, "on": need.on}
    if need.when:
        document["when"] = list(need.when)
    return document


def _need(need: Need) -> str:
    where = "the default branch" if need.on in ("", "default") else f"`{need.on}`"
    text = f"{need.permission.value} on {where}"
    if need.when:
        text += f" when {' or '.join(f'`{w}`' for w in need.when)} is given"
    return text


_SCOPES = {
    Scope.NONE: ".",
    Scope.READABLE: "; it names and shows only the Kinds and values the caller may read (a hidden Kind "
    "is an unknown one).",
    Scope.KIND: "; a Kind the caller may not read answers as unknown.",
    Scope.EVERY_KIND: "; a grant narrowed to Kinds is not enough.",
    Scope.TARGET: "; what it names must be one the caller may read (its branch and Kinds), else it answers as absent.",
}
_DELEGATES = {
    Delegation.GRANT: "role, branches and Kinds",
    Delegation.CLEARANCES: "clearances",
}


def anyone() -> Policy:
    return Policy(Who.ANYONE)


def caller() -> Policy:
    return Policy(Who.CALLER)


def web_session() -> Policy:
    return Policy(Who.WEB_SESSION)


def admin_only() -> Policy:
    return Policy(Who.ADMIN)


def memory(*capabilities: str) -> Policy:
    return Policy(Who.MEMORY, capabilities=capabilities)


def grant(
    *needs: Need | Permission,
    scope: Scope = Scope.NONE,
    target: Target = Target.NONE,
    kind: str = "",
    owner: Owner | None = None,
    owner_needs: tuple[Need | Permission, ...] = (),
    delegates: Delegation | None = None,
    ungranted: int = 404,
) -> Policy:
    """A policy of a principal with a grant in the Domain; a bare Permission is needed on the
    request's `branch` (or the default branch)."""
    return Policy(
        Who.GRANT,
        tuple(_as_need(n) for n in needs),
        scope,
        target,
        kind,
        owner,
        tuple(_as_need(n) for n in owner_needs),
        delegates,
        ungranted,
    )


def _as_need(need: Need | Permission) -> Need:
    return need if isinstance(need, Need) else Need(need)


__all__ = [
    "ADMIN",
    "CLEARANCES",
    "Delegation",
    "EDITOR",
    "REVIEWER",
    "ROLES",
    "VIEWER",
    "Need",
    "Owner",
    "Permission",
    "Policy",
    "Scope",
    "Target",
    "Who",
    "admin_only",
    "anyone",
    "caller",
    "clearance",
    "grant",
    "memory",
    "web_session",
]

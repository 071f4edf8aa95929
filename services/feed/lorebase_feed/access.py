"""Who may follow a branch: keeper decides, from the endpoint's policy (Keeper.Authorize: data.read on
the branch through a grant that reads every Kind, since events list the changed keys of every Kind,
like history reads); the feed asks it on every request and again every
agents.feed.reauthorize_interval_s while an event stream is open."""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import Message

from lorebase.clients import KeeperClient
from lorebase.problems import Problem


@dataclass(frozen=True)
class FeedAccess:
    principal: str
    domain: str
    domain_id: int
    branch: str
    kinds: tuple[str, ...]


async def authorize(keeper: KeeperClient, *, credential: str, endpoint: str, request: Message) -> FeedAccess:
    """The caller's access to a branch's changes, as keeper decides it for `endpoint` (changes or
    events) and the call `request`."""
    if not credential:
        raise Problem(401, "unauthenticated", "send a credential as 'Authorization: Bearer <key>'")
    document = (await keeper.authorize(credential=credential, endpoint=endpoint, request=request)).json()
    return FeedAccess(
        document["principal"],
        document["domain"],
        int(document["domain_id"]),
        document["branch"],
        tuple(document["kinds"]),
    )


def parse_kinds(value: str, access: FeedAccess) -> frozenset[str]:
    """`kinds=Supplier,Part`: Kinds of the schema (empty: every Kind)."""
    kinds = [k.strip() for k in value.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in access.kinds]
    if unknown:
        raise Problem(
            400,
            "invalid-parameter",
            f"kinds names unknown Kinds {unknown}; the schema has {list(access.kinds)}",
            parameter="kinds",
        )
    return frozenset(kinds)


def matches(event: dict[str, object], kinds: frozenset[str]) -> bool:
    """Whether a revision.committed event changed one of `kinds` (any when empty)."""
    if not kinds:
        return True
    changed = event.get("kinds")
    return isinstance(changed, dict) and any(kind in changed for kind in kinds)


__all__ = ["FeedAccess", "authorize", "matches", "parse_kinds"]

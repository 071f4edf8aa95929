"""The checks of the policy point (lorebase.contract.policy) that need no stored state: whether an
Access holds a permission on a branch, what a caller may hand out, and whether a grant narrowed to
Kinds may make a call that reaches every Kind.

What a call names (a Proposal, a tag, a candidate...) is looked up by keeper's dispatcher
(lorebase_keeper.api.dispatch), which asks these questions of it; no handler asks them itself.

Delegation: nobody hands out more than they hold. A new grant (role, branch patterns, Kinds) must lie
within one grant of the caller for each of its branch patterns: a role whose permissions include
the new role's, a pattern that covers the new one, and Kinds that include the new ones (a grant
narrowed to Kinds cannot give an unnarrowed one). The admin principal holds everything. A
webhook's clearances must be clearances the caller holds itself.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence

from lorebase.contract.policy import CLEARANCES, ROLES, clearance
from lorebase.problems import Problem
from lorebase_keeper.access.auth import Access

_GLOB = frozenset("*?[")


def covers(pattern: str, narrower: str) -> bool:
    """Whether every branch `narrower` matches is matched by `pattern` (conservative: a pattern
    the rule cannot prove narrower is not covered)."""
    if pattern == narrower or pattern == "*":
        return True
    if not _GLOB & set(narrower):
        return fnmatch.fnmatchcase(narrower, pattern)
    prefix = pattern[:-1]
    return pattern.endswith("*") and not _GLOB & set(prefix) and narrower.startswith(prefix)


def within(access: Access, role: str, branches: Sequence[str], kinds: Iterable[str] | None) -> bool:
    """Whether a grant of `role` on `branches`, narrowed to `kinds` (None: every Kind), lies within
    what `access` holds (see the module docstring)."""
    if access.principal.is_admin:
        return True
    wanted = ROLES.get(role)
    if wanted is None:
        return False
    narrowed = None if kinds is None else set(kinds)
    for pattern in branches:
        if not any(
            wanted <= ROLES.get(g.role, frozenset())
            and any(covers(held, pattern) for held in g.branches)
            and (g.kinds is None or (narrowed is not None and narrowed <= set(g.kinds)))
            for g in access.grants
        ):
            return False
    return True


def require_within(access: Access, role: str, branches: Sequence[str], kinds: Iterable[str] | None) -> None:
    """403 when the grant described exceeds what the caller holds."""
    if not within(access, role, branches, kinds):
        raise Problem(
            403,
            "forbidden",
            f"{access.principal.id} may not grant more than it holds: a grant of {role!r} on those "
            "branches and Kinds needs a grant of yours with at least that role on branches and Kinds "
            "that include them",
            permission="domain.settings",
        )


def require_clearances(access: Access, branch: str, tags: Iterable[str]) -> None:
    """403 naming the first clearance the caller would hand out without holding it (a name that is
    no sensitivity tag is the service's to refuse, 422)."""
    held = access.permissions(branch)
    missing = [clearance(tag) for tag in tags if tag in CLEARANCES and clearance(tag) not in held]
    if missing:
        raise Problem(
            403,
            "forbidden",
            f"{access.principal.id} lacks {', '.join(missing)} on the Domain; clearances handed out "
            "need them",
            permission=missing[0],
        )


def require_every_kind(access: Access, branch: str) -> None:
    """403 for a caller whose grants on `branch` are all narrowed to Kinds."""
    if access.narrowed(branch):
        raise Problem(
            403,
            "forbidden",
            f"{access.principal.id} holds only grants narrowed to Kinds on branch {branch!r}; this "
            "call reaches every Kind and needs a grant that reads every Kind",
            permission="data.read",
            branch=branch,
        )


__all__ = ["covers", "require_clearances", "require_every_kind", "require_within", "within"]

"""What a Revision reference names: the one place where `at`, `since`, `from` and `to` are read.

A reference is a Revision id (64 hex digits), a unique prefix of one (at least 12 hex digits) on
the history being read, or a tag name (lorebase_store.tags). An id or a prefix wins over a tag of
the same spelling, so a tag can never hide a Revision. Keeper's read point (every read, history,
diff, context pack and query) and the feed's changes both call `revision_named`; they turn what it
finds into their own problems.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lorebase.names import TAG
from lorebase_store.revisions import BranchChain, RevisionRow
from lorebase_store.store import Txn

REVISION_ID = re.compile(r"[0-9a-f]{12,64}")


@dataclass(frozen=True)
class Named:
    """What a reference names: a Revision (None: nothing), whether a prefix named several, whether
    the reference could be a name at all, and the tag it went through."""

    revision: RevisionRow | None
    ambiguous: bool = False
    malformed: bool = False
    tag: str | None = None


async def revision_named(txn: Txn, domain_id: int, ref: str, chain: BranchChain) -> Named:
    """The Revision `ref` names, with prefixes matched on `chain` (a Revision off `chain` is
    returned too: the caller says it is not on the history it reads)."""
    ref = ref.strip()
    lowered = ref.lower()
    if REVISION_ID.fullmatch(lowered):
        if len(lowered) == 64:
            found = await txn.get_revision(domain_id, lowered)
            if found is not None:
                return Named(found)
        else:
            matches = [
                r
                for r in await txn.revisions_with_prefix(domain_id, lowered, limit=50)
                if chain.holds(r.branch, r.generation)
            ]
            if len(matches) > 1:
                return Named(None, ambiguous=True)
            if matches:
                return Named(matches[0])
    if not TAG.valid(ref):
        return Named(None, malformed=not REVISION_ID.fullmatch(lowered))
    tag = await txn.get_tag(domain_id, ref)
    if tag is None:
        return Named(None)
    return Named(await txn.get_revision(domain_id, tag.revision), tag=tag.name)


__all__ = ["REVISION_ID", "Named", "revision_named"]

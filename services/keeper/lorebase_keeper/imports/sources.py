"""Source syncs (POST /sources/{source}/sync): a Source delivers its Records in one Revision.

A sync is a load (load.py) with origin source_sync and ref the Source's name; its records must be
of the Kinds the Source declares. In the same transaction it records the sync (number, time, mode,
Revision, counts) and the keys it listed, which coverage reads: `full` (the default) says the listing
is everything the Source has now, so a key it delivered before and left out is unseen;
`incremental` says the listing is only what changed, so it makes nothing unseen.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from lorebase.contract.writes import SyncBatch
from lorebase.problems import Problem
from lorebase.schema import Source
from lorebase_keeper.access import Access
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.imports.load import Load, load
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.writes import BranchView, Outcome
from lorebase_store import CommitRows


def visible_source(access: Access, domain: Domain, branch: str, name: str) -> Source:
    """The Source `name` if the caller may read one of its Kinds; else 404 like an unknown one."""
    source = domain.schema.sources.get(name)
    readable = set(readable_view(access, domain, branch).kinds)
    if source is None or not readable.intersection(source.kinds):
        raise Problem(404, "not-found", f"unknown Source {name!r}; GET /schema lists the Sources")
    return source


async def sync_source(
    rt: Runtime, access: Access, domain: Domain, name: str, batch: SyncBatch, header_key: str
) -> Outcome:
    """POST /sources/{name}/sync: load what the Source delivered and record the sync (full or
    incremental, default full) with the keys it listed."""
    branch = check_branch_name(batch.branch or domain.default_branch)
    source = visible_source(access, domain, branch, name)
    mode = batch.mode or "full"

    async def finish(
        view: BranchView, rows: CommitRows, records: list[Any], answer: dict[str, Any], at: datetime
    ) -> dict[str, Any]:
        number = await view.next_source_sync(source.name)
        rows.source_syncs.append(
            {
                "source": source.name,
                "number": number,
                "synced_at": at,
                "revision": answer["revision"],
                "mode": mode,
                "principal": access.principal.id,
                "counts": {"received": answer["received"], "changed": answer["changed"]},
                "keys": [(kind.name, key) for kind, key, _, _ in records],
            }
        )
        return {"sync": number, "mode": mode}

    spec = Load(
        "source_sync",
        "source_sync",
        source.name,
        declared=source.kinds,
        finish=finish,
        digest={"source": source.name},
    )
    return await load(rt, access, domain, batch, header_key, spec)


__all__ = ["sync_source", "visible_source"]

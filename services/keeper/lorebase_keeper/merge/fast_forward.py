"""A fast-forward: the target has not moved since the merge base, so it moves onto the source's head.

Its history then runs through the source's segment (lineage names the source Revision itself), the
materialised Records and Links of a copy branch take the source's last state of each, and the
target's followers get one `revision.committed` event per Revision it now holds.
"""

from __future__ import annotations

from typing import Any

from lorebase.ids import iso
from lorebase_keeper.domains import Domain
from lorebase_keeper.merge.attempt import MergeRequest, MergeResult, add_task_events
from lorebase_keeper.merge.base import Side, prefetch
from lorebase_keeper.writes import open_view
from lorebase_store import BranchChain, BranchRow, CommitRows, HistoryRow, Txn


async def fast_forward(
    txn: Txn, request: MergeRequest, source: BranchRow, s_chain: BranchChain, target: BranchRow, s_side: Side
) -> MergeResult:
    """Move the target onto the source's head: its history runs through the source's Revisions."""
    domain = request.domain
    rows = CommitRows(domain.id, target.name)
    if target.mode != "overlay":
        view = await open_view(txn, target)
        await prefetch(view, s_side.rows)
        for (entity, name, key), changes in s_side.rows.items():
            last = changes[-1]
            if entity == "record":
                stored = (await view.get_records(name, [key])).get(key)
                if last.change == "deleted":
                    if stored is not None:
                        rows.deleted_records.append({"kind": name, "key": key})
                    continue
                created = next((r.revision for r in reversed(changes) if r.change == "created"), None)
                rows.records.append(
                    {
                        "kind": name,
                        "key": key,
                        "values": last.after,
                        "provenance": last.provenance,
                        "created_revision": created or (stored.created_revision if stored else last.revision),
                        "updated_revision": last.revision,
                        "new": stored is None,
                    }
                )
            else:
                from_key, _, to_key = key.partition("->")
                stored_link = (await view.get_links(name, [(from_key, to_key)])).get((from_key, to_key))
                if last.change == "deleted":
                    if stored_link is not None:
                        rows.deleted_links.append({"relation": name, "from_key": from_key, "to_key": to_key})
                    continue
                rows.links.append(
                    {
                        "relation": name,
                        "from_key": from_key,
                        "to_key": to_key,
                        "values": last.after,
                        "provenance": last.provenance,
                        "revision": last.revision,
                        "new": stored_link is None,
                    }
                )
    # The target's followers see each Revision it now holds.
    by_revision: dict[str, list[HistoryRow]] = {}
    for changes in s_side.rows.values():
        for row in changes:
            by_revision.setdefault(row.revision, []).append(row)
    revisions = await txn.get_revisions(domain.id, list(by_revision))
    for revision in sorted(revisions.values(), key=lambda r: r.generation):
        rows.events.append(
            {
                "type": "revision.committed",
                "revision": revision.id,
                "event": _revision_event(domain, target.name, revision, by_revision[revision.id]),
                "created_at": iso(request.at),
            }
        )
    head_generation = source.generation
    add_task_events(rows, request, source.head, head_generation, fast_forward=True)
    rows.heads.append({"head": source.head, "generation": head_generation})
    await txn.write_commit_rows(rows)
    chain = [[target.name, head_generation + 1, None], *s_chain.upto(head_generation).document()]
    await txn.update_branch(domain.id, target.name, chain=chain)
    await txn.set_last_merge(
        domain.id, source.name, target.name, source.generation, head_generation, request.at
    )
    return MergeResult("fast_forward", source.head, head_generation, [], 0, len(s_side.rows))


def _revision_event(domain: Domain, branch: str, revision: Any, changes: list[HistoryRow]) -> dict[str, Any]:
    kinds: dict[str, int] = {}
    relations: dict[str, int] = {}
    keys: dict[str, list[str]] = {}
    for row in changes:
        if row.entity == "record":
            kinds[row.name] = kinds.get(row.name, 0) + 1
            keys.setdefault(row.name, []).append(row.key)
        else:
            relations[row.name] = relations.get(row.name, 0) + 1
    limit = domain.settings.model.agents.feed.changed_keys_max
    truncated = sum(len(v) for v in keys.values()) > limit
    if truncated:
        budget = limit
        capped: dict[str, list[str]] = {}
        for kind, kind_keys in keys.items():
            capped[kind] = kind_keys[: max(budget, 0)]
            budget -= len(capped[kind])
        keys = {k: v for k, v in capped.items() if v}
    return {
        "type": "revision.committed",
        "domain": domain.name,
        "branch": branch,
        "revision": revision.id,
        "parents": revision.parents,
        "generation": revision.generation,
        "author": revision.author,
        "message": revision.message,
        "origin": revision.origin,
        "stats": revision.stats,
        "created_at": iso(revision.created_at),
        "kinds": kinds,
        "relations": relations,
        "schema_changed": revision.origin.get("type") == "schema",  # a change set it moves onto
        "keys": keys,
        "keys_truncated": truncated,
    }


__all__ = ["fast_forward"]

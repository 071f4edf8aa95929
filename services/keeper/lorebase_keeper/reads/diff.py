"""GET /diff?from=&to=: what changed between two Revisions of one first-parent history.

Records and Links added, removed and changed (with the Attributes that changed and their values
before and after), computed from the history rows between the two Revisions and the snapshots at
each end; only what the caller may read is listed.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any

from lorebase.contract.reads import Diff
from lorebase.problems import Problem
from lorebase_keeper.access import Access
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.domains import Domain
from lorebase_keeper.reads.snapshots import read_point
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn


def _side(values: dict[str, Any] | None, readable: AbstractSet[str]) -> dict[str, Any] | None:
    return None if values is None else {k: v for k, v in values.items() if k in readable}


async def diff(rt: Runtime, access: Access, domain: Domain, request: Diff) -> dict[str, Any]:
    branch, older, newer = request.branch or None, request.from_revision, request.to_revision
    if not older or not newer:
        raise Problem(
            400, "invalid-parameter", "from and to are both required: two Revision ids of the branch"
        )
    max_entities = domain.settings.model.read.diff.max_changes

    async def read(txn: Txn) -> dict[str, Any]:
        start = await read_point(txn, domain, branch, older)
        end = await read_point(txn, domain, branch, newer)
        assert start.at is not None and end.at is not None
        if _position(start.chain, start.at) > _position(end.chain, end.at):
            raise Problem(
                400, "invalid-parameter", "from must not come after to on the branch's history; swap them"
            )
        view = readable_view(access, domain, end.branch.name)
        kinds, relations = view.kinds, view.relations
        touched = await txn.touched_between(domain.id, end.chain, start.at, end.at)
        if len(touched) > max_entities:
            raise Problem(
                422,
                "diff-too-large",
                f"{len(touched)} Records and Links changed; at most {max_entities} (read.diff.max_changes): "
                "diff nearer Revisions",
            )
        records: dict[str, list[dict[str, Any]]] = {"added": [], "removed": [], "changed": []}
        links: dict[str, list[dict[str, Any]]] = {"added": [], "removed": [], "changed": []}
        groups: dict[tuple[str, str], list[str]] = {}
        for entity, name, key in touched:
            visible = name in kinds if entity == "record" else name in relations
            if visible:
                groups.setdefault((entity, name), []).append(key)
        for (entity, name), keys in sorted(groups.items()):
            before = {
                r.key: r.after
                for r in await txn.snapshot_entities(domain.id, start.chain, start.at, entity, name, keys)
            }
            after = {
                r.key: r.after
                for r in await txn.snapshot_entities(domain.id, end.chain, end.at, entity, name, keys)
            }
            readable = view.cleared(name)
            out = records if entity == "record" else links
            for key in keys:
                old, new = before.get(key), after.get(key)
                ref = f"{name}/{key}"
                if old is None and new is not None:
                    out["added"].append({"ref": ref, "values": _side(new, readable)})
                elif old is not None and new is None:
                    out["removed"].append({"ref": ref, "values": _side(old, readable)})
                elif old is not None and new is not None and old != new:
                    changed = sorted(
                        a for a in set(old) | set(new) if old.get(a) != new.get(a) and a in readable
                    )
                    if changed:
                        out["changed"].append(
                            {
                                "ref": ref,
                                "attributes": changed,
                                "before": {a: old.get(a) for a in changed},
                                "after": {a: new.get(a) for a in changed},
                            }
                        )
        return {
            "domain": domain.name,
            "branch": end.branch.name,
            "from": start.revision,
            "to": end.revision,
            "revision": end.revision,
            "records": records,
            "links": links,
        }

    return await rt.db.read("diff", read)


def _position(chain: Any, at: tuple[str, int]) -> int:
    """Order on a first-parent history: generations only grow along it."""
    return at[1]


__all__ = ["diff"]

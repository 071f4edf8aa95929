"""What a change set answers: its document (`answer_document`, a dry run's and, completed, a
commit's), what else it reaches (`schema_touches`: Operations, lenses, grants, webhooks), and its
refusal when Records or Links would not fit the new schema (`refused`, 422)."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

from lorebase.problems import Problem
from lorebase.schema.changes import Plan
from lorebase_keeper.domains import Domain
from lorebase_keeper.schema_changes.staged import Staged
from lorebase_store import Txn


def refused(staged: Staged) -> Problem:
    """422: the Records and Links that would not fit the new schema; nothing changed."""
    violations, count = staged.violations, staged.violation_count
    first = "; ".join(f"{v['path']}: {v['message']}" for v in violations[:3])
    more = count - 3
    return Problem(
        422,
        "schema-migration-failed",
        f"{count} Records or Links would not fit the new schema, so "
        f"nothing changed: {first}{f' (and {more} more)' if more > 0 else ''}. Fix them first, "
        "give a backfill or a map, or say on_invalid: clear",
        records=sorted({v["record"] for v in violations if "record" in v}),
        links=sorted({v["link"] for v in violations if "link" in v}),
        violations=violations,
        violation_count=count,
    )


async def answer_document(
    domain: Domain,
    branch: str,
    plan: Plan,
    new_digest: str,
    staged: Staged,
    touches: dict[str, list[str]],
) -> dict[str, Any]:
    writes = staged.writes()
    return {
        "status": "dry_run",
        "branch": branch,
        "revision": None,
        "head": staged.head.revision,
        "schema_version": new_digest,
        "previous_schema_version": domain.schema_digest,
        "valid": staged.violation_count == 0,
        "changes": plan.summary,
        "migrated": staged.migrated(),
        "violations": staged.violations,
        "violation_count": staged.violation_count,
        "touches": touches,
        "replayed": False,
        "writes": writes,
        "protection": plan.protection,
        "cleared": staged.cleared,
    }


async def schema_touches(
    txn: Txn, domain: Domain, plan: Plan, branch: str
) -> tuple[dict[str, list[str]], list[tuple[str, list[str]]]]:
    """What else the change set reaches: the Operations and lenses it rewrote (and those the old
    schema had over a removed Kind or Relation), grants narrowed to a removed or renamed Kind, and
    the webhooks of the branch (they see its Revision, `schema_changed: true`). Second, the grants
    narrowed to a renamed Kind with the Kinds they reach once it commits: the new name is added
    beside the old one (grants are Domain-wide; other branches may still use the old name)."""
    removed = set(plan.removed_kinds)
    operations = set(plan.touches.get("operations", []))
    lenses = set(plan.touches.get("lenses", []))
    for name, operation in domain.schema.operations.items():
        if any(e.kind in removed or e.relation in plan.removed_relations for e in operation.edits):
            operations.add(name)
    for name, lens in domain.schema.lenses.items():
        if removed & set(lens.kinds) or set(plan.removed_relations) & set(lens.relations):
            lenses.add(name)
    grants: list[str] = []
    widened: list[tuple[str, list[str]]] = []
    for grant in await txn.grants_in(domain.id):
        if not grant.kinds:
            continue
        added = [plan.renamed_kinds[k] for k in grant.kinds if k in plan.renamed_kinds]
        added = [k for k in added if k not in grant.kinds]
        if added:
            widened.append((grant.id, [*grant.kinds, *added]))
        if added or removed & set(grant.kinds):
            grants.append(grant.id)
    webhooks = [
        w.id
        for w in await txn.list_webhooks(domain.id)
        if any(fnmatchcase(branch, pattern) for pattern in w.branches)
    ]
    document = {
        "operations": sorted(operations),
        "lenses": sorted(lenses),
        "grants": sorted(grants),
        "webhooks": sorted(webhooks),
    }
    return document, widened

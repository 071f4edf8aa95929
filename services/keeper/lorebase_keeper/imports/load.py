"""Loads: Records and Links written in one Revision, validated like Operations.

Two writes load data: an import (origin import, ref its `source` text; origin extraction when its
records carry extraction evidence, evidence.py) and a source sync (origin source_sync, ref the
Source's name; sources.py). Both take the same body (lorebase.contract.writes:
an `ImportBatch` or a `SyncBatch`, whose shapes the model has checked) and run through `load`; a
`Load` says what differs: the origin, the Kinds records may have, and what the write adds to its
commit and its answer. Here each record and link is checked against the schema.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec

from lorebase.contract.writes import ImportBatch
from lorebase.contract.writes import Load as Batch
from lorebase.ids import iso, utc_now
from lorebase.problems import Problem, invalid
from lorebase.schema import canonical_record_key, validator
from lorebase_keeper.access import Access
from lorebase_keeper.access import readable as readable_view
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.imports.evidence import collect
from lorebase_keeper.runtime import Runtime
from lorebase_keeper.writes import (
    BranchView,
    ChangeSet,
    Head,
    Origin,
    Outcome,
    check_expected_head,
    idempotency_key,
    plan_commit,
    planner_statistics,
    replay,
    request_digest,
)
from lorebase_store import BranchRow, CommitRows

# A load's finishing step, inside the commit transaction: (view, rows, records, answer, at) ->
# members to add to the answer.
Finish = Callable[[BranchView, CommitRows, list[Any], dict[str, Any], datetime], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Load:
    """What one kind of load is: its name (audit action), origin and rules."""

    action: str  # import | source_sync
    origin: str  # the origin type of its Revision
    ref: str  # the origin ref: the import's source, the Source's name
    declared: tuple[str, ...] | None = None  # the Kinds its records may have (None: any)
    finish: Finish | None = None
    digest: dict[str, Any] = field(default_factory=dict)  # what else tells two requests apart


def _prepare(
    domain: Domain, batch: Batch, readable: set[str], load: Load
) -> tuple[list[Any], list[Any], list[dict[str, Any]]]:
    """Canonical records and links, or every issue found, by path."""
    issues: list[dict[str, Any]] = []
    records: list[tuple[Any, str, dict[str, Any], str]] = []
    kinds = domain.schema.kinds
    for index, item in enumerate(batch.records or ()):
        path = f"records[{index}]"
        kind = kinds.get(item.kind)
        if kind is None or kind.name not in readable:
            issues.append(
                {"path": f"{path}.kind", "rule": "kind.unknown", "message": f"unknown Kind {item.kind!r}"}
            )
            continue
        if load.declared is not None and kind.name not in load.declared:
            issues.append(
                {
                    "path": f"{path}.kind",
                    "rule": "source.kind",
                    "message": f"Source {load.ref} does not declare Kind {kind.name} "
                    f"(it declares {', '.join(load.declared)}); declare it in the schema's sources",
                }
            )
            continue
        values, value_issues = validator(kind.attributes, partial=True).check(item.values, path, ".values")
        if value_issues:
            issues += [{"path": i.path, "rule": i.rule, "message": i.message} for i in value_issues]
        missing = [k for k in kind.key if values.get(k) in (None, "")]
        if missing:
            issues.append(
                {
                    "path": f"{path}.values.{missing[0]}",
                    "rule": "record.key",
                    "message": f"{missing[0]} is the key of {kind.name}; give it a value",
                }
            )
            continue
        if not value_issues:
            records.append((kind, canonical_record_key(kind, values), values, path))
    links: list[tuple[Any, str, str, dict[str, Any], str]] = []
    for index, link in enumerate(batch.links or ()):
        path = f"links[{index}]"
        named = domain.schema.relations.get(link.relation)
        if named is None or named.from_kind not in readable or named.to_kind not in readable:
            issues.append(
                {
                    "path": f"{path}.relation",
                    "rule": "relation.unknown",
                    "message": f"unknown Relation {link.relation!r}",
                }
            )
            continue
        raw_values = link.values or {}
        values, value_issues = validator(named.attributes, partial=True).check(raw_values, path, ".values")
        if value_issues:
            issues += [{"path": i.path, "rule": i.rule, "message": i.message} for i in value_issues]
        if not value_issues:
            links.append((named, link.from_, link.to, values, path))
    return records, links, issues


async def run_import(
    rt: Runtime, access: Access, domain: Domain, batch: ImportBatch, header_key: str
) -> Outcome:
    """POST /imports: load Records and Links in one Revision of origin import (ref: its source)."""
    return await load(rt, access, domain, batch, header_key, Load("import", "import", batch.source or "api"))


async def load(
    rt: Runtime, access: Access, domain: Domain, batch: Batch, header_key: str, spec: Load
) -> Outcome:
    """Validate and commit a load: everything is checked before anything is written."""
    branch = check_branch_name(batch.branch or domain.default_branch)
    total = len(batch.records or ()) + len(batch.links or ())
    limit = domain.settings.model.keeper.imports.max_items
    if total > limit:
        raise Problem(
            413,
            "too-large",
            f"an import holds at most {limit} records and links (keeper.imports.max_items); split it",
        )
    readable = set(readable_view(access, domain, branch).kinds)
    records, links, issues = _prepare(domain, batch, readable, spec)
    if not issues:
        extracted, evidence_issues = collect(batch, records)
        issues += evidence_issues
    if issues:
        raise invalid(issues)
    key = idempotency_key(batch.idempotency_key, header_key)
    # The digest a receipt keeps: only a write with an idempotency key has one (it costs a walk of
    # the whole body).
    digest = "" if key is None else request_digest({spec.action: msgspec.to_builtins(batch), **spec.digest})
    principal = access.principal
    source = spec.ref
    message = batch.message or (
        f"Import from {source}" if spec.action == "import" else f"Sync of Source {source}"
    )
    at = utc_now()
    # An import with extraction evidence is an extraction (the seed's fourth origin; evidence.py).
    origin = Origin(
        "extraction" if extracted and spec.action == "import" else spec.origin, source, principal.id
    )
    expected = batch.expected_head
    vault = await rt.vault.writer(domain)

    async def work(view: BranchView, row: BranchRow, head: Head) -> tuple[Outcome, Head, CommitRows | None]:
        if key is not None:
            receipt = await view.get_receipt(principal.id, key)
            if receipt is not None:
                return replay(receipt, digest, key), head, None
        check_expected_head(expected, branch, head.revision)
        changes = ChangeSet(view, domain.schema, vault=vault)
        by_kind: dict[str, list[str]] = {}
        for kind, rkey, _, _ in records:
            by_kind.setdefault(kind.name, []).append(rkey)
        for kind_name, keys in by_kind.items():
            await changes.preload_records(kind_name, keys)
        by_relation: dict[str, list[tuple[str, str]]] = {}
        for relation, from_key, to_key, _, _ in links:
            by_relation.setdefault(relation.name, []).append((from_key, to_key))
        for relation_name, pairs in by_relation.items():
            await changes.preload_links(relation_name, pairs)
        for kind, rkey, values, path in records:
            changes.upsert_read_record(kind, rkey, values, path)
        for relation, from_key, to_key, values, path in links:
            await changes.upsert_link(relation, from_key, to_key, values, path)
        change_list = await changes.finish()
        if changes.issues:
            raise invalid(changes.issues)
        revision_id = None
        new_head = head
        # Its index entries may stay pending: the ANALYZE after it merges them (planner_statistics).
        rows = CommitRows(domain.id, branch, defer_index=rt.statistics is not None)
        if change_list:
            committed = plan_commit(
                rows,
                domain=domain.name,
                head=head,
                changes=change_list,
                author=principal.id,
                message=message,
                origin=origin,
                at=at,
                stored=changes.stored(),
                changed_keys_max=domain.settings.model.agents.feed.changed_keys_max,
                provenance_of=extracted.provenance_of() if extracted else None,
            )
            revision_id = committed.revision.id
            rows.extractions = extracted.rows(revision_id, principal.id, at)
            if vault is not None:
                rows.vault_entries = vault.rows()
            new_head = Head.of(committed.revision)
        counts = {
            "records": sum(1 for c in change_list if c.entity == "record"),
            "links": sum(1 for c in change_list if c.entity == "link"),
        }
        document: dict[str, Any] = {
            "status": "committed",
            "branch": branch,
            "source": source,
            "revision": revision_id,
            "head": new_head.revision,
            "received": {"records": len(records), "links": len(links)},
            "changed": counts,
            "replayed": False,
        }
        if spec.finish is not None:
            document.update(await spec.finish(view, rows, records, document, at))
        stamp = iso(at)
        if key is not None:
            rows.receipt(
                principal=principal.id,
                key=key,
                request_digest=digest,
                status=200,
                response=document,
                revision=revision_id,
                at=stamp,
            )
        rows.audit(
            principal=principal.id,
            action=spec.action,
            domain=domain.name,
            target=source,
            details={"branch": branch, "revision": revision_id, **counts},
            at=stamp,
        )
        return Outcome(200, document, revision_id, {}), new_head, rows

    outcome = await rt.committer.run(domain.id, branch, work, bulk=True, schema=domain.stored_digest)
    if len(records) + len(links) >= planner_statistics.ANALYZE_AFTER and outcome.revision and rt.statistics:
        rt.statistics.refresh_soon()
    return outcome


__all__ = ["Load", "load", "run_import"]

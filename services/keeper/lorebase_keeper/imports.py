"""Imports: Records and Links loaded in one Revision (origin import), validated like Operations."""

from __future__ import annotations

from typing import Any

from lorebase.ids import iso, utc_now
from lorebase.problems import Problem, invalid
from lorebase.schema import record_key, validate_values
from lorebase_keeper.auth import Access
from lorebase_keeper.branch_view import BranchView
from lorebase_keeper.changes import ChangeSet
from lorebase_keeper.commit import Head, Origin, plan_commit
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.outcome import Outcome, replay, request_digest
from lorebase_keeper.runtime import Runtime
from lorebase_store import BranchRow, CommitRows

IMPORT_MEMBERS = {"records", "links", "source", "message", "branch", "expected_head", "idempotency_key"}


def _prepare(
    domain: Domain, body: dict[str, Any], readable: set[str]
) -> tuple[list[Any], list[Any], list[dict[str, Any]]]:
    """Canonical records and links, or every issue found, by path."""
    issues: list[dict[str, Any]] = []
    records_in = body.get("records") or []
    links_in = body.get("links") or []
    if not isinstance(records_in, list) or not isinstance(links_in, list):
        raise Problem(422, "validation-failed", "records and links must be arrays")
    records: list[tuple[Any, str, dict[str, Any], str]] = []
    for index, item in enumerate(records_in):
        path = f"records[{index}]"
        if not isinstance(item, dict) or set(item) - {"kind", "values"}:
            issues.append(
                {
                    "path": path,
                    "rule": "import.shape",
                    "message": 'a record is {"kind": ..., "values": {...}}',
                }
            )
            continue
        kind = domain.schema.kinds.get(str(item.get("kind"))) if isinstance(item.get("kind"), str) else None
        if kind is None or kind.name not in readable:
            issues.append(
                {
                    "path": f"{path}.kind",
                    "rule": "kind.unknown",
                    "message": f"unknown Kind {item.get('kind')!r}",
                }
            )
            continue
        raw = item.get("values")
        if not isinstance(raw, dict):
            issues.append(
                {"path": f"{path}.values", "rule": "import.shape", "message": "values must be an object"}
            )
            continue
        values, value_issues = validate_values(kind.attributes, raw, path=f"{path}.values", partial=True)
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
            records.append((kind, record_key(kind, values), values, path))
    links: list[tuple[Any, str, str, dict[str, Any], str]] = []
    for index, item in enumerate(links_in):
        path = f"links[{index}]"
        if not isinstance(item, dict) or set(item) - {"relation", "from", "to", "values"}:
            issues.append(
                {
                    "path": path,
                    "rule": "import.shape",
                    "message": 'a link is {"relation": ..., "from": key, "to": key, "values": {...}}',
                }
            )
            continue
        named = (
            domain.schema.relations.get(str(item.get("relation")))
            if isinstance(item.get("relation"), str)
            else None
        )
        if named is None or named.from_kind not in readable or named.to_kind not in readable:
            issues.append(
                {
                    "path": f"{path}.relation",
                    "rule": "relation.unknown",
                    "message": f"unknown Relation {item.get('relation')!r}",
                }
            )
            continue
        ends = (item.get("from"), item.get("to"))
        if not all(isinstance(e, str) and e for e in ends):
            issues.append(
                {"path": path, "rule": "import.shape", "message": "from and to are Record keys (strings)"}
            )
            continue
        raw_values = item.get("values") or {}
        if not isinstance(raw_values, dict):
            issues.append(
                {"path": f"{path}.values", "rule": "import.shape", "message": "values must be an object"}
            )
            continue
        values, value_issues = validate_values(
            named.attributes, raw_values, path=f"{path}.values", partial=True
        )
        issues += [{"path": i.path, "rule": i.rule, "message": i.message} for i in value_issues]
        if not value_issues:
            links.append((named, str(ends[0]), str(ends[1]), values, path))
    return records, links, issues


async def run_import(
    rt: Runtime, access: Access, domain: Domain, body: dict[str, Any], header_key: str
) -> Outcome:
    unknown = sorted(set(body) - IMPORT_MEMBERS)
    if unknown:
        raise Problem(
            422,
            "validation-failed",
            f"unknown member(s) {', '.join(unknown)}; an import takes {', '.join(sorted(IMPORT_MEMBERS))}",
        )
    for member, kind, what in (
        ("records", list, "an array of records"),
        ("links", list, "an array of links"),
        ("source", str, "a string naming where the data came from"),
        ("message", str, "a string"),
        ("branch", str, "a branch name"),
        ("expected_head", str, "a Revision id"),
        ("idempotency_key", str, "a string of 1 to 255 characters"),
    ):
        if body.get(member) is not None and not isinstance(body[member], kind):
            raise Problem(
                422,
                "validation-failed",
                f"{member} must be {what}",
                issues=[{"path": member, "rule": "type", "message": f"{member} must be {what}"}],
            )
    branch = check_branch_name(body.get("branch") or domain.default_branch)
    access.require("domain.settings", branch)
    source = body.get("source") or "api"
    if not isinstance(source, str):
        raise Problem(422, "validation-failed", "source must be a string naming where the data came from")
    total = len(body.get("records") or []) + len(body.get("links") or [])
    limit = int(domain.settings.get("keeper.imports.max_items", 200000))
    if total > limit:
        raise Problem(
            413,
            "too-large",
            f"an import holds at most {limit} records and links (keeper.imports.max_items); split it",
        )
    readable = set(access.readable_kinds(branch, list(domain.schema.kinds)))
    records, links, issues = _prepare(domain, body, readable)
    if issues:
        raise invalid(issues)
    key = body.get("idempotency_key")
    key = header_key or None if key is None else key
    if key is not None and not 1 <= len(key) <= 255:
        raise Problem(422, "validation-failed", "an idempotency key has 1 to 255 characters")
    digest = request_digest({"import": body})
    principal = access.principal
    message = body.get("message") or f"Import from {source}"
    at = utc_now()
    origin = Origin("import", source, principal.id)
    expected = body.get("expected_head")

    async def work(view: BranchView, row: BranchRow, head: Head) -> tuple[Outcome, Head, CommitRows | None]:
        if key is not None:
            receipt = await view.get_receipt(principal.id, key)
            if receipt is not None:
                return replay(receipt, digest, key), head, None
        if expected is not None and expected != head.revision:
            raise Problem(
                409,
                "stale-head",
                f"branch {branch!r} moved: its head is {head.revision}, not the expected {expected}; "
                "read again and retry with the new head",
                branch=branch,
                head=head.revision,
                expected_head=expected,
            )
        changes = ChangeSet(view, domain.schema)
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
            await changes.upsert_record(kind, rkey, values, path)
        for relation, from_key, to_key, values, path in links:
            await changes.upsert_link(relation, from_key, to_key, values, path)
        change_list = await changes.finish()
        if changes.issues:
            raise invalid(changes.issues)
        revision_id = None
        new_head = head
        rows = CommitRows(domain.id, branch)
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
                changed_keys_max=int(domain.settings.get("agents.feed.changed_keys_max", 100)),
            )
            revision_id = committed.revision.id
            new_head = Head(revision_id, committed.revision.generation)
        counts = {
            "records": sum(1 for c in change_list if c.entity == "record"),
            "links": sum(1 for c in change_list if c.entity == "link"),
        }
        document = {
            "status": "committed",
            "branch": branch,
            "source": source,
            "revision": revision_id,
            "head": new_head.revision,
            "received": {"records": len(records), "links": len(links)},
            "changed": counts,
            "replayed": False,
        }
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
            action="import",
            domain=domain.name,
            target=source,
            details={"branch": branch, "revision": revision_id, **counts},
            at=stamp,
        )
        return Outcome(200, document, revision_id, {}), new_head, rows

    return await rt.committer.run(domain.id, branch, work)


__all__ = ["run_import"]

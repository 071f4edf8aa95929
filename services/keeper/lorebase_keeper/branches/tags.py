"""Tags: immutable names of Revisions (docs/branches.md#tags).

A tag names one Revision of the Domain, whichever branch committed it, and never moves: there is no
update, only delete (which frees the name). Reads resolve tags where they resolve Revision ids, in
lorebase_store.refs, so nothing here knows about `at`. Permissions are checked on the branch of the
tagged Revision (a deleted branch's archive name `name~ms` is checked as `name`): tag.create (editor)
and tag.delete (admin) to write, data.read to see a tag at all; the endpoints' policies say so and
keeper's dispatcher checks them before these run (a tag on a branch the caller may not read answers
like one that does not exist). Both writes are audited.
"""

from __future__ import annotations

from typing import Any

from lorebase.contract.tags import NewTag
from lorebase.cursors import decode_cursor, encode_cursor
from lorebase.ids import iso, utc_now
from lorebase.names import TAG
from lorebase.problems import Problem
from lorebase_keeper.access import Access
from lorebase_keeper.domains import Domain, branch_of_revision
from lorebase_keeper.runtime import Runtime
from lorebase_store import RevisionRow, TagRow, Txn

DEFAULT_LIMIT = 50


def describe_tag(domain: Domain, tag: TagRow, branch: str) -> dict[str, Any]:
    return {
        "domain": domain.name,
        "name": tag.name,
        "revision": tag.revision,
        "branch": branch,
        "created_by": tag.created_by,
        "created_at": iso(tag.created_at),
    }


async def revision_to_tag(txn: Txn, domain: Domain, ref: str) -> RevisionRow:
    """The Revision a new tag names: its id or a unique prefix (422 ambiguous, 404 unknown)."""
    ref = ref.lower()
    if len(ref) == 64:
        found = await txn.get_revision(domain.id, ref)
        matches = [] if found is None else [found]
    else:
        matches = await txn.revisions_with_prefix(domain.id, ref, limit=2)
    if len(matches) > 1:
        raise Problem(
            422,
            "validation-failed",
            f"revision {ref!r} is the prefix of more than one Revision; send more hex digits",
            issues=[{"path": "revision", "rule": "unique", "message": "a longer prefix or the whole id"}],
        )
    if not matches:
        raise Problem(
            404,
            "revision-not-found",
            f"no Revision {ref} in Domain {domain.name}; tag a Revision the Domain has "
            "(GET /branches/{branch} shows a head, GET .../changes lists Revisions)",
        )
    return matches[0]


async def create_tag(rt: Runtime, access: Access, domain: Domain, new: NewTag) -> dict[str, Any]:
    """POST /tags: the model has checked the name against the tag grammar and the revision's shape."""
    at = utc_now()
    by = access.principal.id

    async def txn_fn(txn: Txn) -> dict[str, Any]:
        revision = await revision_to_tag(txn, domain, new.revision)
        if not await txn.insert_tag(domain.id, new.name, revision.id, by=by, at=at):
            raise Problem(
                409,
                "already-exists",
                f"tag {new.name!r} exists already and tags never move; choose another name "
                "(or delete the tag first, with tag.delete)",
                tag=new.name,
            )
        await txn.audit(
            by, "tag.create", at, domain=domain.name, target=new.name, details={"revision": revision.id}
        )
        tag = await txn.get_tag(domain.id, new.name)
        assert tag is not None
        return describe_tag(domain, tag, revision.branch)

    return await rt.db.run_interaction("create_tag", txn_fn)


async def _visible(txn: Txn, access: Access, domain: Domain, tags: list[TagRow]) -> dict[str, str]:
    """The branch of each tag's Revision, for the tags the caller may read."""
    revisions = await txn.get_revisions(domain.id, [t.revision for t in tags])
    return {
        t.name: revisions[t.revision].branch
        for t in tags
        if t.revision in revisions
        and access.can("data.read", branch_of_revision(revisions[t.revision].branch))
    }


async def list_tags(
    rt: Runtime, access: Access, domain: Domain, *, limit: int, cursor: str
) -> dict[str, Any]:
    limit = limit or DEFAULT_LIMIT
    before = (
        decode_cursor(cursor, lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0)
        if cursor
        else None
    )

    async def read(txn: Txn) -> dict[str, Any]:
        found: list[dict[str, Any]] = []
        position, more = before, False
        while len(found) <= limit:
            rows = await txn.list_tags(domain.id, before=position, limit=limit + 1)
            branches = await _visible(txn, access, domain, rows)
            for row in rows:
                position = row.seq
                if row.name in branches:
                    found.append(describe_tag(domain, row, branches[row.name]) | {"seq": row.seq})
            if len(rows) <= limit:
                break
        if len(found) > limit:
            found, more = found[:limit], True
        next_cursor = encode_cursor(found[-1]["seq"]) if more else None
        return {
            "domain": domain.name,
            "tags": [{k: v for k, v in t.items() if k != "seq"} for t in found],
            "next_cursor": next_cursor,
        }

    return await rt.db.read("list_tags", read)


async def find_tag(txn: Txn, domain: Domain, name: str) -> tuple[TagRow, str] | None:
    """A tag and the branch of its Revision (as recorded: a deleted branch's archive name), or None."""
    tag = await txn.get_tag(domain.id, name) if TAG.valid(name) else None
    if tag is None:
        return None
    revisions = await txn.get_revisions(domain.id, [tag.revision])
    return None if tag.revision not in revisions else (tag, revisions[tag.revision].branch)


def _no_tag(domain: Domain, name: str) -> Problem:
    return Problem(404, "not-found", f"no tag {name!r} in Domain {domain.name}; GET /tags lists them")


async def delete_tag(rt: Runtime, access: Access, domain: Domain, name: str) -> None:
    """DELETE /tags/{tag}: tag.delete on the branch of its Revision; the Revision stays."""
    at = utc_now()
    by = access.principal.id

    async def txn_fn(txn: Txn) -> None:
        found = await find_tag(txn, domain, name)
        if found is None:
            raise _no_tag(domain, name)
        tag, _ = found
        await txn.delete_tag(domain.id, tag.name)
        await txn.audit(
            by, "tag.delete", at, domain=domain.name, target=tag.name, details={"revision": tag.revision}
        )

    await rt.db.run_interaction("delete_tag", txn_fn)


__all__ = ["create_tag", "delete_tag", "describe_tag", "find_tag", "list_tags", "revision_to_tag"]

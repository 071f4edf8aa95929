"""The statistics recount job: coverage statistics of each Domain's default branch head.

A Kind whose statistics were counted at the current head is left alone; the others are counted in
one snapshot (REPEATABLE READ), so the counts and the Revision they are labelled with agree.
"""

from __future__ import annotations

from lorebase.ids import utc_now
from lorebase.schema import load_schema
from lorebase_store import Database, DomainRow, Txn


async def recount(db: Database) -> int:
    """Recount what is out of date; the number of Kinds counted."""
    domains: list[DomainRow] = await db.read("statistics_domains", lambda txn: txn.list_domains())
    counted = 0
    for domain in domains:
        counted += await db.run_interaction("statistics_recount", _recount_domain, domain)
    return counted


async def _recount_domain(txn: Txn, domain: DomainRow) -> int:
    await txn.repeatable_read()
    branch = await txn.get_branch(domain.id, domain.default_branch)
    if branch is None:
        return 0
    schema = load_schema(await txn.schema_document(domain, branch.schema_digest))
    known = await txn.get_statistics(domain.id, branch.name, list(schema.kinds))
    counted = 0
    for kind in schema.kinds.values():
        if kind.name in known and known[kind.name].revision == branch.head:
            continue
        counts = await txn.count_kind(domain.id, branch.name, kind.name, list(kind.attributes))
        await txn.save_statistics(domain.id, branch.name, kind.name, branch.head, counts, utc_now())
        counted += 1
    return counted


__all__ = ["recount"]

"""The reconciliation job: per Domain, the candidates of its default branch (lorebase.reconciliation).

Each pass scans every Domain whose default branch moved (or whose schema or reconciliation settings
changed) since its last scan, each Domain in its own transaction with the Domain's own settings
(its invalid stored overrides left out, as keeper does). A Domain can also be scanned on demand
(`POST /domains/{domain}/reconciliation/scan`, in keeper), with the same function.
"""

from __future__ import annotations

from lorebase.config import Settings
from lorebase.ids import utc_now
from lorebase.reconciliation import ScanResult, scan_branch
from lorebase.schema import load_schema
from lorebase_store import Database, DomainRow, Txn


async def reconcile(db: Database, settings: Settings) -> list[ScanResult]:
    """One pass over every Domain; what each scan did."""
    domains: list[DomainRow] = await db.read("reconciliation_domains", lambda txn: txn.list_domains())
    results = []
    for domain in domains:
        effective, _ = settings.overlay_valid(domain.settings)
        result = await db.run_interaction("reconciliation_scan", _scan_domain, domain, effective)
        if result is not None:
            results.append(result)
    return results


async def _scan_domain(txn: Txn, domain: DomainRow, settings: Settings) -> ScanResult | None:
    await txn.repeatable_read()  # the head and the Records it compares: one snapshot, no lock
    await txn.bulk(settings.model.services.bulk_deadline_s)  # a large Kind's comparison takes a while
    branch = await txn.get_branch(domain.id, domain.default_branch)
    if branch is None:
        return None
    document = await txn.schema_document(domain, branch.schema_digest)
    return await scan_branch(
        txn,
        domain.id,
        branch,
        load_schema(document),
        document,
        settings.model.scribe.reconciliation,
        utc_now(),
    )


__all__ = ["reconcile"]

"""Embeddings of Records: clients compute a vector for a Record (with the model of their choice) and
PUT it; POST /search ranks by it and POST /resolve falls back to it (docs/rest.md, "Embeddings").

An embedding belongs to a Record on a branch and names the Revision it was set at; it is derived
data, not a versioned value, so setting one commits no Revision.
"""

from __future__ import annotations

from typing import Any

from lorebase.contract.writes import Embedding
from lorebase.ids import iso, utc_now
from lorebase.problems import Problem
from lorebase_keeper.access import Access, readable_kind
from lorebase_keeper.domains import Domain, check_branch_name
from lorebase_keeper.runtime import Runtime
from lorebase_store import Txn


def check_vector(value: list[float], path: str = "vector") -> list[float]:
    """A vector with a direction (the model has checked its length and its numbers), scaled so its
    largest component is 1 in size: every comparison is by cosine, which scaling leaves as it was,
    and single-precision norms of components near float32's limit would overflow to a NaN score."""
    peak = max((abs(x) for x in value), default=0.0)
    if not peak:
        raise Problem(
            422,
            "validation-failed",
            f"{path} cannot be all zeros (it has no direction)",
            issues=[{"path": path, "rule": "vector", "message": "all zeros"}],
        )
    return [x / peak for x in value]


async def set_embedding(
    rt: Runtime, access: Access, domain: Domain, kind_name: str, key: str, embedding: Embedding
) -> dict[str, Any]:
    """PUT .../embedding: the vector of a Record on a branch (operation.execute)."""
    vector, model = check_vector(embedding.vector), embedding.model
    branch = check_branch_name(embedding.branch or domain.default_branch)
    kind = readable_kind(access, domain, branch, kind_name)
    at = utc_now()

    async def write(txn: Txn) -> str | None:
        head, exists, row = await txn.record_at_head(domain.id, branch, kind.name, key)
        if not exists:
            raise Problem(404, "not-found", f"unknown branch {branch!r}")
        if row is None:
            raise Problem(404, "not-found", f"no {kind.name} with key {key!r} on branch {branch!r}")
        await txn.set_embedding(domain.id, branch, kind.name, key, vector, model, head, at)
        await txn.audit(
            access.principal.id,
            "embedding.set",
            at,
            domain=domain.name,
            target=f"{kind.name}/{key}",
            details={"branch": branch, "model": model, "dimensions": len(vector)},
        )
        return head

    revision = await rt.db.run_interaction("set_embedding", write)
    return {
        "domain": domain.name,
        "branch": branch,
        "ref": f"{kind.name}/{key}",
        "model": model,
        "dimensions": len(vector),
        "revision": revision,
        "updated_at": iso(at),
    }


__all__ = ["check_vector", "set_embedding"]

"""Embeddings: set per Record, searched by distance, and resolve's embedding level."""

from __future__ import annotations

from tests.integration.conftest import Stack

D = "/api/v1/domains/supply"


async def embed(stack: Stack, ref: str, vector: list[float], headers: dict[str, str] | None = None) -> int:
    kind, key = ref.split("/")
    response = await stack.http.put(
        f"{D}/kinds/{kind}/records/{key}/embedding",
        json={"vector": vector, "model": "test-3d"},
        headers=headers or stack.admin,
    )
    return response.status_code


async def test_search_by_vector_and_resolve_falls_back_to_the_nearest_records(supply: Stack) -> None:
    assert await embed(supply, "Supplier/S-1001", [1.0, 0.0, 0.0]) == 200
    assert await embed(supply, "Supplier/S-1002", [0.0, 1.0, 0.0]) == 200
    assert await embed(supply, "Part/P-10028", [0.9, 0.1, 0.0]) == 200
    near = (
        await supply.http.post(D + "/search", json={"query_vector": [1.0, 0.05, 0.0]}, headers=supply.admin)
    ).json()
    assert [r["ref"] for r in near["results"]] == ["Supplier/S-1001", "Part/P-10028", "Supplier/S-1002"]
    assert near["results"][0]["score"] > near["results"][2]["score"]
    only_suppliers = (
        await supply.http.post(
            D + "/search", json={"query_vector": [1, 0, 0], "kinds": ["Supplier"]}, headers=supply.admin
        )
    ).json()
    assert [r["ref"] for r in only_suppliers["results"]] == ["Supplier/S-1001", "Supplier/S-1002"]
    with_text = (
        await supply.http.post(
            D + "/search", json={"query_vector": [0, 1, 0], "text": "Kavsen"}, headers=supply.admin
        )
    ).json()
    assert [r["ref"] for r in with_text["results"]] == ["Supplier/S-1001"], "the text still has to match"
    other_dims = (
        await supply.http.post(D + "/search", json={"query_vector": [1.0, 0.0]}, headers=supply.admin)
    ).json()
    assert other_dims["results"] == []
    resolved = (
        await supply.http.post(
            D + "/resolve",
            json={"text": "zzqx", "query_vector": [1, 0, 0], "record_misses": False},
            headers=supply.admin,
        )
    ).json()
    assert resolved["skipped"] == []
    levels = {(c["kind"], c["attribute"], c["level"]) for c in resolved["candidates"]}
    assert ("Supplier", "status", "embedding") in levels
    status = next(c for c in resolved["candidates"] if c["attribute"] == "status" and c["kind"] == "Supplier")
    assert "active" in status["values"] and status["predicate"]["attr"] == "status"


async def test_embedding_rules(supply: Stack) -> None:
    viewer = await supply.principal("usr_reader")
    await supply.grant("supply", "usr_reader", "viewer")
    assert await embed(supply, "Supplier/S-1001", [1, 0], headers=viewer) == 403
    assert await embed(supply, "Supplier/S-9999", [1, 0]) == 404
    assert await embed(supply, "Gizmo/1", [1, 0]) == 404
    for body in (
        {"vector": [], "model": "m"},
        {"vector": ["a"], "model": "m"},
        {"vector": [0, 0], "model": "m"},
        {"vector": [1.0]},
        {"vector": [1.0], "model": "m", "extra": 1},
    ):
        response = await supply.http.put(
            f"{D}/kinds/Supplier/records/S-1001/embedding", json=body, headers=supply.admin
        )
        assert response.status_code == 422, body
    narrowed = await supply.principal("usr_parts_only")
    await supply.grant("supply", "usr_parts_only", "viewer", kinds=["Part"])
    assert await embed(supply, "Supplier/S-1001", [1.0, 0.0, 0.0]) == 200
    hidden = (
        await supply.http.post(D + "/search", json={"query_vector": [1, 0, 0]}, headers=narrowed)
    ).json()
    assert all(r["kind"] == "Part" for r in hidden["results"])

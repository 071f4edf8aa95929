"""The Conflict codes of a three-way merge (delete_vs_change, link_end_deleted, unique_taken), each found,
resolved with ours, theirs or a value, and merged; in a small Domain of its own."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from tests.integration.conftest import Stack

SCHEMA: dict[str, Any] = {
    "kinds": {
        "Item": {
            "key": ["code"],
            "attributes": {
                "code": {"type": "string"},
                "name": {"type": "string"},
                "tag": {"type": "string", "unique": True},
            },
        },
        "Box": {"key": ["code"], "attributes": {"code": {"type": "string"}, "label": {"type": "string"}}},
    },
    "relations": {"holds": {"from": "Box", "to": "Item", "cardinality": "many_to_many"}},
    "operations": {
        "put_item": {
            "parameters": {
                "code": {"type": "string", "required": True},
                "name": {"type": "string"},
                "tag": {"type": "string"},
            },
            "edits": [
                {
                    "op": "upsert_record",
                    "kind": "Item",
                    "key": "$code",
                    "values": {"name": "$name", "tag": "$tag"},
                }
            ],
        },
        "drop_item": {
            "parameters": {"code": {"type": "string", "required": True}},
            "edits": [{"op": "delete_record", "kind": "Item", "key": "$code"}],
        },
        "put_box": {
            "parameters": {"code": {"type": "string", "required": True}},
            "edits": [{"op": "upsert_record", "kind": "Box", "key": "$code", "values": {"label": "box"}}],
        },
        "hold": {
            "parameters": {
                "box": {"type": "string", "required": True},
                "item": {"type": "string", "required": True},
            },
            "edits": [{"op": "upsert_link", "relation": "holds", "from": "$box", "to": "$item"}],
        },
    },
}


class Store:
    """One Domain (`name`) with a work branch forked from main; main needs no approval."""

    def __init__(self, stack: Stack, name: str) -> None:
        self.stack = stack
        self.api = f"/api/v1/domains/{name}"
        self.name = name

    async def create(self, setup: list[tuple[str, dict[str, Any]]], *, mode: str = "copy") -> None:
        response = await self.stack.http.post(
            "/api/v1/domains", json={"name": self.name, "schema": SCHEMA}, headers=self.stack.admin
        )
        assert response.status_code == 201, response.text
        for op, parameters in setup:
            await self.run(op, "main", **parameters)
        response = await self.stack.http.patch(
            self.api + "/branches/main",
            json={"protected": False, "required_approvals": 0},
            headers=self.stack.admin,
        )
        assert response.status_code == 200, response.text
        response = await self.stack.http.post(
            self.api + "/branches",
            json={"name": "work", "from": "main", "mode": mode},
            headers=self.stack.admin,
        )
        assert response.status_code == 201, response.text

    async def run(self, op: str, branch: str, **parameters: Any) -> dict[str, Any]:
        response = await self.stack.http.post(
            f"{self.api}/operations/{op}/execute",
            json={"parameters": parameters, "branch": branch},
            headers=self.stack.admin,
        )
        assert response.status_code == 200, response.text
        return dict(response.json())

    async def propose(self) -> str:
        response = await self.stack.http.post(
            self.api + "/proposals", json={"source": "work", "title": "work"}, headers=self.stack.admin
        )
        assert response.status_code == 201, response.text
        return f"{self.api}/proposals/{response.json()['id']}"

    async def merge(self, url: str) -> dict[str, Any]:
        response = await self.stack.http.post(url + "/merge", headers=self.stack.admin)
        assert response.status_code == 200, response.text
        return dict(response.json())

    async def conflicts(self, url: str) -> dict[str, dict[str, Any]]:
        response = await self.stack.http.get(url + "/conflicts", headers=self.stack.admin)
        assert response.status_code == 200, response.text
        return {f"{c['code']}:{c['ref']}": c for c in response.json()["conflicts"]}

    async def resolve(self, conflict: dict[str, Any], body: dict[str, Any], status: int = 200) -> Any:
        response = await self.stack.http.post(conflict["href"], json=body, headers=self.stack.admin)
        assert response.status_code == status, response.text
        return response.json()

    async def item(self, key: str, branch: str = "main") -> dict[str, Any] | None:
        response = await self.stack.http.get(
            f"{self.api}/kinds/Item/records/{key}", params={"branch": branch}, headers=self.stack.admin
        )
        if response.status_code == 404:
            return None
        assert response.status_code == 200, response.text
        return dict(response.json()["values"])

    async def held(self, box: str, branch: str = "main") -> list[str]:
        async with self.stack.rt.db.engine.connect() as conn:
            rows = await conn.execute(
                text(
                    "select to_key from links l join domains d on d.id = l.domain_id "
                    "where d.name = :d and l.branch = :b and l.relation = 'holds' and l.from_key = :box "
                    "order by to_key"
                ),
                {"d": self.name, "b": branch, "box": box},
            )
            return [r.to_key for r in rows]


async def test_delete_vs_change_resolved_both_ways(stack: Stack) -> None:
    store = Store(stack, "dvc")
    await store.create(
        [("put_item", {"code": "I-1", "name": "a"}), ("put_item", {"code": "I-2", "name": "a"})]
    )
    await store.run("drop_item", "main", code="I-1")
    await store.run("put_item", "work", code="I-1", name="b")
    await store.run("drop_item", "work", code="I-2")
    await store.run("put_item", "main", code="I-2", name="c")
    url = await store.propose()
    attempt = await store.merge(url)
    assert attempt["status"] == "open" and attempt["attempt"]["counts"] == {"delete_vs_change": 2}
    found = await store.conflicts(url)
    one, two = found["delete_vs_change:Item/I-1"], found["delete_vs_change:Item/I-2"]
    assert (one["ours"], one["theirs"]["name"]) == (None, "b")
    assert (two["ours"]["name"], two["theirs"]) == ("c", None)
    assert one["resolutions"] == two["resolutions"] == ["ours", "theirs"]  # what each takes, said
    refused = await store.resolve(one, {"resolution": "value", "value": "x"}, 422)  # a whole Record
    assert refused["issues"][0]["rule"] == "conflict.whole", refused
    await store.resolve(one, {"resolution": "theirs"})
    await store.resolve(two, {"resolution": "ours"})
    merged = await store.merge(url)
    assert merged["status"] == "merged" and merged["attempt"]["resolved_conflicts"] == 2
    assert (await store.item("I-1") or {}).get("name") == "b"
    assert (await store.item("I-2") or {}).get("name") == "c"


async def test_delete_vs_change_resolved_the_other_ways(stack: Stack) -> None:
    store = Store(stack, "dvc2")
    await store.create(
        [("put_item", {"code": "I-1", "name": "a"}), ("put_item", {"code": "I-2", "name": "a"})]
    )
    await store.run("drop_item", "main", code="I-1")
    await store.run("put_item", "work", code="I-1", name="b")
    await store.run("drop_item", "work", code="I-2")
    await store.run("put_item", "main", code="I-2", name="c")
    url = await store.propose()
    await store.merge(url)
    found = await store.conflicts(url)
    await store.resolve(found["delete_vs_change:Item/I-1"], {"resolution": "ours"})
    await store.resolve(found["delete_vs_change:Item/I-2"], {"resolution": "theirs"})
    merged = await store.merge(url)
    assert merged["status"] == "merged", merged
    assert await store.item("I-1") is None
    assert await store.item("I-2") is None


async def test_link_end_deleted_resolved(stack: Stack) -> None:
    store = Store(stack, "led")
    setup = [("put_box", {"code": "B-1"})] + [
        ("put_item", {"code": f"I-{n}", "name": "a"}) for n in range(1, 5)
    ]
    await store.create(setup)
    # The source links Items the target deleted ...
    await store.run("hold", "work", box="B-1", item="I-1")
    await store.run("hold", "work", box="B-1", item="I-2")
    await store.run("drop_item", "main", code="I-1")
    await store.run("drop_item", "main", code="I-2")
    # ... and deletes Items the target links.
    await store.run("hold", "main", box="B-1", item="I-3")
    await store.run("hold", "main", box="B-1", item="I-4")
    await store.run("drop_item", "work", code="I-3")
    await store.run("drop_item", "work", code="I-4")
    url = await store.propose()
    attempt = await store.merge(url)
    assert attempt["attempt"]["counts"] == {"link_end_deleted": 4}, attempt["attempt"]
    found = await store.conflicts(url)
    assert found["link_end_deleted:holds/B-1->I-3"]["theirs"] is None
    await store.resolve(found["link_end_deleted:holds/B-1->I-1"], {"resolution": "ours"})
    await store.resolve(found["link_end_deleted:holds/B-1->I-2"], {"resolution": "theirs"})
    await store.resolve(found["link_end_deleted:holds/B-1->I-3"], {"resolution": "ours"})
    await store.resolve(found["link_end_deleted:holds/B-1->I-4"], {"resolution": "theirs"})
    merged = await store.merge(url)
    assert merged["status"] == "merged", merged
    held = await store.held("B-1")
    # Every Link kept has both its ends: keeping the Link keeps (or brings back) its Item.
    for key in held:
        assert await store.item(key) is not None, (key, held)
    assert "I-1" not in held and "I-4" not in held
    assert await store.item("I-1") is None and await store.item("I-4") is None
    assert held == ["I-2", "I-3"]


async def test_unique_taken_resolved(stack: Stack) -> None:
    store = Store(stack, "uniq")
    await store.create([("put_item", {"code": "I-0", "name": "a"})])
    await store.run("put_item", "main", code="I-1", name="m", tag="X")
    await store.run("put_item", "work", code="I-2", name="w", tag="X")
    await store.run("put_item", "main", code="I-3", name="m", tag="Y")
    await store.run("put_item", "work", code="I-4", name="w", tag="Y")
    url = await store.propose()
    attempt = await store.merge(url)
    assert attempt["attempt"]["counts"] == {"unique_taken": 2}, attempt["attempt"]
    found = await store.conflicts(url)
    x, y = found["unique_taken:Item/I-2"], found["unique_taken:Item/I-4"]
    assert (x["attribute"], x["ours"], x["theirs"]) == ("tag", ["I-1"], "X")
    assert x["resolutions"] == ["ours", "value"]
    refused = await store.resolve(x, {"resolution": "theirs"}, 422)  # one Record holds a unique value
    assert refused["type"].endswith("validation-failed") and refused["issues"][0]["rule"] == "conflict.unique"
    await store.resolve(x, {"resolution": "ours"})
    await store.resolve(y, {"resolution": "value", "value": "X"})
    again = await store.merge(url)  # the value chosen is taken as well: a Conflict of its own
    assert again["status"] == "open" and again["attempt"]["counts"] == {"unique_taken": 1}
    taken = [c for c in (await store.conflicts(url)).values() if c["status"] == "open"]
    assert [(c["ref"], c["ours"], c["theirs"]) for c in taken] == [("Item/I-4", ["I-1"], "X")]
    await store.resolve(taken[0], {"resolution": "value", "value": "Z"})
    merged = await store.merge(url)
    assert merged["status"] == "merged", merged
    assert await store.item("I-2") == {"code": "I-2", "name": "w"}
    assert (await store.item("I-4") or {}).get("tag") == "Z"
    assert (await store.item("I-1") or {}).get("tag") == "X"


async def test_conflict_values_a_reader_may_not_read_are_redacted(stack: Stack) -> None:
    """A reader of the Proposal without the clearance of a sensitive Attribute sees neither its
    values in a whole-Record Conflict nor the value of a Conflict on it."""
    schema = {**SCHEMA, "kinds": {**SCHEMA["kinds"]}}
    item = schema["kinds"]["Item"]
    schema["kinds"]["Item"] = {
        **item,
        "attributes": {**item["attributes"], "name": {"type": "string", "sensitivity": ["pii"]}},
    }
    response = await stack.http.post(
        "/api/v1/domains", json={"name": "secret", "schema": schema}, headers=stack.admin
    )
    assert response.status_code == 201, response.text
    store = Store(stack, "secret")
    for op, branch, parameters in (
        ("put_item", "main", {"code": "I-1", "name": "Ada Lovelace", "tag": "t1"}),
    ):
        await store.run(op, branch, **parameters)
    await stack.http.patch(
        store.api + "/branches/main", json={"protected": False, "required_approvals": 0}, headers=stack.admin
    )
    await stack.http.post(store.api + "/branches", json={"name": "work", "from": "main"}, headers=stack.admin)
    await store.run("drop_item", "main", code="I-1")
    await store.run("put_item", "work", code="I-1", name="Grace Hopper", tag="t1")
    url = await store.propose()
    await store.merge(url)
    viewer = await stack.principal("usr_noclear")
    await stack.grant("secret", "usr_noclear", "viewer")
    seen = await stack.http.get(url + "/conflicts", headers=viewer)
    assert seen.status_code == 200, seen.text
    (conflict,) = seen.json()["conflicts"]
    assert conflict["theirs"] == {"code": "I-1", "tag": "t1"} and conflict["redacted"] is True
    assert "Grace" not in seen.text and "Ada" not in seen.text
    admin = (await stack.http.get(url + "/conflicts", headers=stack.admin)).json()["conflicts"][0]
    assert admin["theirs"]["name"] == "Grace Hopper" and "redacted" not in admin

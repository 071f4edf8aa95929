"""The vault and erasure (issue 15 §2), tested as a regulator would: write a distinctive vault value,
spread it over branches, merges, history and every read surface; erase; then look for its bytes on
every surface and in every table of the database."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from sqlalchemy import text

from tests.integration.conftest import Stack, open_stack

SECRET = "Zq7-erase-me-4411"
OTHER = "Wk2-keep-me-9083"
PHONE = "+48 600 700 800"
D = "/api/v1/domains/crm"
C1 = D + "/kinds/Customer/records/C-1"
KEY_ENV = {"LOREBASE_WEBHOOKS__ENCRYPTION_KEY": "secret://env/LOREBASE_TEST_WEBHOOK_KEY"}

SCHEMA: dict[str, Any] = {
    "description": "Customers with personal data in the vault.",
    "kinds": {
        "Customer": {
            "key": ["id"],
            "title": "name",
            "attributes": {
                "id": {"type": "string", "required": True},
                "name": {"type": "string", "required": True},
                "email": {"type": "string", "vault": True, "sensitivity": ["pii"]},
                "phone": {"type": "string", "vault": True},
                "segment": {"type": "string"},
            },
        }
    },
    "operations": {
        "set_contact": {
            "parameters": {
                "key": {"type": "string", "required": True},
                "email": {"type": "string"},
                "segment": {"type": "string"},
            },
            "edits": [
                {
                    "op": "update_record",
                    "kind": "Customer",
                    "key": "$key",
                    "values": {"email": "$email", "segment": "$segment"},
                }
            ],
            "side_effects": ["contact_changed"],
        }
    },
}


@pytest_asyncio.fixture
async def crm(database_url: str) -> AsyncIterator[Stack]:
    os.environ.setdefault("LOREBASE_TEST_WEBHOOK_KEY", "k" * 40)
    async with open_stack(database_url, **KEY_ENV) as stack:
        response = await stack.http.post(
            "/api/v1/domains", json={"name": "crm", "schema": SCHEMA}, headers=stack.admin
        )
        assert response.status_code == 201, response.text
        response = await stack.http.post(
            D + "/imports",
            json={
                "source": "signup",
                "records": [
                    {
                        "kind": "Customer",
                        "values": {"id": "C-1", "name": "Ada", "email": SECRET, "phone": "+48 1"},
                    },
                    {"kind": "Customer", "values": {"id": "C-2", "name": "Bob", "email": OTHER}},
                ],
            },
            headers=stack.admin,
        )
        assert response.status_code == 200, response.text
        yield stack


async def dump_database(stack: Stack) -> str:
    """Every row of every table of the schema, as text."""
    async with stack.rt.db.engine.connect() as conn:
        tables = (
            await conn.execute(text("select tablename from pg_tables where schemaname = current_schema()"))
        ).scalars()
        out: list[str] = []
        for table in list(tables):
            rows = (await conn.execute(text(f'select t::text from "{table}" t'))).scalars()
            out.extend(rows)
    return "\n".join(out)


async def test_a_vault_value_is_stored_as_a_ref_and_shown_to_cleared_callers(crm: Stack) -> None:
    record = (await crm.http.get(C1, headers=crm.admin)).json()
    assert record["values"]["email"] == SECRET, record
    dumped = await dump_database(crm)
    assert SECRET not in dumped and "$vault" in dumped
    for needle in (SECRET, OTHER):
        assert needle not in dumped
    async with crm.rt.db.engine.connect() as conn:
        stored = (await conn.execute(text("select values from records where key = 'C-1'"))).scalar_one()
    assert set(stored["email"]) == {"$vault"} and stored["email"]["$vault"].startswith("vlt_")


async def _json(stack: Stack, method: str, url: str, headers: dict[str, str], body: Any = None) -> Any:
    response = await stack.http.request(method, url, json=body, headers=headers)
    assert response.status_code == 200, (url, response.text)
    return (
        response.json() if response.headers["content-type"].startswith("application/json") else response.text
    )


async def _spread(stack: Stack) -> dict[str, str]:
    """Put SECRET on a second branch, in history (before), in an invocation and through a merge;
    the Revisions to read at."""
    first = (await stack.http.get(D + "/branches/main", headers=stack.admin)).json()["head"]
    response = await stack.http.post(
        D + "/branches", json={"name": "work", "from": "main"}, headers=stack.admin
    )
    assert response.status_code == 201, response.text
    # The same value again (no change of email), through an Operation: its parameter is a vault value.
    execute = D + "/operations/set_contact/execute"
    # Traced in an agent session, with an idempotency receipt.
    traced = {**stack.admin, "Lorebase-Session": "sess-erase-1"}
    same = await stack.http.post(
        execute,
        json={"parameters": {"key": "C-1", "email": SECRET, "segment": "gold"}, "branch": "work"},
        headers={**traced, "Idempotency-Key": "contact-1"},
    )
    assert same.status_code == 200, same.text
    # Someone looks the value up: resolve keeps it as a miss, the session keeps the text.
    looked = await stack.http.post(D + "/resolve", json={"text": f"who is {SECRET}"}, headers=traced)
    assert looked.status_code == 200, looked.text
    changed = await stack.http.post(
        D + "/imports",
        json={"branch": "work", "records": [{"kind": "Customer", "values": {"id": "C-1", "phone": PHONE}}]},
        headers=stack.admin,
    )
    assert changed.status_code == 200, changed.text
    reviewer = await stack.principal("usr_reviewer")
    await stack.grant("crm", "usr_reviewer", "reviewer")
    proposal = await stack.http.post(
        D + "/proposals", json={"source": "work", "target": "main", "title": "contacts"}, headers=stack.admin
    )
    assert proposal.status_code == 201, proposal.text
    pid = proposal.json()["id"]
    review = await stack.http.post(
        f"{D}/proposals/{pid}/reviews", json={"decision": "approve"}, headers=reviewer
    )
    assert review.status_code == 200, review.text
    merged = await stack.http.post(f"{D}/proposals/{pid}/merge", headers=stack.admin)
    assert merged.status_code == 200, merged.text
    head = (await stack.http.get(D + "/branches/main", headers=stack.admin)).json()["head"]
    return {"first": first, "head": head}


def _surfaces(at: dict[str, str]) -> list[tuple[str, str, Any]]:
    return [
        ("GET", C1 + f"?at={at['first']}", None),
        ("GET", C1 + "?branch=work", None),
        ("GET", C1 + f"?at={at['first']}&lineage=true", None),
        ("GET", C1 + "/history?values=true", None),
        ("GET", C1 + "/history?values=true&branch=work", None),
        ("GET", C1 + "/lineage", None),
        ("GET", C1 + f"/lineage?at={at['first']}", None),
        ("GET", C1 + f"/explain?at={at['first']}", None),
        ("GET", C1 + f"/explain?at={at['first']}&format=markdown", None),
        ("GET", D + f"/diff?from={at['first']}&to={at['head']}", None),
        ("POST", D + "/context", {"refs": ["Customer/C-1"], "format": "json", "include_lineage": True}),
        ("POST", D + "/context", {"refs": ["Customer/C-1"], "format": "markdown"}),
        (
            "POST",
            D + "/context",
            {"refs": ["Customer/C-1"], "include_recent_changes": True, "branch": "work"},
        ),
        ("POST", D + "/query", {"kind": "Customer", "at": at["first"]}),
        ("POST", D + "/search", {"text": "erase-me"}),
        ("POST", D + "/resolve", {"text": "erase-me"}),
        ("GET", D + "/health", None),
        ("GET", D + "/health?format=markdown", None),
    ]


async def test_erasure_leaves_no_trace_of_the_value(crm: Stack) -> None:
    at = await _spread(crm)
    seen = ""
    for method, url, body in _surfaces(at):
        answer = await _json(crm, method, url, crm.admin, body)
        seen += url + " " + (answer if isinstance(answer, str) else str(answer)) + "\n"
    assert seen.count(SECRET) >= 10, seen  # every surface that shows values shows it to the admin
    assert "$vault" not in seen and "vlt_" not in seen
    viewer = await crm.principal("usr_viewer")
    await crm.grant("crm", "usr_viewer", "viewer")
    for method, url, body in _surfaces(at):
        answer = await _json(crm, method, url, viewer, body)
        assert SECRET not in str(answer) and "vlt_" not in str(answer), (url, answer)

    # Before the erasure the value is in the database only where a caller typed it (a resolve miss,
    # the session's trace of that resolve); stored values are refs, the vault holds it sealed.
    async with crm.rt.db.engine.connect() as conn:
        misses = (await conn.execute(text("select phrase from resolve_misses"))).scalars().all()
        traced = (await conn.execute(text("select details::text from trace_entries"))).scalars().all()
    assert any(SECRET.lower() in m.lower() for m in misses), misses
    assert sum(SECRET in t for t in traced) == 1, traced  # the resolve; the execution's body is withheld
    response = await crm.http.post(
        D + "/erasures",
        json={"records": ["Customer/C-1"], "reason": "GDPR art. 17 request #88"},
        headers=crm.admin,
    )
    assert response.status_code == 201, response.text
    erasure = response.json()
    assert erasure["records"] == ["Customer/C-1"] and erasure["attributes"] == [
        "Customer.email",
        "Customer.phone",
    ]
    assert erasure["refs"] == 3 and erasure["by"] == "usr_admin" and erasure["reason"].startswith("GDPR")

    seen = ""
    for method, url, body in _surfaces(at):
        answer = await _json(crm, method, url, crm.admin, body)
        seen += url + " " + (answer if isinstance(answer, str) else str(answer)) + "\n"
    assert SECRET not in seen and PHONE not in seen and "vlt_" not in seen
    assert seen.count("[erased]") >= 10
    record = (await crm.http.get(C1, headers=crm.admin)).json()
    assert record["values"]["email"] == "[erased]" and record["values"]["name"] == "Ada"
    # Another Record's vault values are untouched.
    other = (await crm.http.get(D + "/kinds/Customer/records/C-2", headers=crm.admin)).json()
    assert other["values"]["email"] == OTHER
    # Revision ids do not change: the heads are the same.
    assert (await crm.http.get(D + "/branches/main", headers=crm.admin)).json()["head"] == at["head"]

    async with crm.rt.db.engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text("VACUUM FULL"))
    assert await crm.count("trace_entries") > 0  # the session's other steps stay
    dumped = await dump_database(crm)
    assert SECRET not in dumped and PHONE not in dumped
    assert "GDPR art. 17 request #88" in dumped  # the audit and the erasure keep the reason
    async with crm.rt.db.engine.connect() as conn:
        sealed = (
            (await conn.execute(text("select sealed from vault_entries where record_key = 'C-1'")))
            .scalars()
            .all()
        )
    assert sealed and all(value is None for value in sealed)

    again = await crm.http.post(
        D + "/erasures", json={"records": ["Customer/C-1"], "reason": "again"}, headers=crm.admin
    )
    assert again.status_code == 201 and again.json()["refs"] == 0 and again.json()["attributes"] == []
    listed = (await crm.http.get(D + "/erasures?limit=1", headers=crm.admin)).json()
    assert [e["reason"] for e in listed["erasures"]] == ["again"] and listed["next_cursor"]
    rest = (await crm.http.get(D + f"/erasures?cursor={listed['next_cursor']}", headers=crm.admin)).json()
    assert [e["id"] for e in rest["erasures"]] == [erasure["id"]] and rest["next_cursor"] is None


async def test_erasing_needs_data_erase_and_changes_nothing_without_it(crm: Stack) -> None:
    editor = await crm.principal("usr_editor")
    await crm.grant("crm", "usr_editor", "editor")
    body = {"records": ["Customer/C-1"], "reason": "asked"}
    response = await crm.http.post(D + "/erasures", json=body, headers=editor)
    assert response.status_code == 403, response.text
    assert (await crm.http.get(D + "/erasures", headers=editor)).status_code == 403
    assert (await crm.http.get(C1, headers=crm.admin)).json()["values"]["email"] == SECRET
    assert await crm.count("erasures") == 0


async def test_bad_erasure_bodies_name_the_member(crm: Stack) -> None:
    cases: list[tuple[Any, str]] = [
        ({"records": ["Customer/C-1"]}, "reason"),
        ({"records": ["Customer/C-1"], "reason": ""}, "reason"),
        ({"records": [], "reason": "x"}, "records"),
        ({"records": ["C-1"], "reason": "x"}, "records[0]"),
        ({"records": ["Nobody/C-1"], "reason": "x"}, "records[0]"),
        ({"reason": "x"}, "subject"),
        (
            {
                "records": ["Customer/C-1"],
                "subject": {"kind": "Customer", "attribute": "email", "value": "a"},
                "reason": "x",
            },
            "records",
        ),
        (
            {"subject": {"kind": "Customer", "attribute": "nope", "value": "a"}, "reason": "x"},
            "subject.attribute",
        ),
        ({"subject": {"kind": "Nobody", "attribute": "email", "value": "a"}, "reason": "x"}, "subject.kind"),
        ({"subject": {"kind": "Customer", "attribute": "email"}, "reason": "x"}, "`value`"),
        ({"records": ["Customer/C-1"], "reason": "x", "extra": 1}, "extra"),
    ]
    for body, path in cases:
        response = await crm.http.post(D + "/erasures", json=body, headers=crm.admin)
        assert response.status_code == 422, (body, response.text)
        assert (
            path in [issue["path"] for issue in response.json().get("issues", [])] or path in response.text
        ), (
            body,
            response.text,
        )
    missing = await crm.http.post(
        D + "/erasures",
        json={"records": ["Customer/C-1", "Customer/C-404"], "reason": "x"},
        headers=crm.admin,
    )
    assert missing.status_code == 404 and "Customer/C-404" in missing.text, missing.text
    nobody = await crm.http.post(
        D + "/erasures",
        json={"subject": {"kind": "Customer", "attribute": "email", "value": "nobody@x"}, "reason": "x"},
        headers=crm.admin,
    )
    assert nobody.status_code == 404, nobody.text
    assert await crm.count("erasures") == 0
    assert (await crm.http.get(C1, headers=crm.admin)).json()["values"]["email"] == SECRET


async def test_a_subject_is_found_by_its_vault_value_or_a_plain_one(crm: Stack) -> None:
    response = await crm.http.post(
        D + "/erasures",
        json={"subject": {"kind": "Customer", "attribute": "email", "value": OTHER}, "reason": "request 2"},
        headers=crm.admin,
    )
    assert response.status_code == 201, response.text
    assert response.json()["records"] == ["Customer/C-2"] and response.json()["refs"] == 1
    response = await crm.http.post(
        D + "/erasures",
        json={"subject": {"kind": "Customer", "attribute": "name", "value": "Ada"}, "reason": "request 3"},
        headers=crm.admin,
    )
    assert response.status_code == 201 and response.json()["records"] == ["Customer/C-1"], response.text
    assert (await crm.http.get(C1, headers=crm.admin)).json()["values"]["email"] == "[erased]"


async def test_vault_attributes_are_not_compared_in_queries(crm: Stack) -> None:
    for body, path in [
        ({"kind": "Customer", "where": {"attr": "email", "op": "eq", "value": SECRET}}, "where"),
        ({"kind": "Customer", "order_by": "email"}, "order_by[0]"),
        ({"kind": "Customer", "aggregate": {"group_by": "email"}}, "aggregate.group_by"),
    ]:
        response = await crm.http.post(D + "/query", json=body, headers=crm.admin)
        assert response.status_code == 422, response.text
        assert any(i["rule"] == "query.vault" and i["path"] == path for i in response.json()["issues"]), (
            response.text
        )
    present = await crm.http.post(
        D + "/query",
        json={"kind": "Customer", "where": {"attr": "phone", "op": "is_null", "value": False}},
        headers=crm.admin,
    )
    assert present.status_code == 200 and [r["key"] for r in present.json()["records"]] == ["C-1"], (
        present.text
    )


async def test_the_same_write_gives_the_same_revision_id_with_a_vault(crm: Stack) -> None:
    """Refs are deterministic: a Kind's ref of a value is the same for the same Record, so two
    branches writing the same value commit the same changes (and a no-op write changes nothing)."""
    for name in ("b1", "b2"):
        response = await crm.http.post(
            D + "/branches", json={"name": name, "from": "main"}, headers=crm.admin
        )
        assert response.status_code == 201
    records = [{"kind": "Customer", "values": {"id": "C-1", "email": "x@example.org"}}]
    digests = []
    for name in ("b1", "b2"):
        response = await crm.http.post(
            D + "/imports", json={"branch": name, "records": records}, headers=crm.admin
        )
        assert response.status_code == 200, response.text
        async with crm.rt.db.engine.connect() as conn:
            digests.append(
                (
                    await conn.execute(
                        text("select changes_digest from revisions where id = :id"),
                        {"id": response.json()["revision"]},
                    )
                ).scalar_one()
            )
    assert digests[0] == digests[1]
    again = await crm.http.post(
        D + "/imports",
        json={"records": [{"kind": "Customer", "values": {"id": "C-1", "email": SECRET}}]},
        headers=crm.admin,
    )
    assert again.json()["revision"] is None  # the same value: no change


async def test_vault_writes_need_the_encryption_key(database_url: str) -> None:
    async with open_stack(database_url) as stack:
        response = await stack.http.post(
            "/api/v1/domains", json={"name": "crm", "schema": SCHEMA}, headers=stack.admin
        )
        assert response.status_code == 201, response.text
        response = await stack.http.post(
            D + "/imports",
            json={"records": [{"kind": "Customer", "values": {"id": "C-1", "name": "Ada", "email": SECRET}}]},
            headers=stack.admin,
        )
        assert response.status_code == 409 and response.json()["type"].endswith("encryption_key_required")
        assert await stack.count("records") == 0


async def test_schema_rules_of_vault_attributes(stack: Stack) -> None:
    def schema(**email: Any) -> dict[str, Any]:
        return {
            "kinds": {
                "Customer": {
                    "key": ["id"],
                    "title": "name",
                    "attributes": {
                        "id": {"type": "string"},
                        "name": {"type": "string"},
                        "email": {"type": "string", **email},
                    },
                }
            },
        }

    cases: list[tuple[dict[str, Any], str]] = [
        ({"vault": True, "unique": True}, "cannot be unique"),
        ({"vault": "yes"}, "vault"),
    ]
    for spec, needle in cases:
        response = await stack.http.post(
            "/api/v1/domains", json={"name": "bad", "schema": schema(**spec)}, headers=stack.admin
        )
        assert response.status_code == 422 and needle in response.text, response.text
    titled = schema(vault=True)
    titled["kinds"]["Customer"]["title"] = "email"
    response = await stack.http.post(
        "/api/v1/domains", json={"name": "bad", "schema": titled}, headers=stack.admin
    )
    assert response.status_code == 422 and "title Attribute cannot be a vault" in response.text, response.text
    response = await stack.http.post(
        "/api/v1/domains", json={"name": "ok", "schema": schema(vault=True)}, headers=stack.admin
    )
    assert response.status_code == 201, response.text
    kinds = (await stack.http.get("/api/v1/domains/ok/schema", headers=stack.admin)).json()["kinds"]
    email = kinds[0]["attributes"]["email"]
    assert email["vault"] is True and email["sensitivity"] == ["pii"], email

    # A Kind with vault Attributes is not renamed (erasures find its values by Kind and key).
    renamed = await stack.http.post(
        "/api/v1/domains/ok/branches/main/schema/changes",
        json={"changes": [{"op": "rename_kind", "kind": "Customer", "to": "Client"}]},
        headers=stack.admin,
    )
    assert renamed.status_code == 422, renamed.text
    issue = renamed.json()["issues"][0]
    assert issue["path"] == "changes[0].kind" and issue["rule"] == "change.vault", issue
    assert "erasure" in issue["message"] and "add_kind" in issue["message"], issue
    kinds = (await stack.http.get("/api/v1/domains/ok/schema", headers=stack.admin)).json()["kinds"]
    assert [kind["name"] for kind in kinds] == ["Customer"]
